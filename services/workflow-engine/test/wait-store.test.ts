// engine.run_wait's statements (adapters/wait-store.ts) on a real database: Approve / Reject only
// resume a wait that is resumable (a timer's wait answers "not resumable", the route's 409, and stays
// parked), and two replicas claiming due wakes at the same moment never both get one (the
// compare-and-set on fire_at; needs two connections, so Postgres: DATABASE_URL).
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { until } from '@flowdesk/service-kit/testing';
import { migrateEngine } from '../src/adapters/run-store.ts';
import { WaitStore } from '../src/adapters/wait-store.ts';

let testDb: TestDatabase;
let store: WaitStore;

before(async () => {
  testDb = await createTestDatabase();
  await migrateEngine(testDb.db);
  store = new WaitStore(testDb.db);
});
after(async () => {
  await testDb?.close();
});

const NOW = new Date('2026-03-02T09:00:00.000Z');

/** One parked run's wait row, as record_runs writes it. */
async function park(opts: { resumable: boolean; fireAt: Date | null; ownerId?: string }) {
  const w = { ownerId: opts.ownerId ?? randomUUID(), workflowId: randomUUID(), eventId: `evt_${randomUUID()}`, runId: randomUUID(), waitId: randomUUID() };
  const event = { eventId: w.eventId, workflowId: w.workflowId, ownerId: w.ownerId, source: 'manual', receivedAt: NOW.toISOString(), payload: {}, headers: {} };
  await testDb.db.exec(
    `INSERT INTO "engine"."run_wait" (owner_id, workflow_id, event_id, run_id, wait_id, secret_hash, node_id, resumable, fire_at, event)
     VALUES ($1, $2, $3, $4, $5, NULL, 'wait', $6, $7, $8::jsonb)`,
    [w.ownerId, w.workflowId, w.eventId, w.runId, w.waitId, opts.resumable, opts.fireAt, JSON.stringify(event)],
  );
  return w;
}

const rowOf = async (runId: string) =>
  (await testDb.db.exec(`SELECT resumed_by, fire_at FROM "engine"."run_wait" WHERE run_id = $1`, [runId])).rows[0] as {
    resumed_by: string | null;
    fire_at: unknown;
  };

test('Approve or Reject on a run that waits for a timer is refused (not resumable) and the timer still holds', async () => {
  const timer = new Date(NOW.getTime() + 3_600_000);
  const w = await park({ resumable: false, fireAt: timer });
  for (const action of ['approve', 'reject'] as const) {
    assert.deepEqual(await store.resumeByOwner(w.ownerId, w.runId, action, { note: 'x' }, NOW), { ok: false, why: 'not_resumable' }, action);
  }
  const row = await rowOf(w.runId);
  assert.equal(row.resumed_by, null, 'nothing resumed the wait');
  assert.equal(
    new Date(String(row.fire_at instanceof Date ? row.fire_at.toISOString() : row.fire_at)).toISOString(),
    timer.toISOString(),
    'its timer is unchanged',
  );
  // The same call on a resumable wait resumes it (once), so the refusal above is the wait's kind, not the call.
  const r = await park({ resumable: true, fireAt: null });
  assert.deepEqual(await store.resumeByOwner(r.ownerId, r.runId, 'approve', { note: 'ok' }, NOW), { ok: true, runId: r.runId });
  assert.deepEqual(await store.resumeByOwner(r.ownerId, r.runId, 'reject', undefined, NOW), { ok: false, why: 'already_resumed' });
  // Another user is not the run's owner: nothing to resume (row-level security).
  const other = await park({ resumable: true, fireAt: null });
  assert.deepEqual(await store.resumeByOwner(randomUUID(), other.runId, 'approve', undefined, NOW), { ok: false, why: 'not_waiting' });
  assert.equal((await rowOf(other.runId)).resumed_by, null);
});

