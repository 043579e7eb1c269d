// Run control (issue 24 item 6) over real HTTP on a real engine + workspace-api + embedded bus
// (PGlite, or Postgres with DATABASE_URL): cancelling a running and a queued run, and what cannot be
// cancelled; a cancel through another replica seen by the poll; run history retention.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { RunStore } from '../src/adapters/run-store.ts';
import { RunCancellations, RunRetention, DEFAULT_RETENTION } from '../src/domain/run-control.ts';
import { json, silentLog, startEngineOn, startEngineStack, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
/** Answers of /hold requests not given yet, and every path the receiver was asked for. */
const held: (() => void)[] = [];
const received: string[] = [];
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      received.push(req.url ?? '');
      if (req.url === '/hold') held.push(() => json(res, 201, { ok: true }));
      else json(res, req.url === '/fail' ? 500 : 201, { ok: true });
    },
  });
  // One run per workflow at a time, so a second Run now stays queued behind a held one.
  ({ app: engine, url: engineUrl } = await startEngineOn(stack, { workflowConcurrency: 1 }));
});
after(async () => {
  for (const answer of held.splice(0)) answer();
  await engine?.close();
  await stack?.close();
});

/** trigger → hold (POST /hold, answered when the test says) → task (Create Task "after {{trigger.n}}"). */
async function createWorkflow(owner: string) {
  const res = await call(owner, 'POST', '/api/v1/workflows', {
    name: 'Hold then task',
    triggerType: 'webhook',
    active: true,
    graph: {
      nodes: [
        { id: 'hold', type: 'http_request', params: { method: 'POST', url: `${stack.receiver!.url}/hold` } },
        { id: 'task', type: 'create_task', params: { title: 'after {{trigger.n}}' } },
      ],
      edges: [
        { from: 'trigger', to: 'hold' },
        { from: 'hold', to: 'task' },
      ],
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
}
const runNow = async (owner: string, wf: { id: string }, n: number) => {
  const res = await call(owner, 'POST', `/api/v1/workflows/${wf.id}/runs`, { payload: { n } });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body as { id: string; status: string };
};
const getRun = async (owner: string, id: string) => (await call(owner, 'GET', `/api/v1/workflow-runs/${id}`)).body;
const tasksOf = async (owner: string) => ((await call(owner, 'GET', '/api/v1/tasks?limit=100')).body.items as { title: string }[]).map((t) => t.title);

describe('POST /api/v1/workflow-runs/:id/cancel', () => {
  test('a running run is cancelled at once and stops before its next step; a queued one never runs', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner);
    const first = await runNow(owner, wf, 1);
    await until('the first run inside its held step', async () => held.length === 1 || undefined);
    const second = await runNow(owner, wf, 2);
    assert.equal((await getRun(owner, second.id)).status, 'queued');

    const cancelled = await call(owner, 'POST', `/api/v1/workflow-runs/${first.id}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.status, 'cancelled');
    assert.ok(cancelled.body.finishedAt, 'a cancelled run is finished');
    const queued = await call(owner, 'POST', `/api/v1/workflow-runs/${second.id}/cancel`);
    assert.equal(queued.status, 200);
    assert.equal(queued.body.status, 'cancelled');

    // The step in flight finishes; the run stops there and keeps that step.
    held.shift()!();
    const done = await until('the first run to keep its finished step', async () => {
      const r = await getRun(owner, first.id);
      return r.steps.length > 0 ? r : undefined;
    });
    assert.equal(done.status, 'cancelled');
    assert.deepEqual(
      done.steps.map((s: { nodeId: string; status: string }) => [s.nodeId, s.status]),
      [['hold', 'succeeded']],
    );

    // A third run goes through, so the queued run's event has been handled by now: it never ran.
    const third = await runNow(owner, wf, 3);
    await until('the third run held', async () => held.length === 1 || undefined);
    held.shift()!();
    await until('the third run done', async () => (await getRun(owner, third.id)).status === 'succeeded' || undefined);
    const second2 = await getRun(owner, second.id);
    assert.equal(second2.status, 'cancelled');
    assert.deepEqual(second2.steps, []);
    assert.deepEqual(await tasksOf(owner), ['after 3'], 'no task from the cancelled runs');
    assert.equal(received.filter((u) => u === '/hold').length, 2, 'the queued run sent nothing');

    // Listed by status.
    const listed = await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs?status=cancelled`);
    assert.deepEqual(listed.body.items.map((r: { id: string }) => r.id).sort(), [first.id, second.id].sort());
  });

  test('a finished run cannot be cancelled (409); another user’s run is 404; read scope is 403', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner);
    const run = await runNow(owner, wf, 1);
    await until('held', async () => held.length === 1 || undefined);
    assert.equal((await call(randomUUID(), 'POST', `/api/v1/workflow-runs/${run.id}/cancel`)).status, 404);
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/cancel`, undefined, 'mcp:read')).status, 403);
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${randomUUID()}/cancel`)).status, 404);
    held.shift()!();
    await until('succeeded', async () => (await getRun(owner, run.id)).status === 'succeeded' || undefined);
    const again = await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/cancel`);
    assert.equal(again.status, 409);
    assert.match(again.body.message, /already finished \(succeeded\)/);
  });
});

describe('error workflow', () => {
  const create = async (owner: string, body: Record<string, unknown>) => {
    const res = await call(owner, 'POST', '/api/v1/workflows', { active: true, ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string };
  };
  const failing = (url: string) => ({
    nodes: [{ id: 'call', type: 'http_request', params: { method: 'POST', url } }],
    edges: [{ from: 'trigger', to: 'call' }],
  });
  const taskGraph = (title: string) => ({ nodes: [{ id: 't', type: 'create_task', params: { title } }], edges: [{ from: 'trigger', to: 't' }] });
  const runsOf = async (owner: string, wf: { id: string }) => (await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs`)).body.items as any[];

  test('a failed run starts the error workflow with {workflow, run, failedNode, error}; a failing error workflow starts none', async () => {
    const owner = randomUUID();
    const last = await create(owner, { name: 'Last resort', triggerType: 'error', graph: taskGraph('never') });
    // The error workflow itself fails, and names another: that one is never started (no chain).
    const handler = await create(owner, {
      name: 'On failure',
      triggerType: 'error',
      errorWorkflowId: last.id,
      graph: {
        nodes: [
          { id: 't', type: 'create_task', params: { title: 'failed: {{trigger.failedNode.id}} in {{trigger.workflow.id}}: {{trigger.error}}' } },
          { id: 'boom', type: 'http_request', params: { method: 'POST', url: `${stack.receiver!.url}/fail` } },
        ],
        edges: [
          { from: 'trigger', to: 't' },
          { from: 't', to: 'boom' },
        ],
      },
    });
    const main = await create(owner, { name: 'Main', triggerType: 'webhook', errorWorkflowId: handler.id, graph: failing(`${stack.receiver!.url}/fail`) });
    const run = await runNow(owner, main, 1);

    const handled = await until('the error workflow’s run', async () => (await runsOf(owner, handler)).find((r) => r.status === 'failed'));
    assert.equal(handled.triggerType, 'error');
    const payload = handled.triggerPayload;
    assert.equal(payload.workflow.id, main.id);
    assert.equal(payload.run.id, run.id);
    assert.equal(payload.run.triggerType, 'manual');
    assert.deepEqual(payload.failedNode.id, 'call');
    assert.equal(payload.failedNode.type, 'http_request');
    assert.match(payload.error, /^node "call" failed: POST .*\/fail answered HTTP 500$/);
    const titles = await tasksOf(owner);
    assert.equal(titles.length, 1);
    assert.match(titles[0]!, new RegExp(`^failed: call in ${main.id}: node "call" failed`));

    // Everything published has been handled (the error workflow's run published before its event was acknowledged).
    await until('no backlog', async () => {
      const h = (await call(owner, 'GET', '/api/v1/workflow-runs/health')).body;
      return (h.backlog.waitingEvents ?? 0) === 0 && h.backlog.unfinishedRuns === 0 ? h : undefined;
    });
    assert.deepEqual(await runsOf(owner, last), [], 'an error workflow’s failure starts no other');
    assert.equal((await runsOf(owner, handler)).length, 1, 'one run of the error workflow per failed run');
  });
});

