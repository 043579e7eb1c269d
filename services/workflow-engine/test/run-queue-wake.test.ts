// The run queue wakes replicas on events, not polls (issue 40; docs/workflow-engine.md, "Fairness
// across owners"): with nothing queued a replica reads engine.run_queue only at its safety poll
// (10 s), yet a run another replica queues (its owner at that replica's cap) is claimed at once by a
// replica with room, because the insert notifies `flowdesk_run_queue` (migration
// 20270321000000_run_queue_notify). Two OwnerFairness instances on one real database (PGlite, or
// Postgres with DATABASE_URL), as two engine replicas.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import type { TriggerEvent } from '@flowdesk/contracts';
import { migrateEngine } from '../src/adapters/run-store.ts';
import { RUN_QUEUE_CHANNEL, RunQueueStore } from '../src/adapters/run-queue.ts';
import { OwnerFairness } from '../src/domain/fairness.ts';
import { webhookEvent } from './support.ts';

let testDb: TestDatabase;
before(async () => {
  testDb = await createTestDatabase();
  await migrateEngine(testDb.db);
});
after(async () => {
  await testDb?.close();
});

const silent = { info() {}, warn() {}, error() {}, debug() {} } as never;

/** The real store, counting its reads of the queue (`owners`). */
function countingStore(reads: { n: number }, slowMs = 0): RunQueueStore {
  const store = new RunQueueStore(testDb.db);
  const owners = store.owners.bind(store);
  store.owners = async (now) => {
    reads.n++;
    if (slowMs > 0) await new Promise((r) => setTimeout(r, slowMs));
    return owners(now);
  };
  return store;
}

/** One replica: runs record where they ran; `hold` keeps a run in flight until released. */
function replica(name: string, ran: { replica: string; event: TriggerEvent }[], hold: Map<string, () => void>, statements: { n: number }) {
  return new OwnerFairness({
    store: countingStore(statements),
    concurrency: 4,
    ownerConcurrency: 1,
    // Both polls far away: only a wake-up can make a replica look again.
    pollMs: 60_000,
    idlePollMs: 600_000,
    wakeUps: (fn) => testDb.db.listen(RUN_QUEUE_CHANNEL, fn),
    run: (event) =>
      new Promise<void>((resolve) => {
        ran.push({ replica: name, event });
        hold.set(String(event.payload.n), resolve);
      }),
    isOrdered: async () => false,
    giveUp: async () => undefined,
    clock: () => new Date(),
    log: silent,
  });
}

/** Fails (not hangs) when `check` is not true within `ms`. */
async function within(ms: number, what: string, check: () => boolean) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a run queued on one replica is claimed at once by an idle replica, though its poll is ten minutes away', async () => {
  const ran: { replica: string; event: TriggerEvent }[] = [];
  const hold = new Map<string, () => void>();
  const reads = { n: 0 };
  const a = replica('a', ran, hold, reads);
  const b = replica('b', ran, hold, reads);
  a.start();
  b.start();
  try {
    // Both read the queue once at their start and found it empty, and listen for enqueues (on a loaded
    // database LISTEN can come after the first read: a notification before it would be missed).
    await within(10_000, 'both replicas read the queue at start', () => reads.n >= 2);
    await Promise.all([a.listening(), b.listening()]);
    const owner = randomUUID();
    const wf = { id: randomUUID() };
    // The first run takes A's only slot for the owner; the second is queued by A.
    const first = a.admit(webhookEvent(wf, owner, { n: 1 }));
    await within(10_000, 'the first run starts on A', () => ran.length === 1);
    await a.admit(webhookEvent(wf, owner, { n: 2 }));
    // B has room for the owner: the insert's notification makes it claim the queued run.
    await within(20_000, 'the queued run starts on B', () => ran.length === 2);
    assert.deepEqual(
      ran.map((r) => [r.replica, r.event.payload.n]),
      [
        ['a', 1],
        ['b', 2],
      ],
    );
    hold.get('1')!();
    hold.get('2')!();
    await first;
  } finally {
    for (const release of hold.values()) release();
    await a.stop();
    await b.stop();
  }
});

test('with nothing queued a replica does not read the queue at every poll', async () => {
  const ran: TriggerEvent[] = [];
  const reads = { n: 0 };
  const fairness = new OwnerFairness({
    // Each read takes five poll ticks, as on a loaded machine: the ticks during it add no read.
    store: countingStore(reads, 100),
    concurrency: 4,
    ownerConcurrency: 1,
    pollMs: 20,
    idlePollMs: 600_000,
    run: async (event) => void ran.push(event),
    isOrdered: async () => false,
    giveUp: async () => undefined,
    clock: () => new Date(),
    log: silent,
  });
  fairness.start();
  try {
    await within(10_000, 'the start read', () => reads.n >= 1);
    // Fifty poll ticks with an empty queue: no read (the old poll read at each).
    const ticksEnd = Date.now() + 50 * 20;
    await within(5_000, 'fifty ticks pass', () => Date.now() >= ticksEnd);
    assert.equal(reads.n, 1, `reads of an empty queue: ${reads.n}`);
  } finally {
    await fairness.stop();
  }
});
