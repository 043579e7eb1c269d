import { notFound, type ApiKey, type KeyAccess, type Scope } from '@flowdesk/contracts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { generateKeySecret, hashKeySecret, looksLikeApiKey, secretMatches } from './api-key-secret.ts';

/** last_used_at is written at most this often per key: one write per request would make every read a write. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export const scopeOfAccess = (access: KeyAccess): Scope => (access === 'write' ? 'mcp:write' : 'mcp:read');

/** What a credential grants, spelled out: mcp:write includes reads, so it is granted as both. */
export const grantedScopes = (scope: string): string => (scope === 'mcp:write' ? 'mcp:read mcp:write' : 'mcp:read');

interface ApiKeyRow {
  id: string;
  name: string;
  scope: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  name: row.name,
  scope: row.scope as Scope,
  prefix: row.prefix,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
});

const listed = { id: true, name: true, scope: true, prefix: true, createdAt: true, lastUsedAt: true } as const;

/** Creates a key; the returned secret exists nowhere else afterwards. */
export async function createApiKey(prisma: PrismaClient, input: { userId: string; name: string; scope: Scope }): Promise<{ key: ApiKey; secret: string }> {
  const { secret, hash, prefix } = generateKeySecret();
  const row = await prisma.apiKey.create({
    data: { userId: input.userId, name: input.name.trim(), scope: input.scope, prefix, secretHash: new Uint8Array(hash) },
    select: listed,
  });
  return { key: toApiKey(row), secret };
}

/** The user's keys that still work, newest first. Revoked keys are gone from every list. */
export async function listApiKeys(prisma: PrismaClient, userId: string): Promise<ApiKey[]> {
  const rows = await prisma.apiKey.findMany({
    where: { userId, revokedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: listed,
  });
  return rows.map(toApiKey);
}

/** Revokes one of the user's keys. Another user's key, an unknown or an already revoked one: 404 alike. */
export async function revokeApiKey(prisma: PrismaClient, userId: string, id: string, now: Date): Promise<void> {
  const { count } = await prisma.apiKey.updateMany({ where: { id, userId, revokedAt: null }, data: { revokedAt: now } });
  if (count === 0) throw notFound('API key');
}

export interface AuthenticatedKey {
  keyId: string;
  userId: string;
  /** As stored: `mcp:read` or `mcp:write`. */
  scope: Scope;
  createdAt: Date;
}

/**
 * The key behind a presented secret, or null when it is malformed, unknown or revoked. Revocation
 * takes effect on the very next call: nothing is cached. Records the use (see LAST_USED_RESOLUTION_MS).
 */
export async function authenticateApiKey(
  prisma: PrismaClient,
  secret: string,
  now: Date,
  options: { recordUse?: boolean } = {},
): Promise<AuthenticatedKey | null> {
  if (!looksLikeApiKey(secret)) return null;
  // Found by its hash (a unique index), then compared in constant time: the lookup's timing depends
  // only on a hash the caller cannot steer towards a stored one.
  const row = await prisma.apiKey.findUnique({
    where: { secretHash: new Uint8Array(hashKeySecret(secret)) },
    include: { user: { select: { disabledAt: true } } },
  });
  // A disabled user's keys stop working with the user (and start again if the user is enabled).
  if (!row || row.revokedAt || row.user.disabledAt || !secretMatches(secret, row.secretHash)) return null;
  if (options.recordUse === false) return toAuthenticated(row);
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    // Conditional, so concurrent requests of one key write once.
    await prisma.apiKey.updateMany({
      where: { id: row.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }] },
      data: { lastUsedAt: now },
    });
  }
  return toAuthenticated(row);
}

const toAuthenticated = (row: { id: string; userId: string; scope: string; createdAt: Date }): AuthenticatedKey => ({
  keyId: row.id,
  userId: row.userId,
  scope: row.scope as Scope,
  createdAt: row.createdAt,
});
