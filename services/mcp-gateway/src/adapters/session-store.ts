import type { Database } from '@flowdesk/db';
import type { PrismaClient } from './db.ts';
import { SESSION_IDLE_MS, UNBOUND_SESSION_IDLE_MS, sessionUse, type Principal, type SessionBinding, type SessionStore } from '../domain/sessions.ts';

type SessionRow = { user_id: string | null; credential_id: string | null; last_seen_at: Date | string; protocol_version: string };
const binding = (row: SessionRow): SessionBinding => ({
  userId: row.user_id,
  credentialId: row.credential_id,
  lastSeenAt: new Date(row.last_seen_at),
  protocolVersion: row.protocol_version,
});

/** Sessions in Postgres (schema gateway), shared by every replica. `exec` runs the per-request check. */
export function prismaSessionStore(prisma: PrismaClient, exec: Database['exec']): SessionStore {
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
      const cutoff = new Date(now.getTime() - SESSION_IDLE_MS);
      // Every check reads the row, so a DELETE or an expiry on any replica is seen by the next request
      // on every other (on Postgres nothing about a session is kept in a process; session-cache.ts is
      // for PGlite only). Only a read: most requests write nothing (sessionUse, SESSION_TOUCH_INTERVAL_MS). Plain
      // SQL rather than Prisma on this hot statement: Prisma doubled its cost (0.65 → 0.32 ms on PGlite).
      const { rows } = await exec(
        `SELECT "user_id"::text AS user_id, "credential_id", "last_seen_at", "protocol_version"
         FROM "gateway"."mcp_session" WHERE "id_hash" = $1 AND "last_seen_at" > $2`,
        [idHash, cutoff],
      );
      const row = rows[0] as SessionRow | undefined;
      if (!row) return undefined;
      const found = binding(row);
      const use = sessionUse(found.lastSeenAt, now, found.userId !== null);
      if (use === 'expired') return undefined;
      if (use === 'recorded') return found;
      // Record the use, checking liveness again in the same statement: a session that expired or was
      // deleted since the read is not resurrected, and a later time another replica wrote is kept.
      const touched = await exec(
        `UPDATE "gateway"."mcp_session" SET "last_seen_at" = GREATEST("last_seen_at", $3)
         WHERE "id_hash" = $1 AND "last_seen_at" > $2 AND ("user_id" IS NOT NULL OR "last_seen_at" > $4)
         RETURNING "user_id"::text AS user_id, "credential_id", "last_seen_at", "protocol_version"`,
        [idHash, cutoff, now, new Date(now.getTime() - UNBOUND_SESSION_IDLE_MS)],
      );
      const again = touched.rows[0] as SessionRow | undefined;
      return again ? binding(again) : undefined;
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
      await prisma.mcpSession.deleteMany({
        where: {
          OR: [
            { lastSeenAt: { lte: new Date(now.getTime() - SESSION_IDLE_MS) } },
            { userId: null, lastSeenAt: { lte: new Date(now.getTime() - UNBOUND_SESSION_IDLE_MS) } },
          ],
        },
      });
    },
  };
}
