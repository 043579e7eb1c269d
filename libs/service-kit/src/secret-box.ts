import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets at rest: AES-256-GCM with a key from configuration, so a database dump alone does not
 * reveal them. Used for webhook secrets (workspace-api, WEBHOOK_SECRET_KEY) and workflow credentials
 * (the workflow engine, CREDENTIALS_KEY). Encrypted rather than hashed because the plaintext is needed
 * again (HMAC signatures, the HTTP Request node's headers).
 *
 * Stored forms, base64url parts:
 * - `v1.<iv>.<tag>.<ciphertext>`: no key id, sealed with the one key (webhook secrets).
 * - `v2.<keyId>.<iv>.<tag>.<ciphertext>`: sealed with the key named keyId. Rotation: configure the
 *   new key as current and keep the old one under its id in `previous`; values open with whichever key
 *   sealed them and are re-sealed with the current key when rewritten (`needsReseal`).
 * The key id is bound to the ciphertext as GCM additional data, so swapping it is detected.
 */
export interface SecretBoxOptions {
  /** When set, seal writes the v2 form naming this key. */
  keyId?: string;
  /** Older keys by id, for opening values sealed before a rotation. */
  previous?: Readonly<Record<string, Buffer>>;
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

export class SecretBox {
  private readonly keyId: string | undefined;
  private readonly keys = new Map<string, Buffer>();

  constructor(
    private readonly key: Buffer,
    options: SecretBoxOptions = {},
  ) {
    if (key.length !== 32) throw new Error('secret key must be 32 bytes');
    this.keyId = options.keyId;
    for (const [id, k] of Object.entries(options.previous ?? {})) {
      if (!KEY_ID.test(id) || k.length !== 32) throw new Error(`previous key ${id} must be 32 bytes under an id of [A-Za-z0-9_-]{1,32}`);
      this.keys.set(id, k);
    }
    if (this.keyId !== undefined) {
      if (!KEY_ID.test(this.keyId)) throw new Error('key id must match [A-Za-z0-9_-]{1,32}');
      this.keys.set(this.keyId, key);
    }
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    if (this.keyId !== undefined) cipher.setAAD(Buffer.from(this.keyId, 'utf8'));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const parts = [iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')];
    return (this.keyId === undefined ? ['v1', ...parts] : ['v2', this.keyId, ...parts]).join('.');
  }

  open(sealed: string): string {
    const parts = sealed.split('.');
    let key: Buffer | undefined;
    let aad: string | undefined;
    if (parts[0] === 'v1' && parts.length === 4) key = this.key;
    else if (parts[0] === 'v2' && parts.length === 5) {
      aad = parts.splice(1, 1)[0]!;
      key = this.keys.get(aad);
      if (!key) throw new Error(`sealed with key "${aad}", which is not configured`);
    } else throw new Error('unknown sealed secret format');
    const [, iv, tag, ct] = parts as [string, string, string, string];
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** Whether a stored value was sealed with another key than the current one (re-seal it on write). */
  needsReseal(sealed: string): boolean {
    return this.keyId !== undefined && !sealed.startsWith(`v2.${this.keyId}.`);
  }

  /**
   * Constant-time comparison of a presented secret with the sealed one: both sides are reduced to
   * HMACs of equal length first, so neither content nor length leaks through timing.
   */
  matches(sealed: string, presented: string): boolean {
    const mac = (s: string) => createHmac('sha256', this.key).update(s, 'utf8').digest();
    return timingSafeEqual(mac(this.open(sealed)), mac(presented));
  }
}
