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
 * The headers a Respond node may set: an ALLOW list (docs/webhooks.md, "Respond headers"), since the
 * answer goes out on Flowdesk's own origin, where a deny list lets through whatever a proxy or a
 * browser acts on (X-Accel-Redirect, Clear-Site-Data, Link, Content-Disposition, Vary, …). Allowed:
 * - these names: `cache-control` (only private or non-storing directives, CACHE_CONTROL_DIRECTIVE),
 *   `content-language`, `etag`, `last-modified`, `retry-after`;
 * - custom `x-*` names, except the reserved ones (RESERVED_X_HEADER: what proxies, servers and
 *   browsers act on, and Flowdesk's own).
 * Everything else is refused: hop-by-hop, framing, Content-Type (the body is always JSON), Location
 * (no redirects from Flowdesk's origin), cookies, authentication, CORS and the security headers.
 * Values: Latin-1 without control characters (what HTTP can carry), at most 4,000 characters.
 */
export const ALLOWED_RESPONSE_HEADERS = new Set(['cache-control', 'content-language', 'etag', 'last-modified', 'retry-after']);

/** `x-*` names a proxy, a server or a browser acts on, or that are Flowdesk's own: refused. */
export const RESERVED_X_HEADER =
  /^x-(accel-|sendfile$|lighttpd-send-file$|litespeed-|forwarded-|real-ip$|original-|rewrite-url$|envoy-|middleware-|nginx-|varnish|frame-options$|content-type-options$|xss-protection$|permitted-cross-domain-policies$|dns-prefetch-control$|download-options$|powered-by$|http-method-override$|request-id$|flowdesk-|webhook-)/;

/** Cache-Control directives a Respond answer may use: none that lets a shared cache keep it. */
const CACHE_CONTROL_DIRECTIVE = /^(no-store|no-cache|private|must-revalidate|max-age=\d{1,10})$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
// What Node can write in a header value (its own check throws, which was a raw 500 to the caller).
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Why a response header cannot be sent, or null when it can. The engine's Respond node and ingest both ask. */
export function responseHeaderProblem(name: string, value: string): string | null {
  const lower = name.toLowerCase();
  if (!HEADER_NAME.test(name)) return `header name "${name.slice(0, 100)}" is not a valid HTTP header name`;
  const allowed = ALLOWED_RESPONSE_HEADERS.has(lower) || (lower.startsWith('x-') && lower.length > 2 && !RESERVED_X_HEADER.test(lower));
  if (!allowed)
    return `header "${lower}" cannot be set by a workflow (allowed: ${[...ALLOWED_RESPONSE_HEADERS].join(', ')} and custom X-* names; docs/webhooks.md)`;
  if (typeof value !== 'string') return `header "${lower}" has a value that is not text`;
  if (/[\r\n\0]/.test(value)) return `header "${lower}" has a line break or NUL in its value`;
  if (!HEADER_VALUE.test(value)) return `header "${lower}" has a character outside Latin-1 or a control character in its value`;
  if (value.length > 4_000) return `header "${lower}" is longer than 4000 characters`;
  if (lower === 'cache-control') {
    const directives = value.split(',').map((d) => d.trim().toLowerCase());
    if (!directives.every((d) => CACHE_CONTROL_DIRECTIVE.test(d)) || !directives.some((d) => d === 'no-store' || d === 'private' || d === 'no-cache'))
      return `header "cache-control" may only be private or non-storing (no-store, no-cache, private, must-revalidate, max-age=<n>), not "${value.slice(0, 100)}"`;
  }
  return null;
}
