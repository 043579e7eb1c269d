/**
 * HTTP Request node (docs/workflow-engine.md, "HTTP Request"): sends the rendered request through the guarded HttpClient port;
 * `{ status, headers, body }` become {{nodes.<id>.…}} variables. One attempt per execution: the node's
 * retry policy (executor, domain/retry.ts) repeats it, and only when it is safe to repeat (`retrySafe`):
 * idempotent methods (GET, PUT, DELETE), and POST or PATCH when they carry an Idempotency-Key (the
 * step's, by default), since a receiver that honours it applies one effect per key. A POST or PATCH
 * without a key is sent once: a retry after a lost answer could create a second order. Failures say
 * what they are (NetworkError, RequestTimeoutError, HttpStatusError with the status and Retry-After).
 */
import { credentialHttpAuth, HTTP_CREDENTIAL_TYPES, type HttpAuth, type NodeParams } from '@flowdesk/contracts';
import { HttpStatusError, NodeFailedError } from '../errors.ts';
import { maskHeaders, maskJson, maskUrl, redactSecrets } from '../mask.ts';
import type { HttpMethod, OutboundResponse, TypedCredential } from '../ports.ts';
import { refersToCredential, type TemplateRenderer } from '../template.ts';
import type { NodeContext, NodeHandler, NodeResult } from './node-handler.ts';

export type HttpRequestParams = NodeParams<'http_request'>;

export interface HttpRequestInput {
  method: HttpMethod;
  url: string;
  headers: Record<string, string>;
  /** Names of the headers whose template refers to a credential: never sent past the first origin. */
  credentialHeaders: string[];
  /** Where a credential is referenced (a header, the URL, the body): a cross-origin 307/308 is then not followed. */
  credentialIn: string[];
  body?: unknown;
  timeoutMs: number;
  /** Send the step's Idempotency-Key header (param idempotencyKey; default: POST and PATCH). */
  sendKey: boolean;
  /** The credential the node names (param credential), recorded by name. */
  credential?: string;
  /** Not recorded: what that credential adds (its type's rule, libs/contracts credential-types.ts). */
  auth?: HttpAuth;
  /** Not recorded: an OAuth2 credential's type and refresh, for one new token and one more attempt after a 401. */
  oauth2?: { type: string; refresh: NonNullable<TypedCredential['refresh']> };
}

export interface HttpNodeOptions {
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  maxBodyBytes: number;
}

export const DEFAULT_HTTP_NODE_OPTIONS: HttpNodeOptions = {
  defaultTimeoutMs: 10_000,
  maxTimeoutMs: 60_000,
  maxBodyBytes: 1024 * 1024,
};

const BODY_METHODS = new Set<HttpMethod>(['POST', 'PUT', 'PATCH']);
const IDEMPOTENT = new Set<HttpMethod>(['GET', 'PUT', 'DELETE']);
const KEYED_BY_DEFAULT = new Set<HttpMethod>(['POST', 'PATCH']);
// Framing and routing headers are the client's business: a templated Host or Content-Length
// could desynchronise the connection or address another virtual host than the URL names.
const CLIENT_OWNED_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
]);

export function httpRequestHandler(overrides: Partial<HttpNodeOptions> = {}): NodeHandler<HttpRequestParams, HttpRequestInput> {
  const opts = { ...DEFAULT_HTTP_NODE_OPTIONS, ...overrides };
  return {
    isAction: true,
    render: (params, renderer) => renderHttpRequest(params, renderer, opts),
    mask: ({ credentialHeaders: _names, credentialIn: _in, sendKey: _key, auth: _auth, oauth2: _oauth2, ...input }) => ({
      ...input,
      url: maskUrl(input.url),
      headers: maskHeaders(input.headers),
      body: maskJson(input.body),
    }),
    execute: (input, ctx) => executeHttpRequest(input, ctx, opts),
    // Safe to repeat: an idempotent method, or a request that carries an Idempotency-Key (the step's, the same on every attempt, or one written in the node).
    retrySafe: (input) => IDEMPOTENT.has(input.method) || input.sendKey || Object.keys(input.headers).some((h) => h.toLowerCase() === 'idempotency-key'),
  };
}

export function renderHttpRequest(params: HttpRequestParams, renderer: TemplateRenderer, opts: HttpNodeOptions): HttpRequestInput {
  const credentialHeaders = Object.entries(params.headers ?? {})
    .filter(([, template]) => refersToCredential(template))
    .map(([name]) => name);
  // A typed credential (header, query, bearer, basic): resolved now, applied when sending, never recorded.
  let auth: HttpAuth | undefined;
  let oauth2: HttpRequestInput['oauth2'];
  if (params.credential) {
    const typed = renderer.typedCredential(params.credential, HTTP_CREDENTIAL_TYPES);
    auth = credentialHttpAuth(typed.type, typed.fields)!;
    credentialHeaders.push(...Object.keys(auth.headers));
    if (typed.refresh) oauth2 = { type: typed.type, refresh: typed.refresh };
  }
  const withBody = params.body !== undefined && BODY_METHODS.has(params.method);
  const input: HttpRequestInput = {
    method: params.method,
    url: renderer.renderString(params.url).trim(),
    headers: renderer.renderMap(params.headers),
    credentialHeaders,
    credentialIn: [
      ...credentialHeaders.map((name) => `header "${name}"`),
      ...(refersToCredential(params.url) ? ['the URL'] : []),
      ...(withBody && refersToCredential(typeof params.body === 'string' ? params.body : JSON.stringify(params.body)) ? ['the body'] : []),
      ...(params.credential ? [`credential "${params.credential}"`] : []),
    ],
    timeoutMs: Math.min(Math.max(params.timeoutMs ?? opts.defaultTimeoutMs, 100), opts.maxTimeoutMs),
    sendKey: params.idempotencyKey === undefined ? KEYED_BY_DEFAULT.has(params.method) : params.idempotencyKey === 'send',
  };
  if (withBody) input.body = renderer.renderDeep(parseJsonText(params.body));
  if (params.credential) Object.assign(input, { credential: params.credential, auth, ...(oauth2 ? { oauth2 } : {}) });
  return input;
}

