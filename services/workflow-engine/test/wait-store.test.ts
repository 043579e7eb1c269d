// engine.run_wait's statements (adapters/wait-store.ts) on a real database: Approve / Reject only
// resume a wait that is resumable (a timer's wait answers "not resumable", the route's 409, and stays
// parked), and two replicas claiming due wakes at the same moment never both get one (the
// compare-and-set on fire_at; needs two connections, so Postgres: DATABASE_URL). Resume now wakes a
// timer wait through that same claim, once, and never moves a claimed wake's lease.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createTestDatabase, userContext, type TestDatabase } from '@flowdesk/db';
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

/**
 * A waiting run (engine.run, its parked step `step`) and its wait row, as record_runs writes them:
 * what Resume now reads (the run's row says what kind of step parked it).
 */
async function parkRun(opts: { resumable: boolean; fireAt: Date | null; step: Record<string, unknown> }) {
  const w = await park({ resumable: opts.resumable, fireAt: null });
  const step = { nodeId: 'wait', status: 'waiting', input: {}, output: {}, error: null, startedAt: NOW.toISOString(), durationMs: 0, ...opts.step };
  const context = userContext(w.ownerId);
  await testDb.db.transaction(async (exec) => {
    await exec(context.text, context.values);
    await exec(`INSERT INTO "engine"."run" (id, owner_id, workflow_id, event_id, status, steps) VALUES ($1, $2, $3, $4, 'waiting', $5::jsonb)`, [
      w.runId,
      w.ownerId,
      w.workflowId,
      w.eventId,
      JSON.stringify([step]),
    ]);
  });
  await testDb.db.exec(`UPDATE "engine"."run_wait" SET fire_at = $2 WHERE wait_id = $1`, [w.waitId, opts.fireAt]);
  return w;
}
const fireAtOf = async (runId: string) => {
  const v = (await rowOf(runId)).fire_at;
  return v === null ? null : new Date(v instanceof Date ? v : (v as string)).toISOString();
};

test('Resume now makes a timer wait due now for the ordinary claim (as the timer: resumedBy timer), once; a claimed wake keeps its lease', async () => {
  const hourLater = new Date(NOW.getTime() + 3_600_000);
  const w = await parkRun({ resumable: false, fireAt: hourLater, step: { type: 'wait' } });
  assert.deepEqual(await store.resumeNow(randomUUID(), w.runId, NOW), { ok: false, why: 'not_waiting' }, "another user's run: nothing (row-level security)");
  assert.equal(await fireAtOf(w.runId), hourLater.toISOString());
  assert.deepEqual(await store.resumeNow(w.ownerId, w.runId, NOW), { ok: true, runId: w.runId });
  assert.deepEqual(await store.resumeNow(w.ownerId, w.runId, NOW), { ok: false, why: 'already_resumed' }, 'a second Resume now');
  const lease = new Date(NOW.getTime() + 30_000);
  const [wake, ...more] = await claimOnly(new Date(NOW.getTime() + 1_000), lease, [w.waitId]);
  assert.deepEqual(more, []);
  assert.deepEqual(wake?.resume, { nodeId: 'wait', resumedBy: 'timer', at: NOW.toISOString() });
  // Claimed: a Resume now then changes nothing, so no second claimer can take the wake before its lease ends.
  assert.deepEqual(await store.resumeNow(w.ownerId, w.runId, new Date(NOW.getTime() + 2_000)), { ok: false, why: 'already_resumed' });
  assert.equal(await fireAtOf(w.runId), lease.toISOString(), 'the lease holds');
  assert.deepEqual(await claimOnly(new Date(NOW.getTime() + 3_000), new Date(NOW.getTime() + 33_000), [w.waitId]), [], 'not claimed twice');

  // A timer that fired (claimed by the timers) before anyone pressed Resume now: the same.
  const fired = await parkRun({ resumable: false, fireAt: new Date(NOW.getTime() - 1_000), step: { type: 'wait' } });
  assert.equal((await claimOnly(NOW, lease, [fired.waitId])).length, 1);
  assert.deepEqual(await store.resumeNow(fired.ownerId, fired.runId, NOW), { ok: false, why: 'already_resumed' });
  assert.equal(await fireAtOf(fired.runId), lease.toISOString());
});

test("Resume now: a retry's wait too; not a wait for a resume (Approve / Reject), nor a Run workflow step waiting for its child", async () => {
  const later = new Date(NOW.getTime() + 600_000);
  const retry = await parkRun({ resumable: false, fireAt: later, step: { nodeId: 'wait', type: 'http_request', retryAt: later.toISOString(), attempts: 1 } });
  assert.deepEqual(await store.resumeNow(retry.ownerId, retry.runId, NOW), { ok: true, runId: retry.runId });
  const approval = await parkRun({ resumable: true, fireAt: later, step: { type: 'wait' } });
  assert.deepEqual(await store.resumeNow(approval.ownerId, approval.runId, NOW), { ok: false, why: 'waits_for_resume' });
  const child = await parkRun({ resumable: false, fireAt: later, step: { type: 'run_workflow' } });
  assert.deepEqual(await store.resumeNow(child.ownerId, child.runId, NOW), { ok: false, why: 'no_timer' }, 'its timer is the timeout');
  const untimed = await parkRun({ resumable: false, fireAt: null, step: { type: 'run_workflow' } });
  assert.deepEqual(await store.resumeNow(untimed.ownerId, untimed.runId, NOW), { ok: false, why: 'no_timer' });
  for (const w of [approval, child, untimed]) {
    assert.equal((await rowOf(w.runId)).resumed_by, null, 'left waiting');
  }
  assert.equal(await fireAtOf(approval.runId), later.toISOString());
  assert.deepEqual(await store.resumeNow(randomUUID(), 'not-a-uuid', NOW), { ok: false, why: 'not_found' });
});

test(
  'Resume now while a replica holds its claim of the same wake waits for it, then leaves the claim alone',
  { skip: process.env.DATABASE_URL ? false : 'needs two connections at once: run with DATABASE_URL (Postgres); PGlite has one' },
  async () => {
    const w = await parkRun({ resumable: false, fireAt: new Date(NOW.getTime() - 1_000), step: { type: 'wait' } });
    const lease = new Date(NOW.getTime() + 30_000);
    let releaseA!: () => void;
    const aHolds = new Promise<void>((resolve) => (releaseA = resolve));
    let claimed = 0;
    const a = testDb.db.transaction(async (exec) => {
      claimed = (await new WaitStore({ ...testDb.db, exec }).claimDue(NOW, lease, 1_000)).filter((x) => x.waitId === w.waitId).length;
      await aHolds;
    });
    await until('the replica holds its claim', async () => claimed > 0 || undefined);
    const pressed = store.resumeNow(w.ownerId, w.runId, NOW);
    await until('Resume now waits on the claim’s lock', async () => {
      const { rows } = await testDb.db.exec(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%run_wait%'`,
      );
      return (rows[0]!.n as number) > 0 || undefined;
    });
    releaseA();
    await a;
    assert.deepEqual(await pressed, { ok: false, why: 'already_resumed' });
    assert.equal(await fireAtOf(w.runId), lease.toISOString(), 'the lease holds: no second claim before it ends');
  },
);
