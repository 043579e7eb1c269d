import type { PrismaClient } from '../../generated/prisma/client.ts';
import { OAuthError } from '../oauth-error.ts';
import type { OAuthClient } from './clients.ts';
import { recordGrantUse, revokeGrant, type Db } from './grants.ts';
import { ACCESS_TOKEN_TTL_SECONDS, REFRESH_REUSE_GRACE_SECONDS, REFRESH_TOKEN_TTL_SECONDS, STEP_UP_WINDOW_SECONDS } from './policy.ts';
import { hashSecret, looksLike, newSecret, openSuccessor, sealSuccessor, verifierMatches } from './secrets.ts';
import { tokenSha256, type OnRevoked } from '../revocations.ts';

/** RFC 6749 §5.1 answer of the code and refresh grants. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description);
const addSeconds = (d: Date, s: number) => new Date(d.getTime() + s * 1000);
const noRevocationEvents: OnRevoked = async () => {};

/**
 * The access tokens of some families that could still be cached as active somewhere (unexpired, not
 * revoked one by one), as the hashes the revocation event names. Refresh tokens are left out: no
 * gateway ever caches them as active.
 */
async function liveAccessTokenHashes(db: Db, families: { id?: string; authorizationCodeId?: string }, now: Date): Promise<string[]> {
  const rows = await db.oAuthToken.findMany({
    where: { kind: 'access', revokedAt: null, expiresAt: { gt: now }, family: families },
    select: { tokenHash: true },
  });
  return rows.map((r) => tokenSha256(r.tokenHash));
}

/** A new access + refresh pair in a family; only their hashes are stored. */
async function issuePair(db: Db, family: { id: string; scope: string }, now: Date): Promise<TokenResponse> {
  const access = newSecret('access');
  const refresh = newSecret('refresh');
  await db.oAuthToken.createMany({
    data: [
      { familyId: family.id, kind: 'access', tokenHash: access.hash, createdAt: now, expiresAt: addSeconds(now, ACCESS_TOKEN_TTL_SECONDS) },
      { familyId: family.id, kind: 'refresh', tokenHash: refresh.hash, createdAt: now, expiresAt: addSeconds(now, REFRESH_TOKEN_TTL_SECONDS) },
    ],
  });
  return { access_token: access.value, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS, refresh_token: refresh.value, scope: family.scope };
}

export interface CodeRedemption {
  code: string | undefined;
  redirectUri: string | undefined;
  codeVerifier: string | undefined;
  resource: string | undefined;
}

/**
 * RFC 6749 §4.1.3 + RFC 7636 §4.6: the code must be this client's, unexpired, unused, sent with the
 * same redirect_uri and the verifier of its S256 challenge. A code presented a second time is a
 * sign it leaked: it is refused and every token issued from it is revoked (RFC 6749 §4.1.2).
 */
