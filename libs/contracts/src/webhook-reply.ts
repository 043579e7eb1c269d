import Type, { type Static } from 'typebox';
import { StringEnum } from './common.ts';

/**
 * Answering the webhook's caller (docs/webhooks.md, "Answering the caller"): a webhook workflow's
 * `triggerConfig.responseMode` says what the HTTP answer is. `immediately` (the default: the spec's
 * `{accepted, eventId}` as before), `finished` (when the run ends: `{runId, status, output}`) or `respond_node` (the first Respond node the run reaches; a fallback when it reaches none).
 */
export const RESPONSE_MODES = ['immediately', 'finished', 'respond_node'] as const;
export const ResponseMode = StringEnum(RESPONSE_MODES, { description: 'When and how the webhook answers its caller.' });
export type ResponseMode = Static<typeof ResponseMode>;
export const responseModeOf = (config: Record<string, unknown> | null | undefined): ResponseMode => {
  const mode = config?.responseMode;
  return mode === 'finished' || mode === 'respond_node' ? mode : 'immediately';
};

/**
 * Topic of answers from the engine to the webhook-ingest replica holding the request, keyed by that
 * replica's id and sent to the partition that replica reads (`replyTo.partition`): each replica is
 * pinned to one partition (REPLY_PARTITION) and keeps the answers addressed to it (docs/event-bus.md,
 * "Reply topic").
 */
export const WEBHOOK_REPLY_TOPIC = 'webhook.reply.v1';

/** Where the engine sends the answer of a run whose caller waits (on the trigger event). */
export const ReplyTo = Type.Object(
  {
    /** The ingest replica holding the request (the reply's key). */
    replica: Type.String({ minLength: 1, maxLength: 200 }),
    /**
     * The reply topic's partition this replica reads (Kafka); the engine produces the answer there.
     * Absent (an event from an older ingest): the answer goes to the key's partition.
     */
    partition: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    mode: StringEnum(['finished', 'respond_node']),
  },
  { additionalProperties: false },
);
export type ReplyTo = Static<typeof ReplyTo>;

/** Largest JSON body of an answer, bytes (a Respond node above fails). */
export const WEBHOOK_REPLY_MAX_BODY = 256 * 1024;

export const WebhookReply = Type.Object(
  {
    eventId: Type.String({ minLength: 1, maxLength: 200 }),
    replica: Type.String({ minLength: 1, maxLength: 200 }),
    /** HTTP status of the answer, 100–599 (a Respond node's, or the run's fallback). */
    status: Type.Integer({ minimum: 100, maximum: 599 }),
    headers: Type.Record(Type.String(), Type.String()),
    body: Type.Unknown(),
  },
  { $id: 'WebhookReply' },
);
export type WebhookReply = Static<typeof WebhookReply>;

/**
 * Headers a Respond node may not set: hop-by-hop ones (RFC 9110 §7.6.1), framing that the server
 * owns, and security-sensitive ones (cookies, authentication challenges, CORS, HSTS, CSP, redirects).
 * The body is always JSON, so Content-Type is the server's too.
 */
export const REFUSED_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'content-length',
  'content-encoding',
  'content-type',
  'host',
  'date',
  'server',
  'set-cookie',
  'set-cookie2',
  'www-authenticate',
  'authorization',
  'strict-transport-security',
  'content-security-policy',
  'content-security-policy-report-only',
  'location',
  'refresh',
  'x-frame-options',
  'x-content-type-options',
  'cross-origin-opener-policy',
  'cross-origin-embedder-policy',
  'cross-origin-resource-policy',
  'alt-svc',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/** Why a response header cannot be sent, or null when it can. */
export function responseHeaderProblem(name: string, value: string): string | null {
  const lower = name.toLowerCase();
  if (!HEADER_NAME.test(name)) return `header name "${name.slice(0, 100)}" is not a valid HTTP header name`;
  if (REFUSED_RESPONSE_HEADERS.has(lower) || lower.startsWith('access-control-') || lower.startsWith('proxy-') || lower.startsWith('sec-'))
    return `header "${lower}" cannot be set by a workflow (hop-by-hop, framing or security-sensitive)`;
  if (/[\r\n\0]/.test(value)) return `header "${lower}" has a line break or NUL in its value`;
  if (value.length > 4_000) return `header "${lower}" is longer than 4000 characters`;
  return null;
}
