import type { PrismaClient } from '../../generated/prisma/client.ts';
import { LAST_USED_RESOLUTION_MS } from '../api-keys.ts';

/** Something Prisma can run queries on: the client itself or an interactive transaction. */
export type Db = Pick<PrismaClient, 'oAuthGrant' | 'oAuthTokenFamily' | 'oAuthToken' | 'oAuthAuthorizationCode' | 'oAuthConsentRequest' | 'oAuthClient'>;

/**
 * The live grant of a user for a client, with the scopes just approved. A consent replaces the
 * scopes (the user may approve less than before); after a Disconnect a new grant starts.
 */
export async function upsertGrant(db: Db, userId: string, clientId: string, scope: string, now: Date): Promise<string> {
  const live = await db.oAuthGrant.findFirst({ where: { userId, clientId, revokedAt: null } });
  if (live) {
    // A consent answers any pending step-up request.
    await db.oAuthGrant.update({ where: { id: live.id }, data: { scope, stepUpScope: null, stepUpRequestedAt: null } });
    return live.id;
  }
  return (await db.oAuthGrant.create({ data: { userId, clientId, scope, createdAt: now } })).id;
}

/**
 * Disconnect, or the answer to a replayed refresh token: the grant and every family under it die in
 * one statement each. Token checks look at the grant too, so even a family missed here is dead.
 */
export async function revokeGrant(db: Db, grantId: string, now: Date): Promise<boolean> {
  const { count } = await db.oAuthGrant.updateMany({ where: { id: grantId, revokedAt: null }, data: { revokedAt: now } });
  await db.oAuthTokenFamily.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: now } });
  return count > 0;
}

/** Last used, at most once a minute per grant (like API keys), so reads do not each become a write. */
export async function recordGrantUse(db: Db, grantId: string, lastUsedAt: Date | null, now: Date): Promise<void> {
  if (lastUsedAt && now.getTime() - lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
  await db.oAuthGrant.updateMany({
    where: { id: grantId, OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }] },
    data: { lastUsedAt: now },
  });
}

export interface ConnectedClient {
  grantId: string;
  clientName: string;
  scope: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** The user's live grants, newest first: the OAuth half of Connected Apps. */
export async function listGrants(prisma: PrismaClient, userId: string): Promise<ConnectedClient[]> {
  const rows = await prisma.oAuthGrant.findMany({
    where: { userId, revokedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    include: { client: { select: { name: true } } },
  });
  return rows.map((r) => ({ grantId: r.id, clientName: r.client.name, scope: r.scope, createdAt: r.createdAt, lastUsedAt: r.lastUsedAt }));
}

/**
 * Disconnect one of the user's grants; null when it is not theirs, unknown or already revoked (or a
 * concurrent Disconnect won). The OAuth client id is what the revocation event names.
 */
export async function disconnectGrant(prisma: PrismaClient, userId: string, grantId: string, now: Date): Promise<{ clientId: string } | null> {
  const grant = await prisma.oAuthGrant.findFirst({ where: { id: grantId, userId, revokedAt: null }, select: { id: true, clientId: true } });
  if (!grant) return null;
  const revoked = await prisma.$transaction((tx) => revokeGrant(tx, grant.id, now));
  return revoked ? { clientId: grant.clientId } : null;
}
