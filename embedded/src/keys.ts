import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { generateServiceSecret } from '@flowdesk/auth';
import { generateSigningKeys, type SigningKeys } from '@flowdesk/service-kit';
import { readJsonFile, writePrivateJson } from './files.ts';

export interface EmbeddedKeys {
  /** Signs internal tokens; regenerating it would invalidate every token in flight. */
  signing: SigningKeys;
  /** Encrypts webhook secrets at rest; losing it makes every stored secret unreadable. */
  webhookSecretKey: Buffer;
  /** Service id → secret: how services authenticate to auth (introspection, token exchange). */
  serviceClients: Record<string, string>;
}

interface KeysFile {
  signing: SigningKeys;
  webhookSecretKey: string;
  serviceClients?: Record<string, string>;
}

/** The services that call auth's introspection and token exchange. */
export const SERVICE_CLIENT_IDS = ['mcp-gateway', 'webhook-ingest', 'workflow-engine', 'console'] as const;

const newServiceClients = (have: Record<string, string> = {}) =>
  Object.fromEntries(SERVICE_CLIENT_IDS.map((id) => [id, typeof have[id] === 'string' && have[id].length >= 32 ? have[id] : generateServiceSecret()]));

/** The keys of `<home>/keys.json`, generated on the first start and reused afterwards. */
export async function loadOrCreateKeys(home: string): Promise<EmbeddedKeys> {
  const file = path.join(home, 'keys.json');
  const stored = await readJsonFile(file);
  if (stored === undefined) {
    const keys: EmbeddedKeys = { signing: generateSigningKeys(), webhookSecretKey: randomBytes(32), serviceClients: newServiceClients() };
    const content: KeysFile = { signing: keys.signing, webhookSecretKey: keys.webhookSecretKey.toString('base64'), serviceClients: keys.serviceClients };
    await writePrivateJson(file, content);
    return keys;
  }
  const { signing, webhookSecretKey, serviceClients } = (stored ?? {}) as Partial<KeysFile>;
  const secretKey = Buffer.from(typeof webhookSecretKey === 'string' ? webhookSecretKey : '', 'base64');
  if (!signing?.privateKeyPem || !signing.publicKeyPem || !signing.kid || secretKey.length !== 32) {
    throw new Error(`${file} is incomplete; restore it from a backup (deleting it makes stored webhook secrets unreadable)`);
  }
  // A keys.json from before service clients existed (or missing one) gains them; nothing else changes.
  const clients = newServiceClients(serviceClients);
  if (SERVICE_CLIENT_IDS.some((id) => clients[id] !== serviceClients?.[id])) {
    await writePrivateJson(file, { ...(stored as object), serviceClients: clients });
  }
  return { signing, webhookSecretKey: secretKey, serviceClients: clients };
}
