import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { generateSigningKeys, type SigningKeys } from '@flowdesk/service-kit';
import { readJsonFile, writePrivateJson } from './files.ts';

export interface EmbeddedKeys {
  /** Signs internal tokens; regenerating it would invalidate every token in flight. */
  signing: SigningKeys;
  /** Encrypts webhook secrets at rest; losing it makes every stored secret unreadable. */
  webhookSecretKey: Buffer;
}

interface KeysFile {
  signing: SigningKeys;
  webhookSecretKey: string;
}

/** The keys of `<home>/keys.json`, generated on the first start and reused afterwards. */
export async function loadOrCreateKeys(home: string): Promise<EmbeddedKeys> {
  const file = path.join(home, 'keys.json');
  const stored = await readJsonFile(file);
  if (stored === undefined) {
    const keys: EmbeddedKeys = { signing: generateSigningKeys(), webhookSecretKey: randomBytes(32) };
    const content: KeysFile = { signing: keys.signing, webhookSecretKey: keys.webhookSecretKey.toString('base64') };
    await writePrivateJson(file, content);
    return keys;
  }
  const { signing, webhookSecretKey } = (stored ?? {}) as Partial<KeysFile>;
  const secretKey = Buffer.from(typeof webhookSecretKey === 'string' ? webhookSecretKey : '', 'base64');
  if (!signing?.privateKeyPem || !signing.publicKeyPem || !signing.kid || secretKey.length !== 32) {
    throw new Error(`${file} is incomplete; restore it from a backup (deleting it makes stored webhook secrets unreadable)`);
  }
  return { signing, webhookSecretKey: secretKey };
}
