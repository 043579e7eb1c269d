import { countToolCall, sessionsClosed, sessionsOpened } from '../adapters/telemetry.ts';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { Audience, MCP_PATH, MCP_STATELESS_PROTOCOL_VERSION, TOOLS_BY_NAME, allows, insufficientScopeMessage, type Access } from '@flowdesk/contracts';
import type { Service } from '@flowdesk/service-kit';
import { AuthUnavailableError, CredentialRejectedError, createRateLimiter, type AuthClient, type RateLimit } from '@flowdesk/service-kit';
import type { WorkspaceClient } from '../adapters/workspace-client.ts';
import { createMcpHandler, isLegacyRequest, type Server as ModernServer } from '@modelcontextprotocol/server';
import { buildMcpServer } from '../domain/mcp-server.ts';
import { buildModernMcpServer } from '../domain/mcp-server-modern.ts';
import { hashSessionId, newSessionId, useSession, type Principal, type SessionStore } from '../domain/sessions.ts';
import { DEFAULT_SSE_POLL_AFTER_MS, SSE_REPLAY_WAIT_MS, SSE_RETRY_MS, isAnswer, type StreamEvents } from '../domain/stream-events.ts';
import {
  acceptsBoth,
  asMessages,
  invalidMessageReason,
  toolCallParamsProblem,
  isJsonContentType,
  jsonRpcError,
  requestIdOf,
  requestIdOfText,
  withoutSdkErrorPrefix,
  type JsonRpcId,
  negotiateVersion,
  originAllowed,
  prefersSse,
  requestProtocolVersion,
  type JsonRpcMessage,
} from '../domain/http-protocol.ts';
import { PROTECTED_RESOURCE_METADATA_PATH } from './well-known.ts';
import type { ConformanceRouting } from '../conformance/mode.ts';

export interface McpRouteContext {
  publicBaseUrl: string;
  allowedOrigins: ReadonlySet<string>;
  sessions: SessionStore;
  auth: AuthClient;
  workspace: WorkspaceClient;
  now: () => Date;
  /** Conformance mode (src/conformance): fixtures and a fixed identity instead of the catalogue and the bearer token. */
  conformance?: ConformanceRouting;
  /** `initialize` without a token, per client address (request.ip). */
  anonymousInitializeLimit: RateLimit;
  /** Resumable SSE answers (MCP 2025-11-25 SSE polling); absent: SSE answers carry no event ids and GET stays 405. */
  streamEvents?: StreamEvents;
  /** An SSE answer still open after this long is closed and the client polls for it (default DEFAULT_SSE_POLL_AFTER_MS). */
  ssePollAfterMs?: number;
}

/** Default for McpRouteContext.anonymousInitializeLimit: 30 per minute per address (docs/mcp-gateway.md). */
export const DEFAULT_ANONYMOUS_INITIALIZE_LIMIT: RateLimit = { max: 30, windowMs: 60_000 };

/** MCP 2025-06-18 removed JSON-RPC batching; older revisions (2025-03-26, 2024-11-05) still allow it. */
const BATCHING_REMOVED_FROM = '2025-06-18';

const SESSION_HEADER = 'mcp-session-id';

/** The MCP-Protocol-Version header came with MCP 2025-06-18; older revisions do not define it. */
const PROTOCOL_VERSION_HEADER_FROM = '2025-06-18';

/** SSE polling (priming events, Last-Event-ID) came with MCP 2025-11-25 (SEP-1699). */
const SSE_POLLING_FROM = '2025-11-25';

/** Introspection's token_type of an OAuth access token (an API key's is `api_key`). */
const OAUTH_TOKEN_TYPE = 'Bearer';

/** The scopes a new authorization should ask for (MCP step-up): everything the call needs, read included. */
const scopeFor = (access: Access) => (access === 'write' ? 'mcp:read mcp:write' : 'mcp:read');

/** How long a request's server may outlive its closed SSE stream while its answer is still coming (stored for polling). */
const ANSWER_WAIT_AFTER_CLOSE_MS = 5 * 60_000;

/**
 * The SDK's stateless transport, sending error messages without the SDK's "MCP error <code>: "
 * prefix (http-protocol.ts), and telling when the requests it carries are answered: a stream closed
 * for polling must not end its server before the answer is sent (and stored).
 */
