import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyBaseLogger, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { HttpError, type ErrorBody } from '@flowdesk/contracts';
import { isDraining } from './lifecycle.ts';
import { loggerOptions } from './logger.ts';
import { instrumentHttp } from './observability.ts';
import { validatorCompiler } from './validation.ts';

export type Service = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface ServiceOptions {
  /** Service name, in every log line and the health answer. */
  name: string;
  /** pino level, or 'silent' (tests). Default LOG_LEVEL or info. */
  logLevel?: string;
  /** Where log lines go (default stdout); tests read them from here. */
  logStream?: { write(line: string): void };
  /** Largest request body accepted, bytes; larger gets 413. Default 1 MiB. */
  bodyLimit?: number;
  /**
   * Whose X-Forwarded-For to believe for `request.ip` (fastify's trustProxy): a hop count, or a
   * comma-separated list of addresses/CIDRs (names `loopback`, `linklocal`, `uniquelocal` allowed).
   * Default: TRUST_PROXY from the environment, else `loopback` (the embedded front). See parseTrustProxy.
   */
  trustProxy?: string | number;
  /** Throws when the service cannot serve (database unreachable...): /readyz answers 503 then. */
  readiness?: () => Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** The most an oversized body is read (and dropped) after its 413, before the connection is cut. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

/**
 * A 413 answered before the body was read: fastify would close the connection at once, and a
 * client (or the embedded front) still sending the body then gets a reset instead of the 413 —
 * the kernel drops the unread answer with it. So the rest of the body is read and dropped (up to
 * DRAIN_LIMIT, then the connection is cut) and the connection stays usable: the sender sees the 413.
 */
function readRestOfBody(raw: IncomingMessage, reply: { removeHeader(name: string): unknown }): void {
  reply.removeHeader('connection');
  dropRestOfBody(raw);
}

/**
 * Reads and discards the rest of a request body whose answer has gone (or is going) out, so the
 * connection can carry the client's next request; past DRAIN_LIMIT (64 MiB) the connection is cut
 * instead. Used here after an early 413, and by the embedded front after any early answer.
 */
export function dropRestOfBody(raw: IncomingMessage): void {
  let read = 0;
  raw.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > DRAIN_LIMIT) raw.socket.destroy();
  });
  raw.on('error', () => {});
  raw.resume();
}
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * A fastify instance with what every Flowdesk service shares: TypeBox schemas, pino logs with
 * request ids (taken from x-request-id when the caller sent a sane one, so one id follows a request
 * across services), one error shape for every failure, /healthz + /readyz, and request metrics and
 * spans (observability.ts; served on the separate metrics port by listenMetrics).
 */
// `hide` is @fastify/swagger's addition to FastifySchema, declared only where swagger is loaded: widened
// to `object` so this package compiles without it.
const HIDDEN_FROM_DOCS = { hide: true } as object;

/** A route as registered: method, URL template (`/api/v1/tasks/:id`), and whether the API document hides it. */
export interface RegisteredRoute {
  method: string;
  url: string;
  hidden: boolean;
  /** The route's schema as registered (body, params, querystring, response), for the OpenAPI document's drift test. */
  schema?: Readonly<Record<string, unknown>>;
}
const ROUTES = new WeakMap<object, RegisteredRoute[]>();

/** Every route registered on a service made by createService (HEAD routes fastify adds for GET excluded). */
export function registeredRoutes(app: object): readonly RegisteredRoute[] {
  return ROUTES.get(app) ?? [];
}

export function createService(options: ServiceOptions): Service {
  const app = Fastify({
    logger: loggerOptions(options.name, options.logLevel, options.logStream),
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true },
    // A hop count is valid at run time (fastify passes it to proxy-addr); its types only list strings.
    trustProxy: (options.trustProxy ?? parseTrustProxy(process.env.TRUST_PROXY)) as string,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler());
  // What the service answers, for the test that every public route is in the OpenAPI document.
  const routes: RegisteredRoute[] = [];
  ROUTES.set(app, routes);
  app.addHook('onRoute', (route) => {
    const hidden = route.schema?.hide === true;
    const schema = route.schema as Record<string, unknown> | undefined;
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url, hidden, ...(schema ? { schema } : {}) });
  });

  // JSON only: fastify also parses text/plain by default, which would turn a wrong content type
  // into a confusing validation error instead of 415.
  app.removeContentTypeParser('text/plain');

  // Callback hooks, not async ones, on every request's path: an async hook costs a promise and a
  // microtask per request (measured on the webhook endpoint, bench/webhook-ingest.ts).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    // A NUL character (only `%00` in a URL brings one) can be neither stored nor compared by
    // Postgres (text refuses it): refused here, for every route of every service, with a 400 that
    // names the parameter, rather than a database error (500) in each route that uses the value.
    const nul = req.raw.url?.includes('%00') ? nulParameter(req.query, req.params) : undefined;
    done(nul ? new HttpError('bad_request', `${nul} must not contain the NUL character (%00)`) : undefined);
  });
  // Request metrics (route template × status) and server spans (docs/observability.md).
  instrumentHttp(app, options.name);
  // Shutting down (lifecycle.ts): every response from then on, also of requests that began before,
  // ends its connection. The client's next request opens a new one, which the load balancer sends
  // to another replica, and close() is not kept waiting by keep-alive connections (fastify keeps
  // them 72 s) that went idle after it began.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (isDraining(app)) reply.header('connection', 'close');
    else if (reply.statusCode === 413 && !req.raw.complete) readRestOfBody(req.raw, reply);
    done(null, payload);
  });

  app.setErrorHandler((err: FastifyError | HttpError, req, reply) => {
    const { status, body, headers } = toErrorResponse(err);
    if (status >= 500) req.log.error({ err }, 'request failed');
    else req.log.info({ status, error: body.error }, body.message);
    return reply.code(status).headers(headers).send(body);
  });

  app.setNotFoundHandler((req, reply) => {
    const body: ErrorBody = { error: 'not_found', message: `No route for ${req.method} ${req.url.split('?')[0]}` };
    return reply.code(404).send(body);
  });

  app.get('/healthz', { logLevel: 'warn', schema: HIDDEN_FROM_DOCS }, async () => ({ status: 'ok', service: options.name }));
  app.get('/readyz', { logLevel: 'warn', schema: HIDDEN_FROM_DOCS }, async (req, reply) => {
    // Shutting down: not ready, on purpose, so no warning with a stack for every probe.
    if (isDraining(app)) return reply.code(503).send({ error: 'unavailable', message: `${options.name} is shutting down` } satisfies ErrorBody);
    try {
      await options.readiness?.();
      return { status: 'ready', service: options.name };
    } catch (err) {
      req.log.warn({ err }, 'not ready');
      const body: ErrorBody = { error: 'unavailable', message: `${options.name} is not ready` };
      return reply.code(503).send(body);
    }
  });

  return app;
}

