import type { Database } from '@flowdesk/db';
import { sessionUse, type SessionBinding, type SessionStore } from '../domain/sessions.ts';

/** Entries kept at most; past that the oldest go (a miss only costs a database read). */
const MAX_ENTRIES = 10_000;

interface CacheState {
  entries: Map<string, SessionBinding>;
  /**
   * Bumped after every write that can end or rebind a session (delete, bind, sweep). A database read
   * that overlapped one may predate it: its answer is used for its own request but not cached.
   */
  generation: number;
}

/** One state per database object: every gateway built on the same PGlite shares it. */
const states = new WeakMap<Database, CacheState>();

/**
 * A write-through copy of the sessions in this process's memory, so a request's session check costs
 * no database round trip. Correct only where every gateway replica that can touch the sessions runs
 * in this process and goes through this same state: a database only this process can open, i.e.
 * PGlite (one process by nature; the embedded start also locks its data folder). The state is keyed
 * by the Database object, so gateways on one PGlite (the tests run two) see one another's DELETEs at
 * once. On Postgres another process may run a replica: there every request reads the row instead.
 *
 * The database stays the record (a restart finds the sessions there) and the rules are the store's:
 * the idle hour counts from the recorded use, which is written every SESSION_TOUCH_INTERVAL_MS (sessionUse).
 */
export function inProcessSessionCache(db: Database, store: SessionStore): SessionStore {
  if (db.kind !== 'pglite') throw new Error('the in-process session cache needs a database only this process can open (PGlite)');
  let state = states.get(db);
  if (!state) states.set(db, (state = { entries: new Map(), generation: 0 }));
  const s = state;
  const remember = (idHash: string, b: SessionBinding) => {
    if (s.entries.size >= MAX_ENTRIES && !s.entries.has(idHash)) s.entries.delete(s.entries.keys().next().value!);
    s.entries.set(idHash, b);
  };
  /** After a write that can end or rebind a session: drop the entry and any overlapping read's answer. */
  const invalidate = (idHash?: string) => {
    s.generation++;
    if (idHash) s.entries.delete(idHash);
  };

  return {
    async create(idHash, session) {
      await store.create(idHash, session);
      remember(idHash, {
        userId: session.principal?.userId ?? null,
        credentialId: session.principal?.credentialId ?? null,
        lastSeenAt: session.now,
        protocolVersion: session.protocolVersion,
      });
    },
    async touch(idHash, now) {
      const hit = s.entries.get(idHash);
      if (hit) {
        // The store's own rule on the recorded use (sessionUse): expired, or nothing to write yet.
        const use = sessionUse(hit.lastSeenAt, now, hit.userId !== null);
        if (use === 'expired') return undefined;
        if (use === 'recorded') return hit;
      }
      const generation = s.generation;
      const fresh = await store.touch(idHash, now);
      if (!fresh) s.entries.delete(idHash);
      else if (generation === s.generation) remember(idHash, fresh);
      return fresh;
    },
    async bind(idHash, principal) {
      try {
        return await store.bind(idHash, principal);
      } finally {
        invalidate(idHash);
      }
    },
    async delete(idHash) {
      try {
        return await store.delete(idHash);
      } finally {
        invalidate(idHash);
      }
    },
    async sweep(now) {
      await store.sweep(now);
      invalidate();
      for (const [idHash, b] of s.entries) if (sessionUse(b.lastSeenAt, now, b.userId !== null) === 'expired') s.entries.delete(idHash);
    },
  };
}