class GatewayTransport extends WebStandardStreamableHTTPServerTransport {
  private readonly unanswered = new Set<RequestId>();
  private settle: (() => void) | undefined;

  override async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    try {
      await super.send(withoutSdkErrorPrefix(message), options);
    } finally {
      if (
        'id' in message &&
        message.id !== undefined &&
        ('result' in message || 'error' in message) &&
        this.unanswered.delete(message.id) &&
        this.unanswered.size === 0
      )
        this.settle?.();
    }
  }

  /** Resolves once each of `ids` has had its answer sent, or after ANSWER_WAIT_AFTER_CLOSE_MS. */
  answered(ids: RequestId[]): Promise<void> {
    ids.forEach((id) => this.unanswered.add(id));
    if (this.unanswered.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ANSWER_WAIT_AFTER_CLOSE_MS);
      timer.unref();
      this.settle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** Answers an HTTP-level refusal; `done` tells the handler to stop. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly body: object,
    readonly headers: Record<string, string> = {},
  ) {
    super(`MCP request refused with ${status}`);
  }
}

/**
 * The MCP endpoint (Streamable HTTP, MCP 2025-06-18). The gateway owns everything HTTP and session
 * shaped here — Origin, Accept, Content-Type, protocol version, bearer token, Mcp-Session-Id,
 * scopes — and hands each request's JSON-RPC to a fresh SDK Server on a stateless SDK transport.
 */
