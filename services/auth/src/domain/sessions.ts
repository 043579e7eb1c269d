import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { CONSOLE_SESSION_PREFIX } from '@flowdesk/contracts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { publicUser, type User } from './users.ts';
import { tokenSha256 } from './revocations.ts';

/**
 * Web console sessions (docs/auth.md, "Accounts and console sessions"): an opaque `fds_` token of 32
 * random bytes (base64url), stored as its SHA-256 only. A session dies at its absolute expiry, after
 * the idle time without use, on sign-out, sign-out everywhere, a password change (the other sessions)
 * or when its user is disabled. Its use is written at most once a minute.
 */
export interface SessionPolicy {
  idleTtlMs: number;
  absoluteTtlMs: number;
}

export const DEFAULT_SESSION_POLICY: SessionPolicy = { idleTtlMs: 7 * 24 * 60 * 60_000, absoluteTtlMs: 30 * 24 * 60 * 60_000 };
export const SESSION_LAST_USED_RESOLUTION_MS = 60_000;

const RANDOM_BYTES = 32;
const FORMAT = new RegExp(`^${CONSOLE_SESSION_PREFIX}_[A-Za-z0-9_-]{43}$`);

export const looksLikeSessionToken = (token: string | undefined): token is string => typeof token === 'string' && FORMAT.test(token);
const hashToken = (token: string) => new Uint8Array(createHash('sha256').update(token, 'utf8').digest());

export interface NewSession {
  id: string;
  token: string;
  createdAt: Date;
  expiresAt: Date;
}

/** A new session: a new token on every sign-in (no fixation: nothing the browser had before is reused). */
export async function createSession(prisma: PrismaClient, userId: string, now: Date, policy: SessionPolicy): Promise<NewSession> {
  const token = `${CONSOLE_SESSION_PREFIX}_${randomBytes(RANDOM_BYTES).toString('base64url')}`;
  const expiresAt = new Date(now.getTime() + policy.absoluteTtlMs);
  const row = await prisma.consoleSession.create({ data: { userId, tokenHash: hashToken(token), createdAt: now, lastUsedAt: now, expiresAt } });
  return { id: row.id, token, createdAt: row.createdAt, expiresAt };
}

export interface AuthenticatedSession {
  sessionId: string;
  user: User;
  createdAt: Date;
  expiresAt: Date;
  idleExpiresAt: Date;
  /** base64url SHA-256 of the token, as revocation events name it. */
  tokenSha256: string;
}

const idleExpiry = (lastUsedAt: Date, expiresAt: Date, policy: SessionPolicy) =>
  new Date(Math.min(expiresAt.getTime(), lastUsedAt.getTime() + policy.idleTtlMs));

/** The live session behind a token, or null (malformed, unknown, expired, idle too long, revoked, user disabled). */
export async function authenticateSession(
  prisma: PrismaClient,
  token: string | undefined,
  now: Date,
  policy: SessionPolicy,
  options: { recordUse?: boolean } = {},
): Promise<AuthenticatedSession | null> {
  if (!looksLikeSessionToken(token)) return null;
  const hash = hashToken(token);
  const row = await prisma.consoleSession.findUnique({ where: { tokenHash: hash }, include: { user: true } });
  if (!row || !timingSafeEqual(row.tokenHash, hash) || row.revokedAt || row.user.disabledAt) return null;
  let idleExpiresAt = idleExpiry(row.lastUsedAt, row.expiresAt, policy);
  if (row.expiresAt <= now || idleExpiresAt <= now) return null;
  if (options.recordUse !== false && now.getTime() - row.lastUsedAt.getTime() >= SESSION_LAST_USED_RESOLUTION_MS) {
    // Conditional, so concurrent requests of one session write once.
    await prisma.consoleSession.updateMany({
      where: { id: row.id, lastUsedAt: { lte: new Date(now.getTime() - SESSION_LAST_USED_RESOLUTION_MS) } },
      data: { lastUsedAt: now },
    });
    idleExpiresAt = idleExpiry(now, row.expiresAt, policy);
  }
  return {
    sessionId: row.id,
    user: publicUser(row.user),
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    idleExpiresAt,
    tokenSha256: tokenSha256(row.tokenHash),
  };
}

/**
 * Revokes sessions of a user: one (`only`), or all but one (`except`), or all. Returns the token
 * hashes that this call revoked (base64url), for the revocation event.
 */
export async function revokeSessions(prisma: PrismaClient, userId: string, now: Date, which: { only?: string; except?: string } = {}): Promise<string[]> {
  const where = {
    userId,
    revokedAt: null,
    expiresAt: { gt: now },
    ...(which.only ? { id: which.only } : {}),
    ...(which.except ? { id: { not: which.except } } : {}),
  };
  return prisma.$transaction(async (tx) => {
    const rows = await tx.consoleSession.findMany({ where, select: { id: true, tokenHash: true } });
    if (rows.length === 0) return [];
    await tx.consoleSession.updateMany({ where: { id: { in: rows.map((r) => r.id) }, revokedAt: null }, data: { revokedAt: now } });
    return rows.map((r) => tokenSha256(r.tokenHash));
  });
}