test(
  'two replicas claiming the same due wakes at once: each wake is claimed by exactly one of them',
  { skip: process.env.DATABASE_URL ? false : 'needs two connections at once: run with DATABASE_URL (Postgres); PGlite has one' },
  async () => {
    const due = new Date(NOW.getTime() - 1_000);
    const ownerId = randomUUID();
    const waits = await Promise.all(Array.from({ length: 20 }, () => park({ resumable: false, fireAt: due, ownerId })));
    const ids = new Set<string>(waits.map((w) => w.waitId));
    const lease = new Date(NOW.getTime() + 30_000);
    // Replica A claims inside a transaction it keeps open; replica B's claim of the same rows starts
    // meanwhile (it read them as due) and waits on A's row locks. Then A commits.
    let releaseA!: () => void;
    const aHolds = new Promise<void>((resolve) => (releaseA = resolve));
    let claimedByA: string[] = [];
    const a = testDb.db.transaction(async (exec) => {
      const inTx = new WaitStore({ ...testDb.db, exec });
      claimedByA = (await inTx.claimDue(NOW, lease, 100)).map((w) => w.waitId).filter((id) => ids.has(id));
      await aHolds;
    });
    await until('replica A holds its claim', async () => claimedByA.length > 0 || undefined);
    const b = store.claimDue(NOW, lease, 100);
    await until('replica B waits on A’s locks', async () => {
      const { rows } = await testDb.db.exec(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%run_wait%'`,
      );
      return (rows[0]!.n as number) > 0 || undefined;
    });
    releaseA();
    await a;
    const claimedByB = (await b).map((w) => w.waitId).filter((id) => ids.has(id));
    assert.equal(claimedByA.length, 20, 'A claimed every due wake');
    assert.deepEqual(claimedByB, [], 'B claimed none of the wakes A holds');
  },
);

/** The wakes `claimDue` returns for these waits (other tests' rows may be due too). */
async function claimOnly(now: Date, lease: Date, waitIds: string[]) {
  return (await store.claimDue(now, lease, 1_000)).filter((w) => waitIds.includes(w.waitId));
}

test('a claimed wake carries what resumed the run: who, when, the body sent, the node and the event', async () => {
  const approved = await park({ resumable: true, fireAt: null });
  const empty = await park({ resumable: true, fireAt: null });
  const timer = await park({ resumable: false, fireAt: new Date(NOW.getTime() - 60_000) });
  const unanswered = await park({ resumable: true, fireAt: new Date(NOW.getTime() - 60_000) });
  assert.deepEqual(await store.resumeByOwner(approved.ownerId, approved.runId, 'approve', { note: 'ship it', n: 0 }, NOW), { ok: true, runId: approved.runId });
  // Reject with no body: the woken step sees no body (stored as null), not an error.
  assert.deepEqual(await store.resumeByOwner(empty.ownerId, empty.runId, 'reject', undefined, NOW), { ok: true, runId: empty.runId });

  const claimedAt = new Date(NOW.getTime() + 5_000);
  const lease = new Date(NOW.getTime() + 35_000);
  const wakes = await claimOnly(claimedAt, lease, [approved.waitId, empty.waitId, timer.waitId, unanswered.waitId]);
  const byId = new Map(wakes.map((w) => [w.waitId, w]));
  assert.equal(wakes.length, 4, 'each due wake is claimed once');
  const eventOf = (w: Awaited<ReturnType<typeof park>>) => ({
    eventId: w.eventId,
    workflowId: w.workflowId,
    ownerId: w.ownerId,
    source: 'manual',
    receivedAt: NOW.toISOString(),
    payload: {},
    headers: {},
  });
  assert.deepEqual(byId.get(approved.waitId), {
    waitId: approved.waitId,
    leaseUntil: lease,
    event: eventOf(approved),
    resume: { nodeId: 'wait', resumedBy: 'approve', at: NOW.toISOString(), body: { note: 'ship it', n: 0 } },
  });
  assert.deepEqual(byId.get(empty.waitId)?.resume, { nodeId: 'wait', resumedBy: 'reject', at: NOW.toISOString() }, 'no body key for an empty Reject');
  // No resume came: decided at the claim, as the timer's end (a timer) or the wait's timeout (resumable).
  assert.deepEqual(byId.get(timer.waitId)?.resume, { nodeId: 'wait', resumedBy: 'timer', at: claimedAt.toISOString() });
  assert.deepEqual(byId.get(unanswered.waitId)?.resume, { nodeId: 'wait', resumedBy: 'timeout', at: claimedAt.toISOString() });
  assert.deepEqual(byId.get(timer.waitId)?.event, eventOf(timer));

  // Claimed: not due again before the lease ends, due again after it (its claimer died).
  assert.deepEqual(await claimOnly(new Date(lease.getTime() - 1_000), new Date(lease.getTime() + 30_000), [timer.waitId]), []);
  const again = await claimOnly(new Date(lease.getTime() + 1_000), new Date(lease.getTime() + 31_000), [timer.waitId]);
  assert.deepEqual(again[0]?.resume, { nodeId: 'wait', resumedBy: 'timer', at: claimedAt.toISOString() }, 'the first decision holds');
});

