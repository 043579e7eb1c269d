import { createHash, randomUUID } from 'node:crypto';
import type { TriggerEvent, WebhookTriggerLookup } from '@flowdesk/contracts';

/** Headers that carry credentials: never published, never stored on a run. */
const SECRET_HEADERS = new Set(['x-webhook-secret', 'authorization', 'proxy-authorization', 'cookie', 'webhook-signature']);

/**
 * The event id. A sender's retry of the same delivery (same `Idempotency-Key`, or the Standard
 * Webhooks `webhook-id`) gets the same id, and the engine records one run per event id.
 */
export function eventIdOf(headers: Record<string, string | string[] | undefined>): string {
  const key = first(headers['idempotency-key']) ?? first(headers['webhook-id']);
  if (key) return `key_${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
  return `evt_${randomUUID()}`;
}

export function triggerEventOf(
  trigger: WebhookTriggerLookup,
  payload: Record<string, unknown>,
  headers: Record<string, string | string[] | undefined>,
  receivedAt: Date,
  rawBody?: Buffer,
): TriggerEvent {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    // A workflow that verifies signatures itself (rawBody) keeps webhook-signature: a signature is no secret.
    if (value === undefined || (SECRET_HEADERS.has(name) && !(trigger.rawBody && name === 'webhook-signature'))) continue;
    kept[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    eventId: eventIdOf(headers),
    workflowId: trigger.workflowId,
    ownerId: trigger.ownerId,
    source: 'webhook',
    receivedAt: receivedAt.toISOString(),
    payload,
    headers: kept,
    // Only for a workflow that verifies a signature (trigger.rawBody): the bytes as received, base64.
    ...(trigger.rawBody && rawBody ? { rawBody: rawBody.toString('base64') } : {}),
  };
}

const first = (v: string | string[] | undefined): string | undefined => {
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.length <= 1000 ? s : undefined;
};