/** `querystring.q`, `params.name`: the first query or path parameter (name or value) holding a NUL. */
function nulParameter(query: unknown, params: unknown): string | undefined {
  for (const [where, values] of [
    ['querystring', query],
    ['params', params],
  ] as const) {
    if (!values || typeof values !== 'object') continue;
    for (const [name, value] of Object.entries(values)) {
      const all: unknown[] = Array.isArray(value) ? value : [value];
      if (name.includes('\0') || all.some((v) => typeof v === 'string' && v.includes('\0'))) return `${where}.${name.replaceAll('\0', '\\0')}`;
    }
  }
  return undefined;
}

/**
 * TRUST_PROXY (docs/configuration.md): unset or empty → `loopback`; an integer → that many proxy hops
 * in front of the service; otherwise a comma-separated list of addresses and CIDRs. `true` (trust
 * any X-Forwarded-For) is refused: whoever can reach the service could then choose their address.
 * Loopback is always trusted in a list: the embedded front, and a sidecar in the same pod, are local.
 */
export function parseTrustProxy(value: string | undefined): string | number {
  const text = (value ?? '').trim();
  if (!text) return 'loopback';
  if (/^\d+$/.test(text)) return Number(text);
  if (/^(true|false|\*)$/i.test(text)) throw new Error(`TRUST_PROXY must be a hop count or a list of addresses/CIDRs, not "${text}"`);
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return [...new Set(['loopback', ...list])].join(',');
}

// Postgres refuses a NUL in text (22021, "invalid byte sequence for encoding UTF8: 0x00") and a
// \u0000 or a lone surrogate escape in jsonb (22P05). Both come from what the client sent (a JSON
// body's string): the client's error, not the server's. The code sits on the driver's error (pg,
// PGlite) or, through Prisma, on its driver adapter error.
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);
function isUnstorableText(err: unknown): boolean {
  const e = err as { code?: unknown; meta?: { driverAdapterError?: { cause?: { code?: unknown } } } } | null;
  const code = e?.meta?.driverAdapterError?.cause?.code ?? e?.code;
  return typeof code === 'string' && UNSTORABLE_TEXT.has(code);
}

/** Maps anything thrown in a request to the status and ErrorBody a client sees; 5xx details stay in the log. */
export function toErrorResponse(err: FastifyError | HttpError): { status: number; body: ErrorBody; headers: Record<string, string> } {
  if (err instanceof HttpError) return { status: err.statusCode, body: err.toBody(), headers: err.headers };
  const fe = err;
  if (fe.validation) {
    const where = fe.validationContext ?? 'request';
    const first = fe.validation[0];
    const path = first?.instancePath ? `${where}${first.instancePath.replaceAll('/', '.')}` : where;
    const extra = first?.keyword === 'additionalProperties' ? ` (${String((first.params as { additionalProperty?: string }).additionalProperty)})` : '';
    return { status: 400, body: { error: 'validation_failed', message: `${path} ${first?.message ?? 'is invalid'}${extra}` }, headers: {} };
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: { error: 'payload_too_large', message: fe.message }, headers: {} };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: { error: 'unsupported_media_type', message: 'Content-Type must be application/json' }, headers: {} };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: { error: 'bad_request', message: fe.message }, headers: {} };
  }
  if (isUnstorableText(err)) {
    const message = 'A value contains a character that cannot be stored: the NUL character (\\u0000) or an invalid Unicode escape';
    return { status: 400, body: { error: 'bad_request', message }, headers: {} };
  }
  const status = fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 600 ? fe.statusCode : 500;
  if (status === 400 && err instanceof SyntaxError) {
    return { status, body: { error: 'bad_request', message: 'Body is not valid JSON' }, headers: {} };
  }
  if (status < 500) {
    const code =
      status === 401
        ? 'unauthorized'
        : status === 403
          ? 'forbidden'
          : status === 404
            ? 'not_found'
            : status === 405
              ? 'method_not_allowed'
              : status === 413
                ? 'payload_too_large'
                : status === 415
                  ? 'unsupported_media_type'
                  : status === 429
                    ? 'rate_limited'
                    : 'bad_request';
    return { status, body: { error: code, message: fe.message }, headers: {} };
  }
  return { status, body: { error: status === 503 ? 'unavailable' : 'internal_error', message: 'Internal server error' }, headers: {} };
}
