import { counter } from '@flowdesk/telemetry';

/** Deliveries by outcome (docs/observability.md): the reason is a fixed word per refusal status. */
const deliveries = counter<'result' | 'reason'>({
  name: 'flowdesk_webhook_deliveries_total',
  help: 'Webhook deliveries: accepted (event durable on the bus), or refused with a reason',
  labelNames: ['result', 'reason'],
  owner: 'webhook-ingest',
});

const REASONS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'not_registered',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

/** Counts one delivery by the status it was answered with. */
export function countDelivery(status: number): void {
  if (status === 200) deliveries.inc({ result: 'accepted', reason: '' });
  else deliveries.inc({ result: 'refused', reason: REASONS[status] ?? (status >= 500 ? 'error' : 'other') });
}
