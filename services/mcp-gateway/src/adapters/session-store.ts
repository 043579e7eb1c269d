import type { PrismaClient } from './db.ts';
import { SESSION_IDLE_MS, type Principal, type SessionBinding, type SessionStore } from '../domain/sessions.ts';

/** Sessions in Postgres (schema gateway), shared by every replica. */
export function prismaSessionStore(prisma: PrismaClient): SessionStore {
  return {
    async create(idHash, s) {
      await prisma.mcpSession.create({
        data: {
          idHash,
          protocolVersion: s.protocolVersion,
          clientName: s.clientName?.slice(0, 200) ?? null,
          clientVersion: s.clientVersion?.slice(0, 100) ?? null,
          userId: s.principal?.userId ?? null,
          credentialId: s.principal?.credentialId ?? null,
          createdAt: s.now,
          lastSeenAt: s.now,
        },
      });
    },
    async touch(idHash, now) {
      // Check and touch in one statement: one round trip per request, and two replicas touching
      // the same session cannot resurrect it once it expired.
      const cutoff = new Date(now.getTime() - SESSION_IDLE_MS);
      const rows = await prisma.$queryRaw<{ user_id: string | null; credential_id: string | null }[]>`
        UPDATE "gateway"."mcp_session" SET "last_seen_at" = ${now}
        WHERE "id_hash" = ${idHash} AND "last_seen_at" > ${cutoff}
        RETURNING "user_id"::text AS user_id, "credential_id"`;
      const row = rows[0];
      return row ? ({ userId: row.user_id, credentialId: row.credential_id } satisfies SessionBinding) : undefined;
    },
    async bind(idHash, p: Principal) {
      const { count } = await prisma.mcpSession.updateMany({ where: { idHash, userId: null }, data: { userId: p.userId, credentialId: p.credentialId } });
      return count === 1;
    },
    async delete(idHash) {
      const { count } = await prisma.mcpSession.deleteMany({ where: { idHash } });
      return count === 1;
    },
    async sweep(now) {
      await prisma.mcpSession.deleteMany({ where: { lastSeenAt: { lte: new Date(now.getTime() - SESSION_IDLE_MS) } } });
    },
  };
}
