// The in-process session cache (PGlite only) against a scripted store: what it answers without the
// database, what it must not cache, and that gateways on one database share it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Database } from '@flowdesk/db';
import { inProcessSessionCache } from '../src/adapters/session-cache.ts';
import { SESSION_IDLE_MS, SESSION_TOUCH_INTERVAL_MS, type SessionBinding, type SessionStore } from '../src/domain/sessions.ts';

const pglite = () => ({ kind: 'pglite' }) as Database;
const principal = { userId: '11111111-1111-4111-8111-111111111111', credentialId: 'key-1', scope: 'mcp:read' };
const t0 = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

/** A store that records what reached it; `rows` is the database. Each touch can be held open. */
function fakeStore(rows = new Map<string, SessionBinding>()) {
  const calls: string[] = [];
  let hold: Promise<void> | undefined;
  const store: SessionStore = {
    async create(idHash, s) {
      calls.push('create');
      rows.set(idHash, {
        userId: s.principal?.userId ?? null,
        credentialId: s.principal?.credentialId ?? null,
        lastSeenAt: s.now,
        protocolVersion: s.protocolVersion,
      });
    },
    async touch(idHash, now) {
      calls.push('touch');
      // The row as read now; a held touch answers with it later, as a slow query would.
      const row = rows.get(idHash);
      if (row && now.getTime() - row.lastSeenAt.getTime() >= SESSION_TOUCH_INTERVAL_MS) row.lastSeenAt = now;
      const read = row && now.getTime() - row.lastSeenAt.getTime() < SESSION_IDLE_MS ? { ...row } : undefined;
      await hold;
      return read;
    },
    async bind(idHash, p) {
      calls.push('bind');
      const row = rows.get(idHash);
      if (!row || row.userId !== null) return false;
      Object.assign(row, { userId: p.userId, credentialId: p.credentialId });
      return true;
    },
    async delete(idHash) {
      calls.push('delete');
      return rows.delete(idHash);
    },
    async sweep() {
      calls.push('sweep');
    },
  };
  return {
    store,
    rows,
    calls,
    holdTouches() {
      let release!: () => void;
      hold = new Promise((r) => (release = r));
      return () => {
        hold = undefined;
        release();
      };
    },
  };
}

describe('in-process session cache', () => {
  test('within the touch interval a check costs no store call; past it the store records the use', async () => {
    const f = fakeStore();
    const cache = inProcessSessionCache(pglite(), f.store);
    await cache.create('s', { protocolVersion: '2025-06-18', principal, now: t0 });
    assert.equal((await cache.touch('s', at(10_000)))?.userId, principal.userId);
    assert.equal((await cache.touch('s', at(SESSION_TOUCH_INTERVAL_MS - 1)))?.userId, principal.userId);
    assert.deepEqual(f.calls, ['create']);
    assert.ok(await cache.touch('s', at(SESSION_TOUCH_INTERVAL_MS)));
    assert.deepEqual(f.calls, ['create', 'touch']);
    assert.equal(f.rows.get('s')!.lastSeenAt.getTime(), at(SESSION_TOUCH_INTERVAL_MS).getTime());
    assert.ok(await cache.touch('s', at(SESSION_TOUCH_INTERVAL_MS + 1000)));
    assert.deepEqual(f.calls, ['create', 'touch'], 'served from the refreshed entry');
  });

  test('expired exactly when the store says so: an hour after the recorded use, with no store call', async () => {
    const f = fakeStore();
    const cache = inProcessSessionCache(pglite(), f.store);
    await cache.create('s', { protocolVersion: '2025-06-18', principal, now: t0 });
    assert.ok(await cache.touch('s', at(20_000)), 'not recorded');
    assert.equal(await cache.touch('s', at(SESSION_IDLE_MS)), undefined);
    assert.deepEqual(f.calls, ['create']);
  });

  test('DELETE through one gateway is refused at once by another gateway on the same database', async () => {
    const db = pglite();
    const rows = new Map<string, SessionBinding>();
    const a = inProcessSessionCache(db, fakeStore(rows).store);
    const bStore = fakeStore(rows);
    const b = inProcessSessionCache(db, bStore.store);
    await a.create('s', { protocolVersion: '2025-06-18', principal, now: t0 });
    assert.ok(await b.touch('s', at(1000)), 'B serves it from the shared entry');
    assert.deepEqual(bStore.calls, []);
    assert.equal(await a.delete('s'), true);
    assert.equal(await b.touch('s', at(2000)), undefined);
    assert.deepEqual(bStore.calls, ['touch'], 'B had no entry left and asked the database');
  });

  test('a read that overlapped a DELETE answers its own request but is not cached', async () => {
    const f = fakeStore();
    const cache = inProcessSessionCache(pglite(), f.store);
    f.rows.set('s', { userId: principal.userId, credentialId: principal.credentialId, lastSeenAt: t0, protocolVersion: '2025-11-25' });
    const release = f.holdTouches();
    const inFlight = cache.touch('s', at(1000)); // read the row before the delete
    await cache.delete('s');
    release();
    assert.ok(await inFlight, 'it read the row before the delete');
    assert.equal(await cache.touch('s', at(2000)), undefined, 'the deleted session is not served from the cache');
  });

  test('a read that overlapped a bind is not cached: the next check sees the binding', async () => {
    const f = fakeStore();
    const cache = inProcessSessionCache(pglite(), f.store);
    f.rows.set('s', { userId: null, credentialId: null, lastSeenAt: t0, protocolVersion: '2025-11-25' }); // unbound, not yet cached
    const release = f.holdTouches();
    const inFlight = cache.touch('s', at(1000)); // reads the row while it is still unbound
    assert.equal(await cache.bind('s', principal), true);
    release();
    assert.equal((await inFlight)?.userId, null, 'its own answer predates the bind');
    assert.equal((await cache.touch('s', at(2000)))?.userId, principal.userId);
    assert.deepEqual(f.calls, ['touch', 'bind', 'touch']);
  });

  test('only for PGlite: on Postgres other processes may run replicas', () => {
    assert.throws(() => inProcessSessionCache({ kind: 'postgres' } as Database, fakeStore().store), /PGlite/);
  });
});
