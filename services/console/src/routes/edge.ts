import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import {
  Audience,
  CONSOLE_CLIENT_HEADER,
  CurrentConsoleSession,
  HttpError,
  OpenedConsoleSession,
  allows,
  insufficientScopeMessage,
  type Access,
} from '@flowdesk/contracts';
import { AuthUnavailableError, CredentialRejectedError, type AuthClient, type Principal, type Service } from '@flowdesk/service-kit';
import type { Upstream, UpstreamAnswer } from '../adapters/upstream.ts';
import { SESSION_COOKIE, clearedSessionCookie, readCookie, sessionCookie } from '../domain/cookies.ts';
import { csrfTokenFor, csrfTokenMatches, isCrossOrigin, isStateChanging } from '../domain/csrf.ts';
import { EDGE_ACCOUNT_ROUTES, upstreamOf } from '../domain/upstreams.ts';
import { tokenSha256, type OpenStreams } from '../domain/open-streams.ts';
import { PassThrough } from 'node:stream';

export interface EdgeContext {
  /** Introspection and token exchange at auth, as the `console` service client. */
  auth: AuthClient;
  /** auth's HTTP API (/auth/v1): account routes, with the caller's own credential. */
  authApi: Upstream;
  /**
   * This service's HTTP Basic credential at auth, sent (as CONSOLE_CLIENT_HEADER) beside a browser's
   * session token: auth takes a session token as a bearer from the console edge only.
   */
  consoleClientAuthorization: string;
  workspace: Upstream;
  /** The workflow engine: the runs API (upstreams.ts routes its paths there). */
  engine: Upstream;
  /** Secure cookies when the public base URL is https. */
  secureCookies: boolean;
  /** Browser origins allowed to write (the public base URL's, plus configured ones). */
  allowedOrigins: ReadonlySet<string>;
  /** SSRF_ALLOWLIST (comma-separated entries, '' for none): GET /session hands it to the editor. */
  ssrfAllowlist?: string;
  now: () => Date;
  /** The streams being relayed, by credential: a revocation (event or sign-out here) ends them. */
  streams: OpenStreams;
  /**
   * How often an open stream's credential is introspected again (the introspection cache's TTL), so a
   * stream ends within that time even if no revocation event reaches this replica.
   */
  streamRecheckMs: number;
}

/** How a request proved who it is. */
interface Caller {
  token: string;
  principal: Principal;
  via: 'bearer' | 'cookie';
}

const SESSION_PREFIX = 'fds_';
const CHALLENGE = 'Bearer realm="flowdesk"';
const unauthorized = (message: string, error?: string) =>
  new HttpError('unauthorized', message, { 'www-authenticate': error ? `${CHALLENGE}, error="${error}"` : CHALLENGE });
const crossOrigin = () => new HttpError('forbidden', 'Cross-origin requests may not change anything here');
const badCsrf = () => new HttpError('forbidden', 'Missing or wrong X-CSRF-Token header: send the csrfToken of GET /api/v1/session with every change');

// What the edge passes on from the caller to a service, and back: nothing that identifies the caller
// (no Cookie, no Authorization, no X-Forwarded-For of the caller's own). Idempotency-Key: a retried or
// double-clicked Run now starts one run (the engine keys the run on it).
const FORWARDED_REQUEST_HEADERS = ['content-type', 'accept', 'accept-language', 'user-agent', 'if-none-match', 'if-match', 'idempotency-key'];
const RELAYED_RESPONSE_HEADERS = [
  'content-type',
  'cache-control',
  'etag',
  'last-modified',
  'location',
  'link',
  'retry-after',
  'www-authenticate',
  'content-disposition',
  'x-accel-buffering',
];

const isEventStream = (answer: UpstreamAnswer): boolean => /^text\/event-stream\b/i.test(String(answer.headers['content-type'] ?? ''));

const bodyOf = (req: FastifyRequest): Buffer | undefined => (Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : undefined);

