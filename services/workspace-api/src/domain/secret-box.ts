import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook secrets at rest: AES-256-GCM with a key from configuration (WEBHOOK_SECRET_KEY), so a
 * database dump alone does not reveal them. Encrypted rather than hashed because the trigger
 * settings show the secret again and signed deliveries (HMAC) need the secret itself.
 *
 * Stored form: v1.<iv>.<tag>.<ciphertext>, base64url parts. The version prefix allows key rotation.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('webhook secret key must be 32 bytes');
  }

  /** A new webhook secret: 32 random bytes, prefixed so people recognise it in a header. */
  static generateSecret(): string {
    return `whsec_${randomBytes(32).toString('base64url')}`;
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [v, iv, tag, ct] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unknown sealed secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
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