export function mcpRoutes(ctx: McpRouteContext) {
  const resourceMetadata = `${ctx.publicBaseUrl}${PROTECTED_RESOURCE_METADATA_PATH}`;
  const unauthorized = (message: string) =>
    new Refusal(401, { error: 'unauthorized', message }, { 'www-authenticate': `Bearer resource_metadata="${resourceMetadata}"` });
  /**
   * 403 for a credential without the scope a call needs. Only an OAuth access token gets MCP's
   * step-up challenge (insufficient_scope + resource_metadata: the client re-authorizes asking for
   * the challenge's scope). An API key cannot step up, and the challenge sent a client holding one
   * (mcp-remote) into an OAuth consent that could not help: it gets the 403 and its body alone.
   */
  const forbidden = (principal: Principal, access: Access) =>
    new Refusal(
      403,
      { error: 'forbidden', message: insufficientScopeMessage(access) },
      principal.tokenType === OAUTH_TOKEN_TYPE
        ? { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scopeFor(access)}", resource_metadata="${resourceMetadata}"` }
        : {},
    );
  const badRequest = (message: string, id: JsonRpcId) => new Refusal(400, jsonRpcError(-32000, `Bad Request: ${message}`, id));
  const sessionNotFound = (id: JsonRpcId) => new Refusal(404, jsonRpcError(-32001, 'Session not found: initialize a new session', id));
  const anonymousInitializes = createRateLimiter(ctx.anonymousInitializeLimit, ctx.now);

  const checkOrigin = (req: FastifyRequest) => {
    const origin = req.headers.origin;
    if (!originAllowed(origin, ctx.allowedOrigins) && !(origin && ctx.conformance?.originAllowed(origin)))
      throw new Refusal(403, { error: 'forbidden', message: 'Origin not allowed' });
  };

  /** The caller behind the bearer token; `required` false lets initialize go without one. */
  async function authenticate(req: FastifyRequest, required: boolean): Promise<{ principal: Principal; token: string } | undefined> {
    if (ctx.conformance) return { principal: ctx.conformance.principal, token: '' };
    const header = req.headers.authorization;
    if (header === undefined) {
      if (required) throw unauthorized('Missing bearer token: send Authorization: Bearer <API key or access token>');
      return undefined;
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized('The Authorization header must be: Bearer <token>');
    const token = match[1]!;
    let principal: Principal | null;
    try {
      principal = await ctx.auth.introspect(token);
    } catch (err) {
      if (err instanceof AuthUnavailableError) {
        req.log.error({ err: err.message }, 'introspection failed');
        throw new Refusal(503, { error: 'unavailable', message: 'Authentication is unavailable; try again shortly' }, { 'retry-after': '2' });
      }
      throw err;
    }
    if (!principal) throw unauthorized('Invalid, revoked or expired token');
    if (!allows(principal.scope, 'read')) throw forbidden(principal, 'read');
    return { principal, token };
  }

  /** `requestId`: the JSON-RPC id the HTTP-level errors answer (null when there is none, as for DELETE). */
  async function requireSession(req: FastifyRequest, principal: Principal, requestId: JsonRpcId): Promise<{ id: string; protocolVersion: string }> {
    const id = req.headers[SESSION_HEADER];
    if (typeof id !== 'string' || id === '') throw badRequest('Mcp-Session-Id header is required', requestId);
    const check = await useSession(ctx.sessions, id, principal, ctx.now());
    if (!check.ok) {
      if (check.reason === 'foreign') req.log.warn('session used by another credential: refused as unknown');
      throw sessionNotFound(requestId);
    }
    return { id, protocolVersion: check.protocolVersion };
  }

  /**
   * MCP step-up: an OAuth access token (introspection's token_type "Bearer") refused for lacking a
   * scope is reported to auth, which then refuses the grant's next refresh once so the client asks
   * for a new authorization with the challenge's scope (docs/auth.md). API keys cannot step up.
   */
  async function recordStepUp(req: FastifyRequest, caller: { principal: Principal; token: string }, access: Access): Promise<void> {
    if (ctx.conformance || caller.principal.tokenType !== OAUTH_TOKEN_TYPE) return;
    try {
      await ctx.auth.requestStepUp(caller.token, scopeFor(access));
    } catch (err) {
      req.log.warn({ err: (err as Error).message }, 'step-up request to auth failed; the 403 goes out anyway');
    }
  }

  const send = (reply: FastifyReply, r: Refusal) => reply.code(r.status).headers(r.headers).send(r.body);

  /** workspace-api as the caller, resolved on first use (token exchange); a rejected credential drops its caches. */
  function callerApi(req: FastifyRequest, caller: { principal: Principal; token: string } | undefined) {
    let api: ReturnType<WorkspaceClient['as']> | undefined;
    return async () => {
      if (!caller) throw new CredentialRejectedError('no credential');
      try {
        api ??= ctx.workspace.as(await ctx.auth.internalToken(caller.token), req.id, async () => {
          try {
            return await ctx.auth.internalToken(caller.token, Audience.workflowEngine);
          } catch (err) {
            if (err instanceof CredentialRejectedError) ctx.auth.forget(caller.token);
            throw err;
          }
        });
      } catch (err) {
        if (err instanceof CredentialRejectedError) ctx.auth.forget(caller.token);
        throw err;
      }
      return api;
    };
  }

  // The 2026-07-28 path: the official SDK 2.x entry, strict (its legacy serving off: 2025 traffic is
  // this file's sessionful path). It owns the envelope, server/discover, the standard headers and the
  // cache hints; the gateway checks Origin, Accept, Content-Type, the token and the scope before it.
  // The factory gets the per-request Server the route built for that Request.
  const modernServers = new WeakMap<Request, () => ModernServer>();
  const modern = createMcpHandler(
    ({ requestInfo }) => {
      const build = requestInfo && modernServers.get(requestInfo);
      if (!build) throw new Error('no server built for this request');
      return build();
    },
    { legacy: 'reject' },
  );

  async function postModern(req: FastifyRequest, reply: FastifyReply, request: Request, parsed: unknown) {
    const caller = await authenticate(req, true);
    const messages = asMessages(parsed);
    const requestId = requestIdOf(parsed);
    for (const m of messages ?? []) {
      const tool = m.method === 'tools/call' ? TOOLS_BY_NAME.get(String(m.params?.name)) : undefined;
      if (tool && !allows(caller!.principal.scope, tool.access)) {
        await recordStepUp(req, caller!, tool.access);
        throw forbidden(caller!.principal, tool.access);
      }
      const problem = toolCallParamsProblem(m);
      if (problem) throw new Refusal(200, { jsonrpc: '2.0', id: requestId, error: { code: -32602, message: problem } });
    }
    const onError = (err: unknown) => req.log.error({ err }, 'MCP handler failed');
    modernServers.set(request, () =>
      ctx.conformance
        ? ctx.conformance.buildModernServer(onError)
        : buildModernMcpServer(
            { principal: caller?.principal, now: ctx.now, countToolCall, api: callerApi(req, caller), publicBaseUrl: ctx.publicBaseUrl },
            onError,
          ),
    );
    const response = await modern.fetch(request, { parsedBody: parsed });
    return sendWebResponse(reply, response, () => {});
  }

  async function post(req: FastifyRequest, reply: FastifyReply) {
    checkOrigin(req);
    if (!acceptsBoth(req.headers.accept)) {
      throw new Refusal(406, jsonRpcError(-32000, 'Not Acceptable: Accept must list both application/json and text/event-stream', requestIdOfText(req.body)));
    }
    if (!isJsonContentType(req.headers['content-type'])) {
      throw new Refusal(415, jsonRpcError(-32000, 'Unsupported Media Type: Content-Type must be application/json', requestIdOfText(req.body)));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(req.body as string);
    } catch {
      throw new Refusal(400, jsonRpcError(-32700, 'Parse error: the body is not valid JSON'));
    }
    if (mightBeModern(req)) {
      const request = webRequest(req);
      if (!(await isLegacyRequest(request, parsed))) return postModern(req, reply, request, parsed);
    }
    const requestId = requestIdOf(parsed);
    const messages = asMessages(parsed);
    if (!messages) throw new Refusal(400, jsonRpcError(-32600, `Invalid Request: ${invalidMessageReason(parsed)}`, requestId));
    const init = messages.find((m) => m.method === 'initialize');
    if (init && messages.length > 1) throw new Refusal(400, jsonRpcError(-32600, 'Invalid Request: initialize must be sent alone'));
    // The token before the protocol-version and batch checks: a client without one must meet the
    // 401 challenge (and start OAuth), not a 400 that sends an OAuth-capable client down the wrong
    // path. initialize alone goes without one (docs/mcp-gateway.md, "Authentication").
    const caller = await authenticate(req, !init);
    const header = headerOf(req, 'mcp-protocol-version');
    if (!init && requestProtocolVersion(header) === undefined) throw badRequest(`Unsupported MCP-Protocol-Version: ${header}`, requestId);

    if (init && !caller && !ctx.conformance) {
      const wait = anonymousInitializes.hit(req.ip);
      if (wait > 0) {
        throw new Refusal(
          429,
          { error: 'rate_limited', message: `Too many initialize requests without a token from this address; retry in ${wait} s or send a bearer token` },
          { 'retry-after': String(wait) },
        );
      }
    }
    let sessionId: string;
    let version: string;
    if (init) {
      sessionId = await openSession(init, caller?.principal);
      version = (init.params as { protocolVersion: string }).protocolVersion;
    } else {
      const session = await requireSession(req, caller!.principal, requestId);
      sessionId = session.id;
      version = sessionVersion(session.protocolVersion, header, requestId);
      if (Array.isArray(parsed) && version >= BATCHING_REMOVED_FROM) {
        throw new Refusal(400, jsonRpcError(-32600, `Invalid Request: MCP ${version} does not allow JSON-RPC batches; send one message per request`));
      }
      if (ctx.conformance?.deliverResponses(sessionId, messages)) return reply.code(202).send();
      for (const m of messages) {
        const tool = m.method === 'tools/call' ? TOOLS_BY_NAME.get(String(m.params?.name)) : undefined;
        if (tool && !allows(caller!.principal.scope, tool.access)) {
          await recordStepUp(req, caller!, tool.access);
          throw forbidden(caller!.principal, tool.access);
        }
      }
      // Answered here because the SDK would refuse these with a raw validator dump (-32603).
      for (const m of messages) {
        const problem = toolCallParamsProblem(m);
        if (problem) throw new Refusal(messages.length === 1 ? 200 : 400, { jsonrpc: '2.0', id: m.id ?? null, error: { code: -32602, message: problem } });
      }
    }
    await dispatch(req, reply, messages, caller, init ? sessionId : undefined, sessionId, version);
  }

  /**
   * The revision a request of a session runs at: the one its `initialize` negotiated, whatever the
   * request's header says (a header could otherwise switch a 2025-11-25 session to 2025-03-26 and
   * its batches). From 2025-06-18 on the header exists to carry that negotiated revision, so naming
   * another one is an invalid MCP-Protocol-Version → 400; an absent header means the negotiated one
   * (the spec's 2025-03-26 default is for servers with no other way to tell). 2025-03-26 and
   * 2024-11-05 define no header: on their sessions it is ignored.
   */
  function sessionVersion(negotiated: string, header: string | undefined, requestId: JsonRpcId): string {
    const named = header?.trim();
    if (named && named !== negotiated && negotiated >= PROTOCOL_VERSION_HEADER_FROM) {
      throw badRequest(`MCP-Protocol-Version ${named} does not match this session's negotiated version ${negotiated}`, requestId);
    }
    return negotiated;
  }

  async function openSession(init: JsonRpcMessage, principal: Principal | undefined): Promise<string> {
    const params = (init.params ?? {}) as { protocolVersion?: unknown; clientInfo?: { name?: unknown; version?: unknown } };
    // The SDK answers the newest revision it knows when asked for one it does not; we speak 2025-06-18.
    const protocolVersion = negotiateVersion(params.protocolVersion);
    init.params = { ...params, protocolVersion };
    const id = newSessionId();
    const now = ctx.now();
    await Promise.all([ctx.sessions.sweep(now), ctx.streamEvents?.sweep(now)]);
    await ctx.sessions.create(hashSessionId(id), {
      protocolVersion,
      clientName: typeof params.clientInfo?.name === 'string' ? params.clientInfo.name : undefined,
      clientVersion: typeof params.clientInfo?.version === 'string' ? params.clientInfo.version : undefined,
      principal,
      now,
    });
    sessionsOpened.inc();
    return id;
  }

  async function dispatch(
    req: FastifyRequest,
    reply: FastifyReply,
    messages: JsonRpcMessage[],
    caller: { principal: Principal; token: string } | undefined,
    newSession: string | undefined,
    sessionId: string,
    protocolVersion: string,
  ) {
    const server =
      ctx.conformance?.buildServer(sessionId, (err) => req.log.error({ err }, 'MCP handler failed')) ??
      buildMcpServer(
        {
          principal: caller?.principal,
          now: ctx.now,
          protocolVersion,
          countToolCall,
          api: callerApi(req, caller),
          publicBaseUrl: ctx.publicBaseUrl,
        },
        (err) => req.log.error({ err }, 'MCP handler failed'),
      );
    // The fixtures send progress, log messages and sampling/elicitation requests mid-call: only SSE carries them.
    const sse = Boolean(ctx.conformance) || prefersSse(req.headers.accept);
    // An SSE answer is resumable (MCP 2025-11-25 SSE polling): a priming event with `retry` first, and
    // every event stored, so a client whose stream closes reconnects with Last-Event-ID (getStream).
    // The SDK sends the priming event only to requests of 2025-11-25 or later; JSON answers store nothing.
    const resumable = sse && ctx.streamEvents !== undefined && protocolVersion >= SSE_POLLING_FROM;
    const transport = new GatewayTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !sse,
      ...(resumable ? { eventStore: ctx.streamEvents!.forSession(hashSessionId(sessionId)), retryInterval: SSE_RETRY_MS } : {}),
    });
    await server.connect(transport);
    // Counted before the request runs: an answer sent before the stream closes is already counted.
    const answered = transport.answered(messages.filter((m) => m.method !== undefined && m.id !== undefined && m.id !== null).map((m) => m.id!));
    const response = await transport.handleRequest(webRequest(req), { parsedBody: messages.length === 1 ? messages[0] : messages });
    // A long call (longer than proxies keep an idle stream) is turned into polling: its stream closes,
    // the answer is stored when it comes, and the client fetches it with GET and Last-Event-ID. Timed
    // from the stream's start: by then its priming event is stored and written (closing the stream
    // before that failed the request).
    const pollTimer = resumable
      ? setTimeout(
          () => messages.forEach((m) => m.id !== undefined && m.id !== null && transport.closeSSEStream(m.id)),
          ctx.ssePollAfterMs ?? DEFAULT_SSE_POLL_AFTER_MS,
        )
      : undefined;
    pollTimer?.unref();
    if (newSession && response.status === 200) reply.header('mcp-session-id', newSession);
    return sendWebResponse(reply, response, () => {
      clearTimeout(pollTimer);
      // A stream closed before its answer (polling, or the client went away): the answer is still
      // sent to the store when it comes, then the server ends. A non-resumable one ends now.
      void (resumable ? answered : Promise.resolve()).then(() => server.close()).catch(() => {});
    });
  }

  /**
   * GET with Last-Event-ID (MCP 2025-11-25 SSE polling): the events of one of this session's SSE
   * answers after that id, read from the shared store, so any replica answers. It waits up to
   * SSE_REPLAY_WAIT_MS for the answer itself, sends what there is, and closes; without the answer
   * yet, the client reconnects after `retry` with the last id it saw.
   */
  async function getStream(req: FastifyRequest, reply: FastifyReply, lastEventId: string) {
    const caller = await authenticate(req, true);
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      throw new Refusal(406, jsonRpcError(-32000, 'Not Acceptable: Accept must list text/event-stream'));
    }
    const { id: sessionId } = await requireSession(req, caller!.principal, null);
    const sessionHash = hashSessionId(sessionId);
    const store = ctx.streamEvents!;
    let gone = false;
    req.raw.on('close', () => (gone = true));
    const deadline = Date.now() + SSE_REPLAY_WAIT_MS;
    let events = await store.after(sessionHash, lastEventId);
    if (!events) throw new Refusal(400, jsonRpcError(-32000, 'Bad Request: Last-Event-ID names no stream of this session'));
    for (let pause = 25; !events.some((e) => isAnswer(e.message)) && !gone && Date.now() < deadline; pause = Math.min(pause * 2, 250)) {
      await new Promise((resolve) => setTimeout(resolve, pause));
      events = (await store.after(sessionHash, lastEventId)) ?? [];
    }
    const body = [`retry: ${SSE_RETRY_MS}\n\n`, ...events.map((e) => `event: message\nid: ${e.id}\ndata: ${JSON.stringify(e.message)}\n\n`)].join('');
    return reply
      .code(200)
      .header('content-type', 'text/event-stream')
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no')
      .send(body);
  }

  /** The request as a web-standard Request (headers only: the body is passed parsed). */
  function webRequest(req: FastifyRequest): Request {
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === 'string') headers.set(k, v);
      else if (Array.isArray(v)) headers.set(k, v.join(', '));
    }
    return new Request(`${ctx.publicBaseUrl}${MCP_PATH}`, { method: 'POST', headers });
  }

  /** Copies an SDK transport's web Response to the reply (SSE streamed); `close` runs when it is done. */
  async function sendWebResponse(reply: FastifyReply, response: Response, close: () => void) {
    reply.code(response.status);
    response.headers.forEach((value, key) => {
      if (key !== 'mcp-session-id' && key !== 'connection') reply.header(key, value);
    });
    if (!response.body) {
      close();
      return reply.send();
    }
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      reply.raw.on('close', close);
      return reply.send(Readable.fromWeb(response.body as never));
    }
    const text = await response.text();
    close();
    return reply.send(text);
  }

  async function remove(req: FastifyRequest, reply: FastifyReply) {
    checkOrigin(req);
    const caller = await authenticate(req, true);
    const { id } = await requireSession(req, caller!.principal, null);
    await ctx.sessions.delete(hashSessionId(id));
    sessionsClosed.inc();
    ctx.conformance?.sessionEnded(id);
    return reply.code(204).send();
  }

  return async (app: Service) => {
    // The body stays text until the checks above have run in MCP's order (406 before 415 before parse).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

    const guard = (fn: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>) => async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        return await fn(req, reply);
      } catch (err) {
        if (err instanceof Refusal) return send(reply, err);
        throw err;
      }
    };
    app.post(MCP_PATH, guard(post));
    app.delete(MCP_PATH, guard(remove));
    // GET resumes an SSE answer (Last-Event-ID, getStream). Otherwise there are no server-initiated
    // messages to stream: the spec allows 405 for GET. Without a token it is 401 first: mcp-remote
    // probes with an unauthenticated GET and starts its OAuth flow on the challenge.
    app.get(
      MCP_PATH,
      guard(async (req, reply) => {
        checkOrigin(req);
        const lastEventId = headerOf(req, 'last-event-id');
        if (lastEventId && ctx.streamEvents) return getStream(req, reply, lastEventId);
        await authenticate(req, true);
        return reply.code(405).header('allow', 'POST, DELETE').send(jsonRpcError(-32000, 'Method Not Allowed: this server does not offer a GET stream'));
      }),
    );
  };
}

/**
 * A cheap pre-filter before the SDK's classifier (isLegacyRequest): only a request that names a
 * 2026 revision in its header, or carries the envelope's protocol-version key, can be 2026-07-28.
 */
const mightBeModern = (req: FastifyRequest) =>
  (headerOf(req, 'mcp-protocol-version') ?? '') >= MCP_STATELESS_PROTOCOL_VERSION ||
  (typeof req.body === 'string' && req.body.includes('io.modelcontextprotocol/protocolVersion'));

const headerOf = (req: FastifyRequest, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};
