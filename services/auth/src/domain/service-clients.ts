import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The services that may call introspection and token exchange, and the secret of each. */
export type ServiceClients = Readonly<Record<string, string>>;

export interface BasicCredentials {
  clientId: string;
  secret: string;
}

/**
 * `Authorization: Basic base64(id:secret)`, with RFC 6749 §2.3.1's form-encoding of both parts.
 * Anything else is undefined.
 */
export function parseBasicAuth(header: string | undefined): BasicCredentials | undefined {
  const match = header && /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  try {
    const unform = (s: string) => decodeURIComponent(s.replaceAll('+', ' '));
    return { clientId: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

// Compared as SHA-256 digests: equal lengths whatever was sent, so timingSafeEqual applies and the
// time taken says nothing about how much of the secret was right, or how long it is.
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
const UNKNOWN_CLIENT_SECRET = randomBytes(32).toString('hex');

/** The authenticated service id, or undefined. An unknown id costs the same comparison as a wrong secret. */
export function authenticateService(clients: ServiceClients, credentials: BasicCredentials | undefined): string | undefined {
  if (!credentials) return undefined;
  const known = Object.hasOwn(clients, credentials.clientId);
  const expected = known ? clients[credentials.clientId]! : UNKNOWN_CLIENT_SECRET;
  const same = timingSafeEqual(digest(credentials.secret), digest(expected));
  return known && same && expected.length > 0 ? credentials.clientId : undefined;
}

/** `id=secret,id=secret` (SERVICE_CLIENT_SECRETS); secrets shorter than 32 characters are refused. */
export function parseServiceClients(text: string | undefined): Record<string, string> {
  const clients: Record<string, string> = {};
  for (const entry of (text ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf('=');
    const id = entry.slice(0, eq).trim();
    const secret = entry.slice(eq + 1).trim();
    if (eq <= 0 || !/^[a-z0-9][a-z0-9-]*$/.test(id)) throw new Error(`SERVICE_CLIENT_SECRETS: "${id || entry.slice(0, 20)}" is not a service id`);
    if (secret.length < 32) throw new Error(`SERVICE_CLIENT_SECRETS: the secret of ${id} must have at least 32 characters`);
    clients[id] = secret;
  }
  return clients;
}

export const generateServiceSecret = () => randomBytes(32).toString('base64url');
