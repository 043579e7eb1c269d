// The schedule trigger's claim (ScheduleStore.claim, docs/triggers.md): two engine replicas that read
// the same due tick each try to move it on; the compare-and-set on next_tick lets exactly one of them
// claim it, whatever the order. The run's event id would also remove a duplicate later, so this tests
// the claim itself (issue 22, item 23). PGlite, or Postgres with DATABASE_URL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { TriggerEvent } from '@flowdesk/contracts';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { migrateEngine } from '../src/adapters/run-store.ts';
import { ScheduleStore } from '../src/adapters/schedule-store.ts';
import type { TickClaim } from '../src/domain/ports.ts';

let testDb: TestDatabase;
let replicaA: ScheduleStore;
let replicaB: ScheduleStore;

before(async () => {
  testDb = await createTestDatabase();
  await migrateEngine(testDb.db);
  replicaA = new ScheduleStore(testDb.db);
  replicaB = new ScheduleStore(testDb.db);
});
after(async () => {
  await testDb?.close();
});

const T0 = new Date('2026-03-02T09:00:00.000Z');
const T1 = new Date('2026-03-02T09:01:00.000Z');
const NOW = new Date('2026-03-02T09:00:00.500Z');
const LEASE = new Date('2026-03-02T09:00:30.500Z');

/** A new workflow whose every-minute schedule is due at T0. */
async function dueSchedule(): Promise<string> {
  const workflowId = randomUUID();
  await replicaA.sync({ workflowId, ownerId: randomUUID(), version: 1, enabled: true, cron: '* * * * *', timezone: 'UTC', missed: 'run_once', nextTick: T0 });
  return workflowId;
}

/** What a replica's tick builds from the row it read: the tick it saw as due, the next one, the run's event. */
async function claimFromWhatItRead(store: ScheduleStore, workflowId: string, fire: boolean): Promise<TickClaim> {
  const row = (await store.due(NOW, 100)).find((r) => r.workflowId === workflowId);
  assert.ok(row, 'the schedule is due');
  assert.equal(row.nextTick.toISOString(), T0.toISOString());
  const event: TriggerEvent | null = fire
    ? {
        eventId: `schedule_${T0.toISOString()}`,
        workflowId,
        ownerId: row.ownerId,
        source: 'schedule',
        receivedAt: NOW.toISOString(),
        payload: { scheduledFor: T0.toISOString() },
        headers: {},
      }
    : null;
  return { workflowId, due: row.nextTick, next: T1, lastTick: fire ? T0 : null, event };
}

async function rowOf(workflowId: string) {
  const { rows } = await testDb.db.exec('SELECT next_tick, pending_event FROM "engine"."schedule" WHERE workflow_id = $1', [workflowId]);
  const r = rows[0]!;
  return { nextTick: new Date(String(r.next_tick instanceof Date ? r.next_tick.toISOString() : r.next_tick)).toISOString(), pending: r.pending_event };
}

test('two replicas claiming the same due tick at once: exactly one claim succeeds', async () => {
  const id = await dueSchedule();
  const [a, b] = await Promise.all([claimFromWhatItRead(replicaA, id, true), claimFromWhatItRead(replicaB, id, true)]);
  const [wonA, wonB] = await Promise.all([replicaA.claim([a], LEASE), replicaB.claim([b], LEASE)]);
  assert.equal(Number(wonA.has(id)) + Number(wonB.has(id)), 1, `claimed by A: ${wonA.has(id)}, by B: ${wonB.has(id)}`);
  assert.equal((await rowOf(id)).nextTick, T1.toISOString());
});

test('the second replica comes after the first has claimed and published: its claim of the same tick fails', async () => {
  const id = await dueSchedule();
  const a = await claimFromWhatItRead(replicaA, id, true);
  const b = await claimFromWhatItRead(replicaB, id, true); // read before A's claim: the same due tick
  assert.deepEqual([...(await replicaA.claim([a], LEASE))], [id]);
  await replicaA.published([id]); // A's event is out: nothing pending holds B back any more
  assert.deepEqual([...(await replicaB.claim([b], LEASE))], [], 'the tick was already moved on: B claims nothing');
  const row = await rowOf(id);
  assert.equal(row.nextTick, T1.toISOString());
  assert.equal(row.pending, null, 'B stored no second event to publish');
});

test('a tick that fires no run (missed: skip) is moved on by one replica only as well', async () => {
  const id = await dueSchedule();
  const a = await claimFromWhatItRead(replicaA, id, false);
  const b = await claimFromWhatItRead(replicaB, id, false);
  assert.deepEqual([...(await replicaA.claim([a], LEASE))], [id]);
  assert.deepEqual([...(await replicaB.claim([b], LEASE))], []);
});