/**
 * The public API at /api/v1 (docs/console.md, "The edge"): a console session (cookie + CSRF) or a
 * user's bearer credential in; an internal token minted for that user out, to workspace-api; the
 * caller's own credential only ever to auth, which issued it.
 */
export function edgeRoutes(ctx: EdgeContext) {
  return async (app: Service) => {
    // Bodies pass through untouched (JSON or not); each service validates its own.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

    const headersFor = (req: FastifyRequest, authorization?: string): Record<string, string> => {
      const out: Record<string, string> = {};
      for (const name of FORWARDED_REQUEST_HEADERS) {
        const v = req.headers[name];
        if (typeof v === 'string') out[name] = v;
      }
      out['x-request-id'] = req.id;
      // auth's login throttling counts per client address. The client is who this service believes
      // it is (req.ip: TRUST_PROXY, default the loopback front of the embedded start), sent as the
      // only entry, so auth trusts exactly one hop (us) and nothing a caller wrote reaches it.
      out['x-forwarded-for'] = req.ip;
      if (authorization) out.authorization = authorization;
      return out;
    };

    const relay = (reply: FastifyReply, answer: UpstreamAnswer) => {
      for (const name of RELAYED_RESPONSE_HEADERS) {
        const v = answer.headers[name];
        if (v !== undefined) reply.header(name, v);
      }
      reply.code(answer.status);
      if (answer.status === 204 || answer.status === 304) {
        void answer.body.dump();
        return reply.send();
      }
      // A stream (the runs stream's Server-Sent Events) is piped chunk by chunk as it arrives: nothing
      // here buffers or compresses a body, and a client that leaves destroys the upstream body, which
      // closes the upstream connection (the engine ends its stream).
      return reply.send(answer.body);
    };

    const callAuth = async (req: FastifyRequest, method: string, path: string, authorization?: string): Promise<UpstreamAnswer> => {
      const headers = headersFor(req, authorization);
      // A session token only ever comes from the cookie (a bearer one was refused in authenticate).
      if (authorization?.startsWith(`Bearer ${SESSION_PREFIX}`)) headers[CONSOLE_CLIENT_HEADER] = ctx.consoleClientAuthorization;
      try {
        return await ctx.authApi.request({ method, path, headers, body: bodyOf(req) });
      } catch {
        throw new HttpError('unavailable', 'The auth service is unavailable');
      }
    };

    const introspect = async (token: string): Promise<Principal | null> => {
      try {
        return await ctx.auth.introspect(token);
      } catch (err) {
        if (err instanceof AuthUnavailableError) throw new HttpError('unavailable', 'The auth service is unavailable');
        throw err;
      }
    };

    /** A browser write must come from this origin; refused before anything else is looked at. */
    const requireSameOrigin = (req: FastifyRequest) => {
      const h = { origin: req.headers.origin, secFetchSite: req.headers['sec-fetch-site'], host: req.headers.host };
      if (isCrossOrigin(h, ctx.allowedOrigins)) throw crossOrigin();
    };

    /** Who is calling: a bearer credential (never a session token), or else the session cookie. */
    const authenticate = async (req: FastifyRequest, reply: FastifyReply): Promise<Caller> => {
      const header = req.headers.authorization;
      const writes = isStateChanging(req.method);
      if (header !== undefined) {
        const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (!match) throw unauthorized('Send Authorization: Bearer <API key or OAuth access token>', 'invalid_request');
        const token = match[1]!;
        // A session token outside its cookie has leaked (a log, a script): it is not a credential here.
        if (token.startsWith(SESSION_PREFIX)) throw unauthorized('Console sessions are accepted only from their cookie; use an API key', 'invalid_token');
        const principal = await introspect(token);
        if (!principal) throw unauthorized('Invalid, expired or revoked credential', 'invalid_token');
        return { token, principal, via: 'bearer' };
      }
      const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
      if (!cookie) throw unauthorized('Sign in, or send Authorization: Bearer <API key>');
      if (writes) requireSameOrigin(req);
      const principal = cookie.startsWith(SESSION_PREFIX) ? await introspect(cookie) : null;
      if (!principal) {
        reply.header('set-cookie', clearedSessionCookie(ctx.secureCookies));
        throw unauthorized('Your session has ended: sign in again');
      }
      if (writes && !csrfTokenMatches(cookie, req.headers['x-csrf-token'] as string | undefined)) throw badCsrf();
      return { token: cookie, principal, via: 'cookie' };
    };

    const requireAccess = (caller: Caller, access: Access) => {
      if (!allows(caller.principal.scope, access)) {
        const scope = access === 'write' ? 'mcp:write' : 'mcp:read';
        throw new HttpError('forbidden', insufficientScopeMessage(access), {
          'www-authenticate': `${CHALLENGE}, error="insufficient_scope", scope="${scope}"`,
        });
      }
    };

    /** Answers that open a session (setup, signup, sign-in): the token goes into the cookie, never the body. */
    const openSession = async (req: FastifyRequest, reply: FastifyReply, path: string) => {
      requireSameOrigin(req);
      const previous = readCookie(req.headers.cookie, SESSION_COOKIE);
      const answer = await callAuth(req, 'POST', path);
      if (answer.status !== 201) return relay(reply, answer);
      const created = (await answer.body.json()) as { token: string; expiresAt: string; user: unknown };
      // Session fixation: whatever session this browser had ends; the new one has a new token.
      if (previous?.startsWith(SESSION_PREFIX) && previous !== created.token) {
        await callAuth(req, 'DELETE', '/auth/v1/sessions/current', `Bearer ${previous}`).then(
          (a) => a.body.dump(),
          () => {},
        );
      }
      reply.header('set-cookie', sessionCookie(created.token, { secure: ctx.secureCookies, expiresAt: new Date(created.expiresAt), now: ctx.now() }));
      reply.header('cache-control', 'no-store');
      return reply
        .code(201)
        .send({ user: created.user, expiresAt: created.expiresAt, csrfToken: csrfTokenFor(created.token), ssrfAllowlist: ctx.ssrfAllowlist ?? '' });
    };

    /** Ends the cookie's session (or all of the user's) at auth; the cookie goes whatever auth says. */
    const closeSession = async (req: FastifyRequest, reply: FastifyReply, path: string) => {
      const caller = await authenticate(req, reply);
      if (caller.via !== 'cookie') throw new HttpError('bad_request', 'Only a console session can be signed out; revoke API keys under /api/v1/api-keys');
      const answer = await callAuth(req, 'DELETE', path, `Bearer ${caller.token}`);
      await answer.body.dump();
      if (answer.status >= 500) throw new HttpError('unavailable', 'The auth service is unavailable');
      ctx.auth.forget(caller.token);
      ctx.streams.end({ userId: caller.principal.userId, credentialId: caller.principal.credentialId, tokenSha256: [tokenSha256(caller.token)] });
      // Everywhere: this replica's cached answers for the user's other sessions go now too (the
      // revocation event reaches every replica, but later), so none of them works a moment longer here.
      if (path === '/auth/v1/sessions') {
        const everySession = { userId: caller.principal.userId, credentialId: caller.principal.credentialId };
        ctx.auth.evict(everySession);
        ctx.streams.end(everySession);
      }
      reply.header('set-cookie', clearedSessionCookie(ctx.secureCookies));
      return reply.code(204).send();
    };

    /** GET /session: auth's current session of the cookie, plus the CSRF token. */
    const currentSession = async (req: FastifyRequest, reply: FastifyReply, path: string) => {
      const caller = await authenticate(req, reply);
      if (caller.via !== 'cookie') throw unauthorized('No console session: this route is for the console; API keys see themselves at /api/v1/profile');
      const answer = await callAuth(req, 'GET', path, `Bearer ${caller.token}`);
      if (answer.status !== 200) {
        if (answer.status === 401) reply.header('set-cookie', clearedSessionCookie(ctx.secureCookies));
        return relay(reply, answer);
      }
      const current = (await answer.body.json()) as object;
      reply.header('cache-control', 'no-store');
      return { ...current, csrfToken: csrfTokenFor(caller.token), ssrfAllowlist: ctx.ssrfAllowlist ?? '' };
    };

    // The routes the edge answers itself (domain/upstreams.ts): their answer schemas are the ones the OpenAPI document shows.
    const answers = {
      relay: { handle: async (req: FastifyRequest, reply: FastifyReply, path: string) => relay(reply, await callAuth(req, 'GET', path)), response: undefined },
      opens: { handle: openSession, response: { 201: OpenedConsoleSession } },
      closes: { handle: closeSession, response: { 204: Type.Null() } },
      current: { handle: currentSession, response: { 200: CurrentConsoleSession } },
    } as const;
    for (const route of EDGE_ACCOUNT_ROUTES) {
      const { handle, response } = answers[route.answer];
      app.route({
        method: route.method,
        url: route.path,
        ...(response ? { schema: { response } } : {}),
        handler: async (req, reply) => handle(req, reply, route.auth),
      });
    }

    app.all('/*', async (req, reply) => {
      const caller = await authenticate(req, reply);
      requireAccess(caller, isStateChanging(req.method) ? 'write' : 'read');
      const rest = req.url.slice(req.url.indexOf('/api/v1') + '/api/v1'.length);
      const { upstream, path } = upstreamOf(rest);
      if (upstream === 'auth') return relay(reply, await callAuth(req, req.method, path, `Bearer ${caller.token}`));
      let internal: string;
      try {
        internal = await ctx.auth.internalToken(caller.token, upstream === 'workflow-engine' ? Audience.workflowEngine : Audience.workspaceApi);
      } catch (err) {
        if (err instanceof CredentialRejectedError) {
          ctx.auth.forget(caller.token);
          throw unauthorized('Invalid, expired or revoked credential', 'invalid_token');
        }
        if (err instanceof AuthUnavailableError) throw new HttpError('unavailable', 'The auth service is unavailable');
        throw err;
      }
      let answer: UpstreamAnswer;
      try {
        const target = upstream === 'workflow-engine' ? ctx.engine : ctx.workspace;
        answer = await target.request({ method: req.method, path, headers: headersFor(req, `Bearer ${internal}`), body: bodyOf(req) });
      } catch {
        throw new HttpError('unavailable', upstream === 'workflow-engine' ? 'The workflow engine is unavailable' : 'The workspace API is unavailable');
      }
      if (isEventStream(answer)) return relay(reply, { ...answer, body: revocable(caller, answer.body) });
      return relay(reply, answer);
    });

    /**
     * A stream is authorized when it opens; this keeps it tied to its credential: it ends when a
     * revocation names the credential (an event, or a sign-out on this replica), and when a periodic
     * introspection (every streamRecheckMs) finds it no longer active. Ending closes the upstream
     * (the engine ends its stream) and finishes the answer normally; an EventSource then reconnects
     * and gets 401.
     */
    const revocable = (caller: Caller, upstreamBody: UpstreamAnswer['body']): UpstreamAnswer['body'] => {
      const out = new PassThrough();
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(recheck);
        forget();
        upstreamBody.unpipe(out);
        upstreamBody.destroy();
        out.end();
      };
      const forget = ctx.streams.add({
        userId: caller.principal.userId,
        credentialId: caller.principal.credentialId,
        tokenSha256: tokenSha256(caller.token),
        end,
      });
      const recheck = setInterval(() => {
        ctx.auth.introspect(caller.token).then(
          (principal) => {
            if (!principal) end();
          },
          // auth unreachable: the stream goes on; revocation events still end it.
          () => {},
        );
      }, ctx.streamRecheckMs);
      recheck.unref();
      upstreamBody.on('error', (err) => out.destroy(err));
      upstreamBody.pipe(out);
      // The client left (or the upstream ended): let go of the upstream and of the registration.
      out.on('close', () => {
        ended = true;
        clearInterval(recheck);
        forget();
        upstreamBody.destroy();
      });
      return Object.assign(out, { text: () => upstreamBody.text(), json: () => upstreamBody.json(), dump: () => upstreamBody.dump() });
    };
  };
}
