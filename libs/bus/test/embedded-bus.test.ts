// The contract suite on the embedded bus: on Postgres when DATABASE_URL is set (a fresh database,
// every bus on its own pool, as separate processes would be), else on PGlite with a data folder on
// disk (so a restart really closes and reopens it). Plus what only the embedded bus has: leases.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createTestDatabase, openDatabase, type Database } from '@flowdesk/db';
import { createEmbeddedBus, migrateBus, type EventBus } from '../src/index.ts';
import { EmbeddedStore } from '../src/embedded-store.ts';
import { runBusContract, type BusFixture } from './contract.ts';

const OPTIONS = { pollIntervalMs: 20, onError: (err: unknown) => console.error('[bus test]', err) };

/**
 * A bus on `db` that can die like a killed process: after kill() every statement it sends fails (no
 * ack, no lease renewal, no release), so its short leases run out and the group's other consumers
 * claim its messages again. Its errors are expected and not printed.
 */
async function doomedBus(db: Database): Promise<{ bus: EventBus; kill(): Promise<void> }> {
  let dead = false;
  const guard =
    (exec: Database['exec']): Database['exec'] =>
    (sql, params) =>
      dead ? Promise.reject(new Error('killed')) : exec(sql, params);
  const view: Database = {
    kind: db.kind,
    adapter: db.adapter,
    exec: guard(db.exec),
    session: (fn) => (dead ? Promise.reject(new Error('killed')) : db.session((exec) => fn(guard(exec)))),
    transaction: (fn) => (dead ? Promise.reject(new Error('killed')) : db.transaction((exec) => fn(guard(exec)))),
    queryAsUser: db.queryAsUser,
    listen: (channel, fn) => db.listen(channel, (payload) => void (dead || fn(payload))),
    close: async () => {},
  };
  const bus = await createEmbeddedBus(view, { ...OPTIONS, leaseMs: 300, migrate: false, onError: () => {} });
  return { bus, kill: async () => void (dead = true) };
}

