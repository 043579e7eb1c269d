import type { FastifyRequest } from 'fastify';
import { CONSOLE_CLIENT_HEADER, CONSOLE_SERVICE_CLIENT, HttpError, allows, insufficientScopeMessage, type Access, type Scope } from '@flowdesk/contracts';
import type { AuthContext } from '../context.ts';
import { authenticateApiKey, grantedScopes } from '../domain/api-keys.ts';
import { authenticateService, parseBasicAuth } from '../domain/service-clients.ts';
import { authenticateSession, looksLikeSessionToken, type AuthenticatedSession } from '../domain/sessions.ts';

/** Who a request of the /auth/v1 API acts for: one of the user's API keys, or a console session. */
export interface UserCredential {
  userId: string;
  /** As granted: `mcp:read` or `mcp:write`; a console session has full (write) scope. */
  scope: Scope;
  kind: 'api_key' | 'console_session';
  /** The key's id, or the session's. */
  id: string;
  /** Console sessions only. */
  session?: AuthenticatedSession;
}

const credentials = new WeakMap<FastifyRequest, UserCredential>();

/** The credential the request was authenticated with (set by requireUserKey / requireSession). */
export function credentialOf(req: FastifyRequest): UserCredential {
  const credential = credentials.get(req);
  if (!credential) throw new Error('route is missing requireUserKey');
  return credential;
}

/** The console session of the request (set by requireSession). */
export function sessionOf(req: FastifyRequest): AuthenticatedSession {
  const session = credentialOf(req).session;
  if (!session) throw new Error('route is missing requireSession');
  return session;
}

const CHALLENGE = 'Bearer realm="flowdesk"';

export const bearerOf = (req: FastifyRequest): string | undefined => /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];

const missing = () => new HttpError('unauthorized', 'Missing bearer token: send Authorization: Bearer <API key>', { 'www-authenticate': CHALLENGE });
const invalid = (what: 'session' | 'API key') =>
  new HttpError('unauthorized', what === 'session' ? 'Invalid, expired or revoked session' : 'Invalid or revoked API key', {
    'www-authenticate': `${CHALLENGE}, error="invalid_token"`,
  });

/**
 * A console session token is a cookie credential: the console edge passes it on as the bearer with its
 * own service credential beside it (CONSOLE_CLIENT_HEADER). From anyone else — a script that found a
 * token in a log, say — it is refused, so a leaked session cannot mint API keys that would outlive it.
 */
const fromConsoleEdge = (ctx: AuthContext, req: FastifyRequest): boolean => {
  const header = req.headers[CONSOLE_CLIENT_HEADER];
  return authenticateService(ctx.serviceClients, parseBasicAuth(typeof header === 'string' ? header : undefined)) === CONSOLE_SERVICE_CLIENT;
};
const sessionOutsideCookie = () =>
  new HttpError('unauthorized', 'A console session is accepted only from its cookie, through the console: use an API key', {
    'www-authenticate': `${CHALLENGE}, error="invalid_token"`,
  });

async function resolve(ctx: AuthContext, token: string): Promise<UserCredential | null> {
  if (looksLikeSessionToken(token)) {
    const session = await authenticateSession(ctx.prisma, token, ctx.now(), ctx.sessionPolicy);
    return session && { userId: session.user.id, scope: 'mcp:write', kind: 'console_session', id: session.sessionId, session };
  }
  const key = await authenticateApiKey(ctx.prisma, token, ctx.now());
  return key && { userId: key.userId, scope: key.scope, kind: 'api_key', id: key.keyId };
}

/**
 * onRequest hook for the /auth/v1 API: the user authenticates with one of their own API keys
 * (`Authorization: Bearer fdk_...`) or, through the console edge only, a console session (`Bearer
 * fds_...` with CONSOLE_CLIENT_HEADER, full scope). Runs before
 * the body is parsed, so an anonymous caller learns nothing from validation errors. A read key may
 * look, only a write credential may create or revoke: a read key that could mint a write key would
 * be a write key.
 */
export function requireUserKey(ctx: AuthContext, access: Access) {
  return async (req: FastifyRequest) => {
    const token = bearerOf(req);
    if (!token) throw missing();
    if (looksLikeSessionToken(token) && !fromConsoleEdge(ctx, req)) throw sessionOutsideCookie();
    const credential = await resolve(ctx, token);
    if (!credential) throw invalid(looksLikeSessionToken(token) ? 'session' : 'API key');
    if (!allows(grantedScopes(credential.scope), access)) {
      throw new HttpError('forbidden', insufficientScopeMessage(access), {
        'www-authenticate': `${CHALLENGE}, error="insufficient_scope", scope="mcp:write"`,
      });
    }
    credentials.set(req, credential);
  };
}

/** onRequest hook for what only a signed-in console user does (their session, password): a session token, nothing else. */
export function requireSession(ctx: AuthContext) {
  return async (req: FastifyRequest) => {
    const token = bearerOf(req);
    if (!token) throw missing();
    if (looksLikeSessionToken(token) && !fromConsoleEdge(ctx, req)) throw sessionOutsideCookie();
    const session = looksLikeSessionToken(token) ? await authenticateSession(ctx.prisma, token, ctx.now(), ctx.sessionPolicy) : null;
    if (!session) throw invalid('session');
    credentials.set(req, { userId: session.user.id, scope: 'mcp:write', kind: 'console_session', id: session.sessionId, session });
  };
}

/** onRequest hook for the owner's routes (users, invitations): a credential of the owner, with `access`. */
export function requireOwner(ctx: AuthContext, access: Access) {
  const base = requireUserKey(ctx, access);
  return async (req: FastifyRequest) => {
    await base(req);
    const credential = credentialOf(req);
    const role = credential.session?.user.role ?? (await ctx.prisma.user.findUnique({ where: { id: credential.userId }, select: { role: true } }))?.role;
    if (role !== 'owner') throw new HttpError('forbidden', 'Only the owner of this Flowdesk can manage people');
  };
}