describe('a cancel through another replica', () => {
  test('the poll finds runs in flight for longer than its interval that were cancelled, and only asks about those', async () => {
    const asked: string[][] = [];
    let now = 1_000;
    const c = new RunCancellations(
      {
        cancelledAmong: async (runs) => {
          asked.push(runs.map((r) => r.eventId));
          return new Set(runs.filter((r) => r.eventId === 'old').map((r) => `${r.workflowId}/${r.eventId}`));
        },
      },
      silentLog,
      1_000,
      () => now,
    );
    const done = c.track({ ownerId: 'o', workflowId: 'w', eventId: 'old' });
    now += 1_500;
    c.track({ ownerId: 'o', workflowId: 'w', eventId: 'new' });
    await c.poll();
    assert.deepEqual(asked, [['old']], 'a run younger than the interval costs no query');
    assert.equal(c.isCancelled({ workflowId: 'w', eventId: 'old' }), true);
    assert.equal(c.isCancelled({ workflowId: 'w', eventId: 'new' }), false);
    done();
    assert.equal(c.isCancelled({ workflowId: 'w', eventId: 'old' }), false, 'forgotten once the run ended');
  });

  test('the store answers which runs are cancelled, across owners, from the database', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner);
    const run = await runNow(owner, wf, 1);
    await until('held', async () => held.length === 1 || undefined);
    const store = new RunStore(stack.testDb.db);
    const row = await getRun(owner, run.id);
    const key = { ownerId: owner, workflowId: wf.id, eventId: row.eventId };
    assert.deepEqual([...(await store.cancelledAmong([key]))], []);
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/cancel`)).status, 200);
    assert.deepEqual([...(await store.cancelledAmong([key, { ownerId: randomUUID(), workflowId: wf.id, eventId: row.eventId }]))], [`${wf.id}/${row.eventId}`]);
    held.shift()!();
    await until('the run ends', async () => (await getRun(owner, run.id)).steps.length > 0 || undefined);
  });
});

describe('run history retention', () => {
  test('finished runs older than the age and beyond the per-workflow count are deleted in batches; unfinished runs are kept', async () => {
    const db = stack.testDb.db;
    const store = new RunStore(db);
    const owner = randomUUID();
    const other = randomUUID();
    const wfA = randomUUID();
    const wfB = randomUUID();
    const wfC = randomUUID();
    const at = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    const write = (ownerId: string, workflowId: string, eventId: string, status: 'succeeded' | 'running') =>
      store.record({ ownerId, workflowId, eventId, status, startedAt: at(0), ...(status === 'running' ? {} : { finishedAt: at(0) }) });
    // wfA: 6 finished runs aged 0 to 50 days and one old unfinished run; wfB (another owner): 3 recent runs.
    for (let i = 0; i < 6; i++) await write(owner, wfA, `a${i}`, 'succeeded');
    await write(owner, wfA, 'a-running', 'running');
    for (let i = 0; i < 3; i++) await write(other, wfB, `b${i}`, 'succeeded');
    const ages = [0, 10, 20, 25, 40, 50];
    for (let i = 0; i < 6; i++) await db.exec(`UPDATE "engine"."run" SET created_at = $1 WHERE event_id = $2`, [at(ages[i]!), `a${i}`]);
    for (let i = 0; i < 3; i++) await db.exec(`UPDATE "engine"."run" SET created_at = $1 WHERE event_id = $2`, [at(i), `b${i}`]);
    await db.exec(`UPDATE "engine"."run" SET created_at = $1 WHERE event_id = 'a-running'`, [at(90)]);
    // wfC: one finished run, within every rule.
    await write(owner, wfC, 'c0', 'succeeded');
    const left = async () =>
      (await db.exec(`SELECT event_id FROM "engine"."run" WHERE workflow_id = ANY($1::uuid[])`, [[wfA, wfB, wfC]])).rows.map((r) => String(r.event_id)).sort();

    // 30 days: a4 (40 days) and a5 (50 days) go; batches of one, so two batches and a third that finds nothing.
    const calls: number[] = [];
    const counting = { prune: async (rule: Parameters<RunStore['prune']>[0], limit: number) => (calls.push(limit), store.prune(rule, limit)) };
    const byAge = new RunRetention(counting, { ...DEFAULT_RETENTION, maxAgeDays: 30, batchSize: 1 }, () => new Date(), silentLog);
    assert.equal(await byAge.pruneOnce(), 2);
    assert.equal(calls.length, 3, 'batch by batch until one deletes less than a batch');
    assert.deepEqual(await left(), ['a-running', 'a0', 'a1', 'a2', 'a3', 'b0', 'b1', 'b2', 'c0']);

    // Two per workflow: the two newest finished runs of each workflow stay, the unfinished one too
    // (the other tests' workflows are pruned as well, so the count is not asserted).
    const byCount = new RunRetention(store, { ...DEFAULT_RETENTION, maxAgeDays: null, keepPerWorkflow: 2 }, () => new Date(), silentLog);
    assert.ok((await byCount.pruneOnce()) >= 3);
    assert.deepEqual(await left(), ['a-running', 'a0', 'a1', 'b0', 'b1', 'c0']);

    // Off (RUN_RETENTION_DAYS=0, no count): nothing is deleted, and no timer starts.
    const off = new RunRetention(store, { ...DEFAULT_RETENTION, maxAgeDays: null, keepPerWorkflow: null }, () => new Date(), silentLog);
    assert.equal(off.enabled, false);
    assert.equal(await off.pruneOnce(), 0);
  });

  test("a workflow's own retention (days and/or runs) replaces the global one for its runs only, in the same rounds", async () => {
    const db = stack.testDb.db;
    const store = new RunStore(db);
    const owner = randomUUID();
    const [short, long, counted, plain] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const at = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    // Each workflow: finished runs aged 0, 5, 20 and 40 days.
    const ages = [0, 5, 20, 40];
    for (const wf of [short, long, counted, plain]) {
      for (const age of ages) {
        await store.record({ ownerId: owner, workflowId: wf, eventId: `${age}`, status: 'succeeded', startedAt: at(0), finishedAt: at(0) });
        await db.exec(`UPDATE "engine"."run" SET created_at = $1 WHERE workflow_id = $2 AND event_id = $3`, [at(age), wf, `${age}`]);
      }
    }
    await store.record({ ownerId: owner, workflowId: short, eventId: 'running', status: 'running', startedAt: at(0) });
    await db.exec(`UPDATE "engine"."run" SET created_at = $1 WHERE workflow_id = $2 AND event_id = 'running'`, [at(90), short]);
    const left = async (wf: string) =>
      (await db.exec(`SELECT event_id FROM "engine"."run" WHERE workflow_id = $1 ORDER BY created_at DESC`, [wf])).rows.map((r) => String(r.event_id));

    // Global: 30 days. short: 3 days; long: 365 days; counted: the 2 newest (age from the global rule).
    const overrides = [
      { ownerId: owner, workflowId: short, days: 3 },
      { ownerId: owner, workflowId: long, days: 365 },
      { ownerId: owner, workflowId: counted, runs: 2 },
    ];
    const calls: Parameters<RunStore['prune']>[0][] = [];
    const counting = { prune: async (rule: Parameters<RunStore['prune']>[0], limit: number) => (calls.push(rule), store.prune(rule, limit)) };
    const retention = new RunRetention(
      counting,
      { ...DEFAULT_RETENTION, maxAgeDays: 30 },
      () => new Date(),
      silentLog,
      () => overrides,
    );
    assert.ok((await retention.pruneOnce()) >= 5);
    assert.deepEqual(await left(short), ['0', 'running'], 'own 3 days; an unfinished run is kept');
    assert.deepEqual(await left(long), ['0', '5', '20', '40'], 'own 365 days: the global 30 days does not apply');
    assert.deepEqual(await left(counted), ['0', '5'], 'own 2 runs');
    assert.deepEqual(await left(plain), ['0', '5', '20'], 'no own retention: the global 30 days');
    assert.deepEqual(
      calls.map((r) => r.workflow?.workflowId ?? `global except ${[...(r.except ?? [])].length}`),
      ['global except 3', short, long, counted],
      'one global rule leaving the three out, then one rule each',
    );

    // Global retention off: a workflow's own retention still applies, and the timer runs for it.
    await store.record({ ownerId: owner, workflowId: short, eventId: 'late', status: 'succeeded', startedAt: at(0), finishedAt: at(0) });
    await db.exec(`UPDATE "engine"."run" SET created_at = $1 WHERE workflow_id = $2 AND event_id = 'late'`, [at(10), short]);
    const onlyOwn = new RunRetention(
      store,
      { ...DEFAULT_RETENTION, maxAgeDays: null, keepPerWorkflow: null },
      () => new Date(),
      silentLog,
      () => overrides,
    );
    assert.equal(onlyOwn.enabled, false);
    assert.equal(await onlyOwn.pruneOnce(), 1);
    assert.deepEqual(await left(short), ['0', 'running']);
  });

  test('many workflows with their own retention: a round stops after maxBatches full batches, the next one goes on where it stopped', async () => {
    // Each workflow's first batch of a round is full, its second finds nothing more.
    const seen: string[] = [];
    const store = {
      prune: async (rule: { workflow?: { workflowId: string } }, limit: number) => {
        const id = rule.workflow?.workflowId ?? 'global';
        seen.push(id);
        return seen.at(-2) === id ? 0 : limit;
      },
    };
    const overrides = ['w1', 'w2', 'w3', 'w4'].map((workflowId) => ({ ownerId: 'o', workflowId, runs: 1 }));
    const retention = new RunRetention(
      store,
      { ...DEFAULT_RETENTION, maxAgeDays: null, maxBatches: 2, batchSize: 10 },
      () => new Date(),
      silentLog,
      () => overrides,
    );
    assert.equal(await retention.pruneOnce(), 20);
    assert.deepEqual(seen.splice(0), ['w1', 'w1', 'w2'], 'w1 full then done, w2 full: two full batches, the round ends');
    await retention.pruneOnce();
    assert.deepEqual(seen.splice(0), ['w3', 'w3', 'w4'], 'the next round starts at w3');
    await retention.pruneOnce();
    assert.deepEqual(seen.splice(0), ['w1', 'w1', 'w2'], 'and then comes round again');
  });
});