export async function redeemAuthorizationCode(
  prisma: PrismaClient,
  client: OAuthClient,
  req: CodeRedemption,
  now: Date,
  onRevoked: OnRevoked = noRevocationEvents,
): Promise<TokenResponse> {
  if (!req.code) throw new OAuthError(400, 'invalid_request', 'code is required');
  if (!req.redirectUri) throw new OAuthError(400, 'invalid_request', 'redirect_uri is required');
  const code = looksLike('code', req.code)
    ? await prisma.oAuthAuthorizationCode.findUnique({ where: { codeHash: hashSecret(req.code) }, include: { grant: true } })
    : null;
  if (!code || code.clientId !== client.id) throw invalidGrant('The authorization code is invalid');
  if (code.usedAt) {
    // Hashes first: once the family is revoked nothing tells its live tokens apart from long-dead ones.
    const killed = await liveAccessTokenHashes(prisma, { authorizationCodeId: code.id }, now);
    const { count } = await prisma.oAuthTokenFamily.updateMany({ where: { authorizationCodeId: code.id, revokedAt: null }, data: { revokedAt: now } });
    if (count > 0 && killed.length > 0) {
      await onRevoked({ userId: code.grant.userId, kind: 'oauth_tokens', clientId: client.id, tokenSha256: killed, revokedAt: now });
    }
    throw invalidGrant('The authorization code was already used; the tokens issued from it are revoked');
  }
  if (code.expiresAt <= now) throw invalidGrant('The authorization code has expired');
  if (req.redirectUri !== code.redirectUri) throw invalidGrant('redirect_uri differs from the one of the authorization request');
  // Every code has an S256 challenge (authorize refuses requests without one), so a verifier can
  // never be accepted without an earlier challenge; a missing or wrong verifier is refused.
  if (!req.codeVerifier) throw invalidGrant('code_verifier is required (PKCE)');
  if (!code.codeChallenge || !verifierMatches(req.codeVerifier, code.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge');
  if (req.resource !== undefined && req.resource !== code.resource)
    throw new OAuthError(400, 'invalid_target', 'resource differs from the one of the authorization request');
  if (code.grant.revokedAt) throw invalidGrant('The authorization was revoked');

  return prisma.$transaction(async (tx) => {
    // Conditional: of two concurrent redemptions exactly one marks the code and gets tokens.
    const { count } = await tx.oAuthAuthorizationCode.updateMany({ where: { id: code.id, usedAt: null }, data: { usedAt: now } });
    if (count === 0) throw invalidGrant('The authorization code was already used');
    const family = await tx.oAuthTokenFamily.create({
      data: { grantId: code.grantId, authorizationCodeId: code.id, scope: code.scope, resource: code.resource, createdAt: now },
    });
    await recordGrantUse(tx, code.grantId, code.grant.lastUsedAt, now);
    return issuePair(tx, family, now);
  });
}

export interface RefreshRequest {
  refreshToken: string | undefined;
  scope: string | undefined;
  resource: string | undefined;
}

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every refresh token works once and is replaced.
 * Presented again within REFRESH_REUSE_GRACE_SECONDS it yields the same new pair (a client that
 * refreshed twice at once, or lost the answer); later, it is a replay: the whole grant is revoked,
 * so the newest refresh token, held by whoever is first, stops working too.
 */
export async function refreshTokens(
  prisma: PrismaClient,
  client: OAuthClient,
  req: RefreshRequest,
  now: Date,
  onRevoked: OnRevoked = noRevocationEvents,
): Promise<TokenResponse> {
  if (!req.refreshToken) throw new OAuthError(400, 'invalid_request', 'refresh_token is required');
  const presented = req.refreshToken;
  const find = () =>
    looksLike('refresh', presented)
      ? prisma.oAuthToken.findUnique({ where: { tokenHash: hashSecret(presented) }, include: { family: { include: { grant: true } } } })
      : Promise.resolve(null);
  const token = await find();
  if (!token || token.kind !== 'refresh' || token.family.grant.clientId !== client.id) throw invalidGrant('The refresh token is invalid');
  const { family } = token;
  if (token.revokedAt || family.revokedAt || family.grant.revokedAt) throw invalidGrant('The refresh token was revoked');
  if (token.expiresAt <= now) throw invalidGrant('The refresh token has expired');
  if (req.resource !== undefined && req.resource !== family.resource)
    throw new OAuthError(400, 'invalid_target', 'resource differs from the one the grant was issued for');
  if (req.scope !== undefined && req.scope.trim() !== '') {
    const extra = req.scope
      .trim()
      .split(/\s+/)
      .filter((s) => !family.scope.split(' ').includes(s));
    if (extra.length > 0) throw new OAuthError(400, 'invalid_scope', `Not granted: ${extra.join(' ')}`);
  }

  if (await consumeStepUp(prisma, family.grant, family.scope, now)) {
    // The token stays valid (another client instance may hold it); this one refresh is refused so
    // that the client starts a new authorization for the scope the resource asked for.
    throw invalidGrant(
      `A resource asked for ${family.grant.stepUpScope} and this grant has ${family.scope}: start a new authorization asking for ${family.grant.stepUpScope} (step-up)`,
    );
  }

  const replayed = async (rotatedAt: Date, sealed: Uint8Array | null): Promise<TokenResponse> => {
    const successor =
      sealed && now.getTime() - rotatedAt.getTime() <= REFRESH_REUSE_GRACE_SECONDS * 1000 ? openSuccessor<TokenResponse>(presented, sealed) : undefined;
    if (successor) return { ...successor, expires_in: Math.max(0, successor.expires_in - Math.floor((now.getTime() - rotatedAt.getTime()) / 1000)) };
    if (await prisma.$transaction((tx) => revokeGrant(tx, family.grantId, now))) {
      await onRevoked({ userId: family.grant.userId, kind: 'oauth_grant', clientId: client.id, revokedAt: now });
    }
    throw invalidGrant('The refresh token was already used: the authorization is revoked, sign in again');
  };
  if (token.rotatedAt) return replayed(token.rotatedAt, token.successorCipher);

  const rotated = await prisma
    .$transaction(async (tx) => {
      const pair = await issuePair(tx, family, now);
      // Conditional on rotated_at still being empty: of two concurrent refreshes one rotates, the other
      // finds the token rotated and gets the same pair through the grace window.
      const { count } = await tx.oAuthToken.updateMany({
        where: { id: token.id, rotatedAt: null },
        data: { rotatedAt: now, successorCipher: sealSuccessor(presented, pair) },
      });
      if (count === 0) throw new LostRace();
      await recordGrantUse(tx, family.grantId, family.grant.lastUsedAt, now);
      return pair;
    })
    .catch((err: unknown) => {
      if (err instanceof LostRace) return undefined;
      throw err;
    });
  if (rotated) return rotated;
  const again = await find();
  return replayed(again?.rotatedAt ?? now, again?.successorCipher ?? null);
}

class LostRace extends Error {}

/** Scopes of `wanted` that `granted` lacks (`mcp:write` implies nothing beyond itself here: both are listed). */
const missingScopes = (wanted: string, granted: string) => wanted.split(/\s+/).filter((s) => s && !granted.split(' ').includes(s));

/**
 * Whether a step-up is pending for this grant (asked within STEP_UP_WINDOW_SECONDS for a scope the
 * family lacks); clears it either way, conditionally, so of two concurrent refreshes only one is refused.
 */
async function consumeStepUp(
  prisma: PrismaClient,
  grant: { id: string; stepUpScope: string | null; stepUpRequestedAt: Date | null },
  familyScope: string,
  now: Date,
): Promise<boolean> {
  if (!grant.stepUpScope || !grant.stepUpRequestedAt) return false;
  const { count } = await prisma.oAuthGrant.updateMany({
    where: { id: grant.id, stepUpRequestedAt: grant.stepUpRequestedAt },
    data: { stepUpScope: null, stepUpRequestedAt: null },
  });
  const fresh = now.getTime() - grant.stepUpRequestedAt.getTime() <= STEP_UP_WINDOW_SECONDS * 1000;
  return count > 0 && fresh && missingScopes(grant.stepUpScope, familyScope).length > 0;
}

/**
 * MCP step-up (docs/auth.md): the resource server refused `token` for lacking `scope`. The official
 * SDK answers such a 403 by refreshing, and a refresh carries no scope (and could never widen it,
 * RFC 6749 §6), so auth remembers the request on the grant and refuses the grant's next refresh
 * once with invalid_grant: the SDK then drops its tokens and starts a new authorization with the
 * challenge's scope. False when the token is not a live OAuth access token or already has the scope.
 */
export async function requestStepUp(prisma: PrismaClient, token: string, scope: string, now: Date): Promise<boolean> {
  const info = await authenticateAccessToken(prisma, token, now);
  if (!info || missingScopes(scope, info.scope).length === 0) return false;
  await prisma.oAuthGrant.updateMany({ where: { id: info.grantId, revokedAt: null }, data: { stepUpScope: scope, stepUpRequestedAt: now } });
  return true;
}

export interface AccessTokenInfo {
  userId: string;
  clientId: string;
  grantId: string;
  scope: string;
  /** RFC 8707 resource the token was issued for: its audience. */
  audience: string;
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * The grant behind a presented OAuth access token, or null when it is malformed, unknown, expired,
 * revoked, or its family or grant are: Disconnect takes effect on the very next call (nothing cached).
 */
export async function authenticateAccessToken(prisma: PrismaClient, token: string, now: Date): Promise<AccessTokenInfo | null> {
  if (!looksLike('access', token)) return null;
  const row = await prisma.oAuthToken.findUnique({
    where: { tokenHash: hashSecret(token) },
    include: { family: { include: { grant: { include: { user: { select: { disabledAt: true } } } } } } },
  });
  if (!row || row.kind !== 'access' || row.revokedAt || row.expiresAt <= now || row.family.revokedAt || row.family.grant.revokedAt) return null;
  if (row.family.grant.user.disabledAt) return null;
  const { grant } = row.family;
  await recordGrantUse(prisma, grant.id, grant.lastUsedAt, now);
  return {
    userId: grant.userId,
    clientId: grant.clientId,
    grantId: grant.id,
    scope: row.family.scope,
    audience: row.family.resource,
    issuedAt: row.createdAt,
    expiresAt: row.expiresAt,
  };
}

/**
 * RFC 7009 §2.1: a refresh token takes its family (and so the access tokens issued with it) along;
 * an access token goes alone. Tokens of other clients, unknown or malformed ones: nothing happens,
 * and the answer is the same 200, so the endpoint tells nobody which tokens exist.
 */
export async function revokeToken(
  prisma: PrismaClient,
  client: OAuthClient,
  token: string | undefined,
  now: Date,
  onRevoked: OnRevoked = noRevocationEvents,
): Promise<void> {
  if (!token || !(looksLike('access', token) || looksLike('refresh', token))) return;
  const row = await prisma.oAuthToken.findUnique({ where: { tokenHash: hashSecret(token) }, include: { family: { include: { grant: true } } } });
  if (!row || row.family.grant.clientId !== client.id) return;
  let killed: string[];
  if (row.kind === 'refresh') {
    killed = await liveAccessTokenHashes(prisma, { id: row.familyId }, now);
    const { count } = await prisma.oAuthTokenFamily.updateMany({ where: { id: row.familyId, revokedAt: null }, data: { revokedAt: now } });
    if (count === 0) killed = [];
  } else {
    const { count } = await prisma.oAuthToken.updateMany({ where: { id: row.id, revokedAt: null }, data: { revokedAt: now } });
    killed = count > 0 ? [tokenSha256(row.tokenHash)] : [];
  }
  // Only what this call actually revoked: a second revocation of the same token announces nothing.
  if (killed.length > 0) await onRevoked({ userId: row.family.grant.userId, kind: 'oauth_tokens', clientId: client.id, tokenSha256: killed, revokedAt: now });
}
