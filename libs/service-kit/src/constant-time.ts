/**
 * Comparisons for secrets and signatures. A plain `===` returns as soon as a character differs,
 * and the time it takes tells an attacker how much of a forged signature was right.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Equality whose duration does not depend on where the strings differ (only on their lengths). */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  // timingSafeEqual requires equal lengths; compare against itself so the work is still done.
  if (x.length !== y.length) {
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

export function hmacSha256Hex(secret: string, payload: string | Uint8Array): string {
  return createHmac('sha256', secret).update(payload).digest('hex');
}

/**
 * Verifies a GitHub-style signature header (`sha256=<hex>`, or bare hex) over the RAW request
 * bytes. For webhook-ingest or a future node: the engine itself only sees the parsed payload,
 * and re-serialised JSON does not reproduce the bytes the sender signed.
 */
export function verifyHmacSha256(rawBody: string | Uint8Array, secret: string, signatureHeader: string): boolean {
  const given = signatureHeader
    .trim()
    .replace(/^sha256=/i, '')
    .toLowerCase();
  return constantTimeEqual(given, hmacSha256Hex(secret, rawBody));
}