/**
 * A body written as JSON text (`'{"name": "{{trigger.name}}"}'`) is parsed BEFORE rendering, so
 * a value containing quotes cannot break out of its string and inject fields.
 */
function parseJsonText(body: unknown): unknown {
  if (typeof body !== 'string' || !/^\s*[[{]/.test(body)) return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/**
 * The request's URL and headers with the credential applied: its headers replace any of the same name
 * written in the node, its query parameters replace any of the same name in the URL.
 */
function withAuth(input: HttpRequestInput, headers: Record<string, string>): string {
  if (!input.auth) return input.url;
  for (const [name, value] of Object.entries(input.auth.headers)) {
    for (const h of Object.keys(headers)) if (h.toLowerCase() === name.toLowerCase()) delete headers[h];
    if (/[\r\n\0]/.test(value)) throw new NodeFailedError(`credential "${input.credential}" holds a line break, which a header cannot carry`);
    headers[name] = value;
  }
  const query = Object.entries(input.auth.query);
  if (query.length === 0) return input.url;
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw new NodeFailedError(`"${maskUrl(input.url).slice(0, 200)}" is not a valid absolute URL`);
  }
  for (const [name, value] of query) url.searchParams.set(name, value);
  return url.href;
}

async function executeHttpRequest(input: HttpRequestInput, ctx: NodeContext, opts: HttpNodeOptions): Promise<NodeResult> {
  const first = await sendOnce(input, ctx, opts);
  let res = first.res;
  const sentToken = first.sentToken;
  // An OAuth2 credential's token refused (revoked, expired early): one refresh, then the request once more.
  let fresh: string | undefined;
  if (res.status === 401 && input.oauth2 && sentToken) {
    let fields: Readonly<Record<string, string>>;
    try {
      fields = await input.oauth2.refresh(sentToken);
    } catch (err) {
      throw new NodeFailedError(`${input.method} ${maskUrl(input.url)} answered HTTP 401 and ${(err as Error).message}`);
    }
    const retried = { ...input, auth: credentialHttpAuth(input.oauth2.type, fields)! };
    fresh = fields.accessToken;
    ({ res } = await sendOnce(retried, ctx, opts));
  }
  const output = { status: res.status, headers: res.headers, body: decodeBody(res, opts, ctx) };
  // The new token was not known when the run's secrets were gathered: masked here, in what the step records.
  const hide = (v: unknown) => (fresh ? redactSecrets(v, [fresh, `Bearer ${fresh}`]) : v);
  const recorded = hide({ ...output, headers: maskHeaders(res.headers) });
  if (res.status >= 400)
    throw new HttpStatusError(`${input.method} ${maskUrl(input.url)} answered HTTP ${res.status}`, res.status, recorded, res.headers['retry-after']);
  return { output, recorded };
}

/** One exchange with the credential applied; `sentToken`: the OAuth2 access token it carried. */
async function sendOnce(input: HttpRequestInput, ctx: NodeContext, opts: HttpNodeOptions): Promise<{ res: OutboundResponse; sentToken?: string }> {
  const headers = cleanHeaders(input.headers, ctx);
  const url = withAuth(input, headers);
  let body: string | undefined;
  if (input.body !== undefined) {
    body = JSON.stringify(input.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  // The step's key (the same on every attempt and when a resumed run sends it again); a header of the
  // same name written in the node wins.
  const keyed = input.sendKey && !!ctx.idempotencyKey;
  if (keyed && !Object.keys(headers).some((h) => h.toLowerCase() === 'idempotency-key')) headers['Idempotency-Key'] = ctx.idempotencyKey!;
  const res = await ctx.ports.http.send({
    method: input.method,
    url,
    headers,
    credentialHeaders: input.credentialHeaders,
    credentialIn: input.credentialIn,
    body,
    timeoutMs: input.timeoutMs,
    maxBodyBytes: opts.maxBodyBytes,
    signal: ctx.signal,
  });
  const bearer = input.oauth2 ? /^Bearer (.+)$/.exec(input.auth?.headers.Authorization ?? '')?.[1] : undefined;
  return { res, ...(bearer ? { sentToken: bearer } : {}) };
}

function cleanHeaders(headers: Record<string, string>, ctx: NodeContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    // A rendered value carrying CR/LF would be header injection; refuse rather than guess.
    if (/[\r\n\0]/.test(value) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new NodeFailedError(`header "${name.slice(0, 100)}" has an invalid name or a line break in its value`);
    }
    if (CLIENT_OWNED_HEADERS.has(name.toLowerCase())) {
      ctx.warn(`header "${name}" is set by the HTTP client and was ignored`);
      continue;
    }
    out[name] = value;
  }
  return out;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

function decodeBody(res: OutboundResponse, opts: HttpNodeOptions, ctx: NodeContext): unknown {
  const text = new TextDecoder('utf-8').decode(res.body);
  if (res.truncated) {
    ctx.warn(`response body truncated at ${opts.maxBodyBytes} bytes (kept as text)`);
    return text;
  }
  if (JSON_TYPE.test(res.headers['content-type'] ?? '') && text.trim() !== '') {
    try {
      return JSON.parse(text);
    } catch {
      ctx.warn('response says JSON but is not valid JSON (kept as text)');
    }
  }
  return text;
}
