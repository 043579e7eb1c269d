// What the embedded bus keeps and for how long: delivered messages are deleted once past the
// retention (in bounded batches, on a timer), undelivered ones stay; consumer groups nobody runs any
// more expire with their pending deliveries; the lanes the claim walks stay exact under concurrent
// acknowledgements. PGlite by default, Postgres with DATABASE_URL (a fresh database per test).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, openDatabase, type Database } from '@flowdesk/db';
import { createEmbeddedBus, type EmbeddedBusOptions, type EmbeddedEventBus } from '../src/index.ts';
import { EmbeddedStore } from '../src/embedded-store.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const count = async (db: Database, sql: string, params: unknown[] = []) => Number((await db.exec(sql, params)).rows[0]!.n);
const messages = (db: Database, topic: string) => count(db, 'SELECT count(*)::int AS n FROM bus.message WHERE topic = $1', [topic]);
const deliveries = (db: Database, topic: string, groupId?: string) =>
  count(db, `SELECT count(*)::int AS n FROM bus.delivery WHERE topic = $1${groupId ? ' AND group_id = $2' : ''}`, groupId ? [topic, groupId] : [topic]);

describe('embedded bus: retention and group expiry', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });
  async function setup(options: EmbeddedBusOptions = {}): Promise<{ db: Database; url: string | undefined; bus: EmbeddedEventBus }> {
    const tdb = await createTestDatabase();
    cleanup.push(() => tdb.close());
    const bus = await createEmbeddedBus(tdb.db, { pollIntervalMs: 20, ...options });
    cleanup.push(() => bus.close());
    return { db: tdb.db, url: tdb.url, bus };
  }

  test('a message is deleted once every group has it done and it is past the retention; until then it stays', { timeout: 60_000 }, async () => {
    const { db, bus } = await setup({ retentionMs: 0, sweepIntervalMs: 20 });
    // Group b is registered (its messages are fanned out to it) but its consumer is not running.
    await (await bus.subscribe({ topic: 'ret.t', groupId: 'b', handler: () => {} })).close();
    const a: number[] = [];
    await bus.subscribe({ topic: 'ret.t', groupId: 'a', concurrency: 4, handler: (m) => void a.push((m.value as { n: number }).n) });
    await bus.publish(
      'ret.t',
      Array.from({ length: 5 }, (_, n) => ({ key: `k${n % 2}`, value: { n } })),
    );
    await waitFor('group a to handle all', () => a.length === 5);
    // Several sweeps later, nothing group b still needs is gone.
    for (let i = 0; i < 3; i++) assert.equal((await bus.sweep()).deleted, 0);
    assert.equal(await messages(db, 'ret.t'), 5);
    assert.equal(await deliveries(db, 'ret.t', 'b'), 5);

    // A bus with a long retention deletes nothing even once both groups are done.
    const patient = await createEmbeddedBus(db, { migrate: false, retentionMs: 3_600_000, sweepIntervalMs: 20 });
    cleanup.push(() => patient.close());
    const b: number[] = [];
    await bus.subscribe({ topic: 'ret.t', groupId: 'b', handler: (m) => void b.push((m.value as { n: number }).n) });
    await waitFor('group b to handle all', () => b.length === 5);
    assert.equal((await patient.sweep()).deleted, 0);

    // The timer of the bus with retention 0 deletes them, deliveries included.
    await waitFor('the sweeper to delete the delivered messages', async () => (await messages(db, 'ret.t')) === 0);
    assert.equal(await deliveries(db, 'ret.t'), 0);
    // And the bus goes on: a new message is delivered to both groups.
    await bus.publish('ret.t', [{ key: 'k0', value: { n: 5 } }]);
    await waitFor('the next message in both groups', () => a.includes(5) && b.includes(5));
  });

  test('deletion goes in bounded batches, oldest first', { timeout: 60_000 }, async () => {
    const { db, bus } = await setup({ retentionMs: Infinity });
    // No group: a message is delivered to every group it was fanned out to (none) at once.
    for (let i = 0; i < 5; i++)
      await bus.publish(
        'batch.t',
        Array.from({ length: 500 }, (_, j) => ({ key: `k${j % 7}`, value: { n: i * 500 + j } })),
      );
    const store = new EmbeddedStore(db);
    assert.equal(await store.sweep('batch.t', 0, 1000), 1000);
    const oldest = (await db.exec("SELECT min((value->>'n')::int) AS n FROM bus.message WHERE topic = 'batch.t'")).rows[0]!.n;
    assert.equal(Number(oldest), 1000, 'the oldest thousand went first');
    assert.equal(await store.sweep('batch.t', 0, 1000), 1000);
    assert.equal(await store.sweep('batch.t', 0, 1000), 500);
    assert.equal(await store.sweep('batch.t', 0, 1000), 0);
    assert.equal(await messages(db, 'batch.t'), 0);
  });

  test('a group no consumer runs any more expires with its deliveries and lanes; a running one is kept alive', { timeout: 60_000 }, async () => {
    const { db, bus } = await setup({ retentionMs: Infinity, groupExpiryMs: 60_000, heartbeatMs: 20 });
    // A gateway replica's group left behind by a restart, and one whose consumer runs.
    await (await bus.subscribe({ topic: 'exp.t', groupId: 'gone', handler: () => {} })).close();
    const live: number[] = [];
    await bus.subscribe({ topic: 'exp.t', groupId: 'live', handler: (m) => void live.push((m.value as { n: number }).n) });
    await bus.publish('exp.t', [{ key: 'u1', value: { n: 1 } }]);
    await waitFor('the live group to handle it', () => live.length === 1);
    // Both last seen two minutes ago; the running consumer marks its group alive again.
    await db.exec("UPDATE bus.subscription SET seen_at = now() - interval '2 minutes' WHERE topic = 'exp.t'");
    await waitFor(
      'the heartbeat of the running consumer',
      async () => (await count(db, "SELECT count(*)::int AS n FROM bus.subscription WHERE topic = 'exp.t' AND seen_at > now() - interval '1 minute'")) === 1,
    );
    assert.deepEqual(await bus.sweep(), { deleted: 0, expired: 1 });
    assert.deepEqual(
      (await db.exec("SELECT group_id FROM bus.subscription WHERE topic = 'exp.t'")).rows.map((r) => r.group_id),
      ['live'],
    );
    assert.equal(await deliveries(db, 'exp.t', 'gone'), 0, 'its pending delivery went with it');
    assert.equal(await count(db, "SELECT count(*)::int AS n FROM bus.lane WHERE group_id = 'gone'"), 0);
    // Publishing no longer fans out to it.
    await bus.publish('exp.t', [{ key: 'u2', value: { n: 2 } }]);
    await waitFor('the live group to handle the next', () => live.length === 2);
    assert.equal(await deliveries(db, 'exp.t', 'gone'), 0);
    assert.equal(await deliveries(db, 'exp.t', 'live'), 2);
  });

  test('lanes stay exact when two consumers acknowledge one key concurrently', { timeout: 60_000 }, async (t) => {
    const { db, url, bus } = await setup({ retentionMs: Infinity });
    // On Postgres the second consumer has its own pool, as another process would.
    const otherDb = url ? await openDatabase({ kind: 'postgres', url, poolMax: 4 }) : db;
    if (url) cleanup.push(() => otherDb.close());
    const other = await createEmbeddedBus(otherDb, { migrate: false, pollIntervalMs: 20, retentionMs: Infinity });
    cleanup.push(() => other.close());
    const handled = new Set<number>();
    const handler = async (m: { value: unknown }) => {
      await sleep(Math.random() * 3);
      handled.add((m.value as { n: number }).n);
    };
    await bus.subscribe({ topic: 'lane.t', groupId: 'g', concurrency: 8, keyConcurrency: 8, handler });
    await other.subscribe({ topic: 'lane.t', groupId: 'g', concurrency: 8, keyConcurrency: 8, handler });
    for (let i = 0; i < 4; i++)
      await bus.publish(
        'lane.t',
        Array.from({ length: 50 }, (_, j) => ({ key: 'hot', value: { n: i * 50 + j } })),
      );
    await waitFor('200 messages', () => handled.size === 200, 30_000);
    await waitFor(
      'every delivery done',
      async () => (await count(db, "SELECT count(*)::int AS n FROM bus.delivery WHERE group_id = 'g' AND done_at IS NULL")) === 0,
    );
    const lane = (await db.exec("SELECT head::text AS head, last_seq::text AS last FROM bus.lane WHERE group_id = 'g' AND topic = 'lane.t' AND key = 'hot'"))
      .rows[0]!;
    t.diagnostic(`lane head ${String(lane.head)}, last_seq ${String(lane.last)}`);
    assert.equal(BigInt(String(lane.head)), BigInt(String(lane.last)) + 1n, 'the lane shows no work left (a stale head would keep it in the claim walk)');
    // And a later message of the key is claimed through the lane.
    await bus.publish('lane.t', [{ key: 'hot', value: { n: 200 } }]);
    await waitFor('the next message', () => handled.has(200));
  });
});