test('a body that is JSON false, 0 or an empty list reaches the woken step as sent', async () => {
  for (const body of [false, 0, [] as unknown[]]) {
    const w = await park({ resumable: true, fireAt: null });
    assert.deepEqual(await store.resumeByOwner(w.ownerId, w.runId, 'approve', body, NOW), { ok: true, runId: w.runId });
    const [wake] = await claimOnly(new Date(NOW.getTime() + 1_000), new Date(NOW.getTime() + 30_000), [w.waitId]);
    assert.deepEqual(wake?.resume, { nodeId: 'wait', resumedBy: 'approve', at: NOW.toISOString(), body }, JSON.stringify(body));
  }
});

test('a body that is a JSON string (Approve or the resume URL) reaches the woken step as sent, and the other due wakes with it', async () => {
  const sent = ['yes', '', '123', 'null', '{"a":1}'];
  const waits = [];
  for (const body of sent) {
    const w = await park({ resumable: true, fireAt: null });
    assert.deepEqual(await store.resumeByOwner(w.ownerId, w.runId, 'approve', body, NOW), { ok: true, runId: w.runId });
    waits.push({ w, body, by: 'approve' });
  }
  // The resume URL stores its body the same way.
  const byLink = await park({ resumable: true, fireAt: null });
  const hash = randomBytes(32).toString('hex'); // the SHA-256 of the link's secret, as the route gives it
  await testDb.db.exec(`UPDATE "engine"."run_wait" SET secret_hash = $2 WHERE wait_id = $1`, [byLink.waitId, hash]);
  assert.deepEqual(await store.resumeBySecret(byLink.waitId, hash, '', NOW), { ok: true, runId: byLink.runId });
  waits.push({ w: byLink, body: '', by: 'resume' });
  const timer = await park({ resumable: false, fireAt: new Date(NOW.getTime() - 60_000) });

  const wakes = await claimOnly(new Date(NOW.getTime() + 1_000), new Date(NOW.getTime() + 30_000), [...waits.map((x) => x.w.waitId), timer.waitId]);
  const byId = new Map(wakes.map((x) => [x.waitId, x]));
  for (const { w, body, by } of waits)
    assert.deepEqual(byId.get(w.waitId)?.resume, { nodeId: 'wait', resumedBy: by, at: NOW.toISOString(), body }, `the string ${JSON.stringify(body)}`);
  assert.equal(byId.get(timer.waitId)?.resume.resumedBy, 'timer', 'a due timer beside them is delivered too');
});

test('Approve / Reject with an id that is not a UUID answers not found (no database error) and resumes nothing', async () => {
  const w = await park({ resumable: true, fireAt: null });
  for (const [userId, runId] of [
    ['not-a-uuid', w.runId],
    [w.ownerId, 'not-a-uuid'],
    [w.ownerId, `${w.runId}x`],
    [`${w.ownerId} `, w.runId],
  ] as const) {
    assert.deepEqual(await store.resumeByOwner(userId, runId, 'approve', { note: 'x' }, NOW), { ok: false, why: 'not_found' }, `${userId} / ${runId}`);
  }
  assert.equal((await rowOf(w.runId)).resumed_by, null, 'the wait is still parked');
  assert.deepEqual(await store.resumeByOwner(w.ownerId, w.runId, 'approve', undefined, NOW), { ok: true, runId: w.runId }, 'its owner still can');
});