async function pgliteFixture(): Promise<BusFixture> {
  const dir = await mkdtemp(path.join(tmpdir(), 'flowdesk-bus-'));
  let db = await openDatabase({ kind: 'pglite', dataDir: dir });
  let buses: EventBus[] = [];
  const closeAll = async () => {
    for (const b of buses) await b.close();
    buses = [];
    await db.close();
  };
  return {
    separateConnections: false,
    deliveryTimeoutMs: 10_000,
    async open() {
      const bus = await createEmbeddedBus(db, OPTIONS);
      buses.push(bus);
      return bus;
    },
    async openDoomed() {
      const doomed = await doomedBus(db);
      buses.push(doomed.bus);
      return doomed;
    },
    async restart() {
      await closeAll();
      db = await openDatabase({ kind: 'pglite', dataDir: dir });
    },
    async close() {
      await closeAll();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function postgresFixture(): Promise<BusFixture> {
  const test = await createTestDatabase();
  const url = test.url!;
  await migrateBus(test.db);
  let opened: { bus: EventBus; db: Database }[] = [];
  const closeAll = async () => {
    for (const o of opened) {
      await o.bus.close();
      await o.db.close();
    }
    opened = [];
  };
  return {
    separateConnections: true,
    deliveryTimeoutMs: 10_000,
    async open() {
      const db = await openDatabase({ kind: 'postgres', url, poolMax: 4 });
      const bus = await createEmbeddedBus(db, OPTIONS);
      opened.push({ bus, db });
      return bus;
    },
    async openDoomed() {
      const db = await openDatabase({ kind: 'postgres', url, poolMax: 4 });
      const doomed = await doomedBus(db);
      opened.push({ bus: doomed.bus, db });
      return doomed;
    },
    restart: closeAll,
    async storedCount(topic) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query('SELECT count(*)::int AS n FROM bus.message WHERE topic = $1', [topic]);
        return rows[0].n as number;
      } finally {
        await client.end();
      }
    },
    async close() {
      await closeAll();
      await test.close();
    },
  };
}

const onPostgres = Boolean(process.env.DATABASE_URL);
runBusContract(onPostgres ? 'embedded on Postgres' : 'embedded on PGlite (data folder on disk)', onPostgres ? postgresFixture : pgliteFixture);

describe('embedded bus: leases', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  test('a message leased by a consumer that died is delivered again once the lease runs out', { timeout: 30_000 }, async () => {
    const tdb = await createTestDatabase();
    cleanup.push(() => tdb.close());
    const bus = await createEmbeddedBus(tdb.db, OPTIONS);
    cleanup.push(() => bus.close());
    await bus.publish('lease.t', [{ key: 'k', value: { n: 1 } }]);
    // Register the group and take the lease as a consumer would, then never finish: a crash.
    const store = new EmbeddedStore(tdb.db);
    await store.register('lease.t', 'lease.g');
    const taken = await store.claim('lease.t', 'lease.g', 'dead-consumer', 10, 300);
    assert.equal(taken.length, 1);

    const got: { attempt: number; at: number }[] = [];
    const t0 = Date.now();
    await bus.subscribe({ topic: 'lease.t', groupId: 'lease.g', handler: (m) => void got.push({ attempt: m.attempt, at: Date.now() - t0 }) });
    const deadline = Date.now() + 5_000;
    while (got.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(got.length, 1, 'redelivered after the lease expired');
    assert.equal(got[0]!.attempt, 2);
    assert.ok(got[0]!.at >= 200, `not before the lease ran out (${got[0]!.at} ms)`);
  });

  test('a slow handler keeps its lease: no second consumer gets the message meanwhile', { timeout: 30_000 }, async () => {
    const tdb = await createTestDatabase();
    cleanup.push(() => tdb.close());
    const bus = await createEmbeddedBus(tdb.db, { ...OPTIONS, leaseMs: 150 });
    cleanup.push(() => bus.close());
    const calls: string[] = [];
    const handler = (who: string) => async () => {
      calls.push(who);
      await new Promise((r) => setTimeout(r, 600)); // four lease lengths
    };
    await bus.subscribe({ topic: 'slow.t', groupId: 'slow.g', handler: handler('a') });
    await bus.subscribe({ topic: 'slow.t', groupId: 'slow.g', handler: handler('b') });
    await bus.publish('slow.t', [{ key: 'k', value: {} }]);
    await new Promise((r) => setTimeout(r, 900));
    assert.equal(calls.length, 1, `handled once, not by both (${calls.join(',')})`);
  });
});

describe('embedded bus: what a group has not processed yet', () => {
  test('backlog counts per key and oldestUnprocessed names the oldest pending publish among the keys; both empty once done', { timeout: 30_000 }, async () => {
    const tdb = await createTestDatabase();
    const bus = await createEmbeddedBus(tdb.db, OPTIONS);
    try {
      // The group exists before the publishes (a registered consumer group that has not run yet).
      await new EmbeddedStore(tdb.db).register('pending.t', 'pending.g');
      await bus.publish('pending.t', [
        { key: 'a', value: { n: 1 } },
        { key: 'a', value: { n: 2 } },
      ]);
      const { rows } = await tdb.db.exec(`SELECT key, created_at FROM bus.message WHERE topic = 'pending.t' ORDER BY sequence`);
      const firstA = new Date(rows[0]!.created_at as string | Date);
      await new Promise((r) => setTimeout(r, 20));
      await bus.publish('pending.t', [{ key: 'b', value: { n: 3 } }]);
      const { rows: bRows } = await tdb.db.exec(`SELECT created_at FROM bus.message WHERE topic = 'pending.t' AND key = 'b'`);
      const firstB = new Date(bRows[0]!.created_at as string | Date);

      assert.deepEqual(Object.fromEntries(await bus.backlog!('pending.t', 'pending.g', ['a', 'b', 'c'], 10)), { a: 2, b: 1, c: 0 });
      assert.equal((await bus.oldestUnprocessed!('pending.t', 'pending.g', ['a', 'b']))?.getTime(), firstA.getTime());
      assert.equal((await bus.oldestUnprocessed!('pending.t', 'pending.g', ['b', 'c']))?.getTime(), firstB.getTime());
      assert.equal(await bus.oldestUnprocessed!('pending.t', 'pending.g', ['c']), null);
      assert.equal(await bus.oldestUnprocessed!('pending.t', 'pending.g', []), null);
      assert.equal(await bus.oldestUnprocessed!('pending.t', 'another.g', ['a']), null, 'per group');

      let handled = 0;
      await bus.subscribe({ topic: 'pending.t', groupId: 'pending.g', handler: () => void handled++ });
      const deadline = Date.now() + 10_000;
      while ((await bus.oldestUnprocessed!('pending.t', 'pending.g', ['a', 'b'])) !== null) {
        assert.ok(Date.now() < deadline, 'the group never finished its messages');
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(handled, 3);
      assert.deepEqual(Object.fromEntries(await bus.backlog!('pending.t', 'pending.g', ['a', 'b'], 10)), { a: 0, b: 0 });
    } finally {
      await bus.close();
      await tdb.close();
    }
  });
});
