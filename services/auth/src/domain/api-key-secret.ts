import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_KEY_PREFIX } from '@flowdesk/contracts';

/**
 * The secret of an API key: `fdk_` + 32 random bytes in base62, always 43 characters (62^43 > 2^256,
 * so no randomness is lost). Base62 rather than base64url: no `-` or `_`, so a double click selects
 * the whole key and `_` only ever separates the prefix.
 */
export const RANDOM_BYTES = 32;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const SECRET_LENGTH = 43;
const KEY_FORMAT = new RegExp(`^${API_KEY_PREFIX}_[0-9A-Za-z]{${SECRET_LENGTH}}$`);
/** Characters of the random part kept in clear, to recognise a key in a list. */
const VISIBLE_CHARS = 8;

export function encodeBase62(bytes: Uint8Array, width: number): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out.padStart(width, ALPHABET[0]);
}

export function decodeBase62(text: string, bytes: number): Buffer {
  let n = 0n;
  for (const c of text) n = n * 62n + BigInt(ALPHABET.indexOf(c));
  return Buffer.from(n.toString(16).padStart(bytes * 2, '0'), 'hex');
}

export interface NewKeySecret {
  /** Shown to the user once, never stored. */
  secret: string;
  /** What is stored instead. */
  hash: Buffer;
  prefix: string;
}

export function generateKeySecret(): NewKeySecret {
  const secret = `${API_KEY_PREFIX}_${encodeBase62(randomBytes(RANDOM_BYTES), SECRET_LENGTH)}`;
  return { secret, hash: hashKeySecret(secret), prefix: visiblePrefix(secret) };
}

/** Whether a presented token has the shape of one of our keys; anything else is not looked up. */
export const looksLikeApiKey = (token: string) => KEY_FORMAT.test(token);

/**
 * SHA-256, unsalted. A slow password hash would protect nothing here: the input is 256 random bits,
 * which no dictionary or brute force reaches, and a fast hash keeps every authenticated request cheap.
 */
export const hashKeySecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest();

export const visiblePrefix = (secret: string) => secret.slice(0, API_KEY_PREFIX.length + 1 + VISIBLE_CHARS);

/** Constant-time check that a stored hash belongs to the presented secret. */
export function secretMatches(secret: string, storedHash: Uint8Array): boolean {
  const presented = hashKeySecret(secret);
  return storedHash.length === presented.length && timingSafeEqual(presented, storedHash);
}
