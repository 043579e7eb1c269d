import { createHmac, timingSafeEqual } from 'node:crypto';
import { constantTimeEqual } from '@flowdesk/service-kit';

/** Standard Webhooks refuses deliveries whose timestamp is further than this from now. */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

export type Verdict = { ok: true } | { ok: false; reason: string };

/** x-webhook-secret against the trigger's secret, in constant time. */
export function checkSecretHeader(expected: string | null, presented: string | undefined): Verdict {
  if (!presented) return { ok: false, reason: 'Missing x-webhook-secret header' };
  if (!expected || !constantTimeEqual(expected, presented)) return { ok: false, reason: 'Invalid webhook secret' };
  return { ok: true };
}

/**
 * Standard Webhooks (standardwebhooks.com): HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${raw body}`
 * with the secret's bytes (the part after `whsec_`, base64), compared in constant time against each
 * `v1,<base64>` signature of the header (several during a secret rotation). Verified over the raw bytes,
 * before any parsing, so re-serialisation can never change what was signed.
 */
export function checkStandardWebhook(secret: string | null, headers: Record<string, string | string[] | undefined>, rawBody: Buffer, nowMs: number): Verdict {
  const id = single(headers['webhook-id']);
  const timestamp = single(headers['webhook-timestamp']);
  const signature = single(headers['webhook-signature']);
  if (!id || !timestamp || !signature) return { ok: false, reason: 'Missing webhook-id, webhook-timestamp or webhook-signature header' };
  if (!secret) return { ok: false, reason: 'Invalid webhook signature' };
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) {
    return { ok: false, reason: 'webhook-timestamp is too old or too new' };
  }
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  for (const part of signature.split(' ')) {
    const [version, value] = part.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: 'Invalid webhook signature' };
}

/** Signs like a Standard Webhooks sender does (tests, docs examples). */
export function signStandardWebhook(secret: string, id: string, timestamp: number, rawBody: string | Buffer): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest('base64')}`;
}

const single = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
