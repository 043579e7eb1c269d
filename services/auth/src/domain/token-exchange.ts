import {
  ACCESS_TOKEN_TYPE,
  Audience,
  INTERNAL_TOKEN_TTL_SECONDS,
  JWT_TOKEN_TYPE,
  SCOPES,
  USER_ID_TOKEN_TYPE,
  type TokenExchangeResponse,
} from '@flowdesk/contracts';
import { signInternalToken, type SigningKeys } from '@flowdesk/service-kit';
import { serviceSubject } from '@flowdesk/contracts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { authenticateApiKey, grantedScopes } from './api-keys.ts';
import { OAuthError } from './oauth-error.ts';
import { authenticateAccessToken } from './oauth/tokens.ts';
import { looksLike } from './oauth/secrets.ts';
import { findUserById } from './users.ts';
import { authenticateSession, looksLikeSessionToken, type SessionPolicy } from './sessions.ts';
import { CONSOLE_SERVICE_CLIENT } from '@flowdesk/contracts';

export interface ExchangeContext {
  prisma: PrismaClient;
  signingKeys: Pick<SigningKeys, 'privateKeyPem' | 'kid'>;
  /** Services allowed to obtain a token for any user by id (the workflow engine, for runs). */
  userIdExchangeClients: readonly string[];
  /** The MCP endpoint's URL: the audience an OAuth access token must have to be exchanged. */
  mcpResource: string;
  now: Date;
  sessionPolicy: SessionPolicy;
}

export interface ExchangeRequest {
  /** The authenticated calling service: becomes `azp`. */
  serviceId: string;
  subjectToken: string;
  subjectTokenType: string;
  audience: string | undefined;
  /** Optional narrowing (RFC 8693 `scope`); never more than the subject holds. */
  scope: string | undefined;
  /** RFC 8707 / 8693 `resource`: the protected resource the caller serves (default: the MCP endpoint). */
  resource?: string | undefined;
}

const AUDIENCES: readonly string[] = Object.values(Audience);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * RFC 8693: a service hands in the credential its caller presented and gets a short-lived internal
 * JWT for one downstream audience. The caller's credential itself never travels further.
 */
export async function exchangeToken(ctx: ExchangeContext, req: ExchangeRequest): Promise<TokenExchangeResponse> {
  if (!req.audience || !AUDIENCES.includes(req.audience)) {
    throw new OAuthError(400, 'invalid_target', `audience must be one of: ${AUDIENCES.join(', ')}`);
  }
  const subject = await resolveSubject(ctx, req);
  const scope = narrowScope(subject.scope, req.scope);
  const accessToken = signInternalToken(
    ctx.signingKeys,
    { sub: subject.userId, aud: req.audience, scope, azp: req.serviceId, ...(subject.clientId ? { client_id: subject.clientId } : {}) },
    { now: ctx.now.getTime(), ttlSeconds: INTERNAL_TOKEN_TTL_SECONDS },
  );
  return { access_token: accessToken, issued_token_type: JWT_TOKEN_TYPE, token_type: 'Bearer', expires_in: INTERNAL_TOKEN_TTL_SECONDS, scope };
}

async function resolveSubject(ctx: ExchangeContext, req: ExchangeRequest): Promise<{ userId: string; scope: string; clientId?: string }> {
  if (req.subjectTokenType === ACCESS_TOKEN_TYPE && looksLike('access', req.subjectToken)) {
    const token = await authenticateAccessToken(ctx.prisma, req.subjectToken, ctx.now);
    if (!token) throw new OAuthError(400, 'invalid_grant', 'The subject token is invalid, revoked or expired');
    // MCP security: never accept a token minted for another audience. The token must have been issued
    // for exactly the resource the calling service protects.
    if (token.audience !== (req.resource ?? ctx.mcpResource)) {
      throw new OAuthError(400, 'invalid_grant', 'The subject token was issued for another resource');
    }
    return { userId: token.userId, scope: token.scope, clientId: token.clientId };
  }
  if (req.subjectTokenType === ACCESS_TOKEN_TYPE && looksLikeSessionToken(req.subjectToken)) {
    // Only the console edge may turn a console session into an internal token; for anyone else it is
    // not a credential (the same answer as an unknown token).
    const session = req.serviceId === CONSOLE_SERVICE_CLIENT ? await authenticateSession(ctx.prisma, req.subjectToken, ctx.now, ctx.sessionPolicy) : null;
    if (!session) throw new OAuthError(400, 'invalid_grant', 'The subject token is invalid, revoked or expired');
    return { userId: session.user.id, scope: grantedScopes('mcp:write'), clientId: CONSOLE_SERVICE_CLIENT };
  }
  if (req.subjectTokenType === ACCESS_TOKEN_TYPE) {
    const key = await authenticateApiKey(ctx.prisma, req.subjectToken, ctx.now);
    if (!key) throw new OAuthError(400, 'invalid_grant', 'The subject token is invalid, revoked or expired');
    return { userId: key.userId, scope: grantedScopes(key.scope), clientId: key.keyId };
  }
  if (req.subjectTokenType === USER_ID_TOKEN_TYPE) {
    // Acting for a user without their credential is a privilege of a few services, not of every one.
    if (!ctx.userIdExchangeClients.includes(req.serviceId)) {
      throw new OAuthError(400, 'unauthorized_client', `${req.serviceId} may not obtain tokens by user id`);
    }
    const user = UUID.test(req.subjectToken) ? await findUserById(ctx.prisma, req.subjectToken) : null;
    if (!user || user.disabled) throw new OAuthError(400, 'invalid_grant', 'No such user, or the user is disabled');
    return { userId: user.id, scope: SCOPES.join(' ') };
  }
  throw new OAuthError(400, 'invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE} or ${USER_ID_TOKEN_TYPE}`);
}

/** The requested scopes when all are granted; the granted ones when none were asked for. */
export function narrowScope(granted: string, requested: string | undefined): string {
  if (requested === undefined || requested.trim() === '') return granted;
  const have = granted.split(' ');
  const want = [...new Set(requested.trim().split(/\s+/))];
  const extra = want.filter((s) => !have.includes(s));
  if (extra.length > 0) throw new OAuthError(400, 'invalid_scope', `The subject does not hold: ${extra.join(' ')}`);
  return SCOPES.filter((s) => want.includes(s)).join(' ');
}

/**
 * client_credentials for our services: an internal JWT with `sub` = `svc:<service id>` and scope
 * `internal`, for the few service routes that precede any user (they name the services they accept;
 * user routes refuse such a token). Never for registered OAuth clients.
 */
export function serviceToken(
  ctx: { signingKeys: Pick<SigningKeys, 'privateKeyPem' | 'kid'>; now: Date },
  serviceId: string,
  audience: string | undefined,
): TokenExchangeResponse {
  if (!audience || !AUDIENCES.includes(audience)) {
    throw new OAuthError(400, 'invalid_target', `audience must be one of: ${AUDIENCES.join(', ')}`);
  }
  const scope = 'internal';
  const accessToken = signInternalToken(
    ctx.signingKeys,
    { sub: serviceSubject(serviceId), aud: audience, scope, azp: serviceId },
    { now: ctx.now.getTime(), ttlSeconds: INTERNAL_TOKEN_TTL_SECONDS },
  );
  return { access_token: accessToken, issued_token_type: JWT_TOKEN_TYPE, token_type: 'Bearer', expires_in: INTERNAL_TOKEN_TTL_SECONDS, scope };
}
