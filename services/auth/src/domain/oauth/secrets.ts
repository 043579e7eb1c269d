import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { encodeBase62, hashKeySecret, RANDOM_BYTES, SECRET_LENGTH } from '../api-key-secret.ts';

/**
 * The OAuth secrets we hand out, all opaque: a recognisable prefix (secret scanners, logs) and 256
 * random bits in base62, like API keys. Only their SHA-256 is stored (see api-key-secret.ts for why
 * a fast hash is right for 256 random bits).
 */
export const TOKEN_PREFIX = {
  access: 'fdo',
  refresh: 'fdr',
  code: 'fdc',
  clientSecret: 'fds',
  csrf: 'fdx',
} as const;
export type TokenKind = keyof typeof TOKEN_PREFIX;

const FORMAT = Object.fromEntries(
  Object.entries(TOKEN_PREFIX).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}_[0-9A-Za-z]{${SECRET_LENGTH}}$`)]),
) as Record<TokenKind, RegExp>;

export interface OpaqueSecret {
  value: string;
  hash: Uint8Array<ArrayBuffer>;
}

export function newSecret(kind: TokenKind): OpaqueSecret {
  const value = `${TOKEN_PREFIX[kind]}_${encodeBase62(randomBytes(RANDOM_BYTES), SECRET_LENGTH)}`;
  return { value, hash: hashSecret(value) };
}

export const hashSecret = (value: string): Uint8Array<ArrayBuffer> => new Uint8Array(hashKeySecret(value));

/** Whether a presented value has the shape of a `kind` secret; anything else is never looked up. */
export const looksLike = (kind: TokenKind, value: string | undefined): value is string => typeof value === 'string' && FORMAT[kind].test(value);

/** Constant-time comparison of two stored/computed digests. */
export function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** RFC 7636 §4.1: 43–128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** An S256 challenge is the base64url SHA-256 of the verifier: always 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** RFC 7636 §4.6 with S256, compared in constant time. A malformed verifier never matches. */
export function verifierMatches(verifier: string | undefined, challenge: string): boolean {
  if (!verifier || !VERIFIER.test(verifier) || !S256_CHALLENGE.test(challenge)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  return sameDigest(computed, Buffer.from(challenge));
}

/**
 * The successor of a rotated refresh token is kept for the grace window, encrypted under a key
 * derived from the rotated token itself: only whoever holds that token can read it back (a copy of
 * the database cannot), which is exactly who may receive the same new pair again.
 */
const keyFrom = (refreshToken: string) => Buffer.from(hkdfSync('sha256', Buffer.from(refreshToken, 'utf8'), Buffer.alloc(0), 'flowdesk refresh successor', 32));

export function sealSuccessor(refreshToken: string, successor: object): Uint8Array<ArrayBuffer> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFrom(refreshToken), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(successor), 'utf8'), cipher.final()]);
  return new Uint8Array(Buffer.concat([iv, cipher.getAuthTag(), body]));
}

export function openSuccessor<T>(refreshToken: string, sealed: Uint8Array): T | undefined {
  try {
    const buf = Buffer.from(sealed);
    const decipher = createDecipheriv('aes-256-gcm', keyFrom(refreshToken), buf.subarray(0, 12));
    decipher.setAuthTag(buf.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]).toString('utf8')) as T;
  } catch {
    return undefined;
  }
}
