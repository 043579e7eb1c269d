// The four trigger types besides the webhook (issue 15, docs/triggers.md), end to end over real HTTP
// on a real workspace-api + engine + embedded bus (PGlite, or Postgres with DATABASE_URL):
// schedules driven by a controllable clock (no test waits real minutes) with two engine replicas,
// note and entity triggers from workspace-api's outbox (none for a rolled-back change), the loop guard.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { EventBus } from '@flowdesk/bus';
import { MAX_TRIGGER_DEPTH } from '@flowdesk/contracts';
import { APP_ROLE, type TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, type Service } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import type { GuardedHttpClient } from '@flowdesk/service-kit';
import type { WorkspaceClient } from '../src/adapters/workspace-client.ts';
import { json, startEngineStack, type EngineStack, type TestServer, userCaller } from './support.ts';
import { until } from '@flowdesk/service-kit/testing';

const keys = generateSigningKeys();
let stack: EngineStack;
let testDb: TestDatabase;
let bus: EventBus;
let apiUrl: string;
const engines: Service[] = [];
let engineUrl: string;
let workspace: WorkspaceClient;
let http: GuardedHttpClient;
let receiver: TestServer;
/** The engines' clock: a test moves time by setting it. */
let now = new Date('2026-03-02T09:00:30.000Z');
const setClock = (iso: string) => (now = new Date(iso));

const call = userCaller(keys, () => ({ apiUrl, engineUrl }));

const finished = (r: any) => ['succeeded', 'failed', 'skipped'].includes(r.status);
const runsOf = async (userId: string, workflowId: string) => (await call(userId, 'GET', `/api/v1/workflows/${workflowId}/runs?limit=100`)).body.items as any[];
const finishedRuns = async (userId: string, workflowId: string) => (await runsOf(userId, workflowId)).filter(finished);

async function createWorkflow(owner: string, body: Record<string, unknown>) {
  const res = await call(owner, 'POST', '/api/v1/workflows', { name: 'Triggered', active: true, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
}
const notify = (body: Record<string, unknown>) => ({
  nodes: [{ id: 'notify', type: 'http_request', params: { method: 'POST', url: `${receiver.url}/hook`, body } }],
  edges: [{ from: 'trigger', to: 'notify' }],
});

/** The engine's schedule row (the test reads the engine's bookkeeping to know a change was applied). */
async function scheduleOf(workflowId: string) {
  const { rows } = await testDb.db.exec('SELECT enabled, next_tick, pending_event FROM "engine"."schedule" WHERE workflow_id = $1', [workflowId]);
  return rows[0] as { enabled: boolean; next_tick: Date | string; pending_event: unknown } | undefined;
}
const nextTickOf = async (workflowId: string) => {
  const s = await scheduleOf(workflowId);
  return s?.enabled ? new Date(String(s.next_tick instanceof Date ? s.next_tick.toISOString() : s.next_tick)).toISOString() : undefined;
};

async function startEngine(): Promise<Service> {
  const engine = await buildApp({
    bus,
    db: testDb.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    http,
    workspace,
    logLevel: process.env.TEST_LOG ?? 'silent',
    clock: () => now,
    samplePayloadIntervalMs: 0,
    scheduler: { pollMs: Number(process.env.POLL ?? 20) },
  });
  engines.push(engine);
  return engine;
}

before(async () => {
  stack = await startEngineStack({ keys, receiver: (_req, res) => json(res, 201, { ok: true }), outboxPollMs: 50, apiLogLevel: process.env.TEST_LOG });
  ({ testDb, bus, apiUrl, workspace, http } = stack);
  receiver = stack.receiver!;
  // Two replicas on one database and bus: one run per tick however many schedulers run.
  engineUrl = await listen(await startEngine(), 0);
  await startEngine().then((e) => e.ready());
});
after(async () => {
  for (const e of engines) await e.close();
  await stack?.close();
});

describe('schedule trigger', () => {
  test('settings are checked on save: five fields, a known time zone', async () => {
    const owner = randomUUID();
    const bad = await call(owner, 'POST', '/api/v1/workflows', { name: 's', triggerType: 'schedule', triggerConfig: { cron: '* * * * * *' } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /triggerConfig\.cron.*five fields/);
    const zone = await call(owner, 'POST', '/api/v1/workflows', {
      name: 's',
      triggerType: 'schedule',
      triggerConfig: { cron: '0 9 * * *', timezone: 'Mars/Olympus' },
    });
    assert.equal(zone.status, 400);
    assert.match(zone.body.message, /time zone/);
    const noSettings = await call(owner, 'POST', '/api/v1/workflows', { name: 's', triggerType: 'schedule', active: true });
    assert.equal(noSettings.status, 400, 'an active schedule needs its settings');
  });

  test('every minute by the clock, two engine replicas: one run per tick, on the minute; ticks missed while down run once', async () => {
    const owner = randomUUID();
    setClock('2026-03-02T09:00:30.000Z');
    const wf = await createWorkflow(owner, {
      triggerType: 'schedule',
      triggerConfig: { cron: '* * * * *', timezone: 'Europe/Berlin' },
      graph: notify({ at: '{{trigger.scheduledFor}}' }),
    });
    assert.equal(await until('the engines to record the schedule', () => nextTickOf(wf.id)), '2026-03-02T09:01:00.000Z');

    for (let minute = 1; minute <= 4; minute++) {
      setClock(`2026-03-02T09:0${minute}:00.400Z`);
      const runs = await until(`the run of minute ${minute}`, async () => {
        const r = await finishedRuns(owner, wf.id);
        return r.length >= minute && r;
      });
      assert.equal(runs.length, minute, 'one run per tick, however many replicas tick');
      assert.equal(await until('the next tick', async () => (await nextTickOf(wf.id)) === `2026-03-02T09:0${minute + 1}:00.000Z`), true);
    }
    const runs = await finishedRuns(owner, wf.id);
    assert.deepEqual(
      runs.map((r) => r.triggerPayload.scheduledFor).sort(),
      ['09:01', '09:02', '09:03', '09:04'].map((m) => `2026-03-02T${m}:00.000Z`),
      'each tick exactly on its minute: no drift',
    );
    for (const r of runs) {
      assert.equal(r.status, 'succeeded', JSON.stringify(r));
      assert.equal(r.triggerType, 'schedule');
      assert.equal(r.triggerPayload.missedTicks, 0);
    }

    // Down for ten minutes (nobody ticked): the missed ticks give one run (run_once, the default).
    setClock('2026-03-02T09:15:30.000Z');
    const late = await until('the catch-up run', async () => {
      const r = await finishedRuns(owner, wf.id);
      return r.length === 5 && r.find((x) => x.triggerPayload.scheduledFor === '2026-03-02T09:15:00.000Z');
    });
    assert.equal(late.triggerPayload.missedTicks, 10, '09:05 … 09:14 got no run of their own');
    assert.equal(await nextTickOf(wf.id), '2026-03-02T09:16:00.000Z');
    assert.equal((await call(owner, 'PATCH', `/api/v1/workflows/${wf.id}`, { active: false })).status, 200);
    await until('the schedule to be disabled', async () => (await scheduleOf(wf.id))?.enabled === false);
  });

  test('missed: skip — ticks missed while down give no run; the next on-time tick runs', async () => {
    const owner = randomUUID();
    setClock('2026-03-02T10:00:10.000Z');
    const wf = await createWorkflow(owner, {
      triggerType: 'schedule',
      triggerConfig: { cron: '*/5 * * * *', missed: 'skip' },
      graph: notify({ at: '{{trigger.scheduledFor}}' }),
    });
    assert.equal(await until('the schedule', () => nextTickOf(wf.id)), '2026-03-02T10:05:00.000Z');
    setClock('2026-03-02T10:31:30.000Z'); // 10:05 … 10:30 missed (the last one by 90 s, past lateAfterMs)
    assert.equal(await until('the missed ticks to be skipped', async () => (await nextTickOf(wf.id)) === '2026-03-02T10:35:00.000Z'), true);
    assert.equal((await runsOf(owner, wf.id)).length, 0);
    setClock('2026-03-02T10:35:00.200Z');
    const [run] = await until('the on-time run', async () => {
      const r = await finishedRuns(owner, wf.id);
      return r.length === 1 && r;
    });
    assert.equal(run.triggerPayload.scheduledFor, '2026-03-02T10:35:00.000Z');
    await call(owner, 'PATCH', `/api/v1/workflows/${wf.id}`, { active: false });
  });
});

describe('note and entity triggers', () => {
  test('a note trigger runs once per committed matching change, with the note as {{trigger.note.*}}; none for a rolled-back change', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, {
      triggerType: 'note',
      triggerConfig: { tag: 'urgent' },
      graph: notify({ title: '{{trigger.note.title}}', event: '{{trigger.event}}' }),
    });
    // The workflow must be in the engine's cache before the change (a change before it existed starts nothing).
    await until('the engine to know the workflow', async () => (await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs`)).status === 200);

    // A change that rolls back: the outbox row is written in its transaction, so it goes too.
    await testDb.db.session(async (exec) => {
      await exec('BEGIN');
      await exec(`SELECT set_config('role', '${APP_ROLE}', true), set_config('app.user_id', $1, true)`, [owner]);
      await exec(`INSERT INTO workspace.note (id, owner_id, title, tags, updated_at) VALUES (gen_random_uuid(), $1, 'rolled back', ARRAY['urgent'], now())`, [
        owner,
      ]);
      await exec('ROLLBACK');
    });
    const note = await call(owner, 'POST', '/api/v1/notes', { title: 'Call Ada', content: 'today', tags: ['urgent'] });
    assert.equal(note.status, 201, JSON.stringify(note.body));
    assert.equal((await call(owner, 'POST', '/api/v1/notes', { title: 'Not tagged', tags: ['later'] })).status, 201);
    const [created] = await until('the run of the created note', async () => {
      const r = await finishedRuns(owner, wf.id);
      return r.length >= 1 && r;
    });
    assert.equal(created.triggerType, 'note');
    assert.equal(created.triggerPayload.event, 'created');
    assert.equal(created.triggerPayload.note.title, 'Call Ada');
    assert.deepEqual(created.steps[0].input.body, { title: 'Call Ada', event: 'created' });

    assert.equal((await call(owner, 'PATCH', `/api/v1/notes/${note.body.id}`, { title: 'Call Ada back' })).status, 200);
    const runs = await until('the run of the update', async () => {
      const r = await finishedRuns(owner, wf.id);
      return r.length >= 2 && r;
    });
    const updated = runs.find((r) => r.triggerPayload.event === 'updated');
    assert.equal(updated.triggerPayload.note.title, 'Call Ada back');
    assert.equal(updated.triggerPayload.previous.title, 'Call Ada');
    // The outbox is drained in order: once both runs exist, nothing else is on its way.
    await until('the outbox to drain', async () => (await testDb.db.exec('SELECT count(*)::int AS n FROM workspace.outbox')).rows[0]!.n === 0);
    assert.equal((await runsOf(owner, wf.id)).length, 2, 'one run per committed matching change: none for the rolled-back note or the untagged one');
  });

  test('an entity trigger on completed tasks gives before and after; other events of the task start nothing', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, {
      triggerType: 'entity',
      triggerConfig: { entity: 'task', events: ['completed'] },
      graph: notify({ done: '{{trigger.after.title}}' }),
    });
    await until('the engine to know the workflow', async () => (await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs`)).status === 200);
    const task = await call(owner, 'POST', '/api/v1/tasks', { title: 'Ship it' });
    assert.equal(task.status, 201);
    assert.equal((await call(owner, 'PATCH', `/api/v1/tasks/${task.body.id}`, { priority: 'high' })).status, 200);
    assert.equal((await call(owner, 'PATCH', `/api/v1/tasks/${task.body.id}`, { status: 'done' })).status, 200);
    const [run] = await until('the completion run', async () => {
      const r = await finishedRuns(owner, wf.id);
      return r.length >= 1 && r;
    });
    assert.equal(run.triggerType, 'entity');
    assert.equal(run.triggerPayload.entity, 'task');
    assert.equal(run.triggerPayload.event, 'completed');
    assert.equal(run.triggerPayload.before.status, 'todo');
    assert.equal(run.triggerPayload.after.status, 'done');
    assert.equal(run.triggerPayload.after.priority, 'high');
    assert.equal((await call(owner, 'DELETE', `/api/v1/tasks/${task.body.id}`)).status, 204);
    await until('the outbox to drain', async () => (await testDb.db.exec('SELECT count(*)::int AS n FROM workspace.outbox')).rows[0]!.n === 0);
    assert.equal((await runsOf(owner, wf.id)).length, 1);
  });

  test('loop guard: a Create Task node’s task never re-triggers its own workflow; a chain across workflows stops at the depth limit', async () => {
    const owner = randomUUID();
    const createsTask = (title: string) => ({ nodes: [{ id: 'make', type: 'create_task', params: { title } }], edges: [{ from: 'trigger', to: 'make' }] });
    const a = await createWorkflow(owner, {
      name: 'A',
      triggerType: 'entity',
      triggerConfig: { entity: 'task', events: ['created'] },
      graph: createsTask('A: {{trigger.after.title}}'),
    });
    await until('the engine to know A', async () => (await call(owner, 'GET', `/api/v1/workflows/${a.id}/runs`)).status === 200);
    assert.equal((await call(owner, 'POST', '/api/v1/tasks', { title: 'seed' })).status, 201);
    await until('A to run once', async () => (await finishedRuns(owner, a.id)).length === 1);
    await until('the outbox to drain', async () => (await testDb.db.exec('SELECT count(*)::int AS n FROM workspace.outbox')).rows[0]!.n === 0);
    const tasks = async () => (await call(owner, 'GET', '/api/v1/tasks?limit=100')).body.items as { title: string }[];
    await until('A’s task', async () => (await tasks()).some((t) => t.title === 'A: seed'));
    assert.equal((await finishedRuns(owner, a.id)).length, 1, 'the task A made did not start A again');

    // B reacts to every created task too: A's and B's tasks start each other, up to the depth limit.
    const b = await createWorkflow(owner, {
      name: 'B',
      triggerType: 'entity',
      triggerConfig: { entity: 'task', events: ['created'] },
      graph: createsTask('B: {{trigger.after.title}}'),
    });
    await until('the engine to know B', async () => (await call(owner, 'GET', `/api/v1/workflows/${b.id}/runs`)).status === 200);
    assert.equal((await call(owner, 'POST', '/api/v1/tasks', { title: 'chain' })).status, 201);
    // Depth 0 (the person's task) starts A and B; each workflow-made task at depth d < limit starts the other one.
    const expected = 2 * MAX_TRIGGER_DEPTH;
    await until(
      'the chain to run to its limit',
      async () => (await finishedRuns(owner, a.id)).length - 1 + (await finishedRuns(owner, b.id)).length >= expected,
    );
    await until('the outbox to drain', async () => (await testDb.db.exec('SELECT count(*)::int AS n FROM workspace.outbox')).rows[0]!.n === 0);
    const deepest = (await tasks()).filter((t) => t.title.startsWith('A: B: A: B: A:') || t.title.startsWith('B: A: B: A: B:'));
    assert.equal(deepest.length, 2, 'the chain reached depth 5 on both sides');
    assert.ok(!(await tasks()).some((t) => /^(?:[AB]: ){6}/.test(t.title)), 'and went no deeper');
    assert.equal((await finishedRuns(owner, a.id)).length - 1 + (await finishedRuns(owner, b.id)).length, expected);
  });

  test('loop guard: a note (or calendar entry) a run creates never re-triggers its own workflow', async () => {
    const owner = randomUUID();
    const notes = await createWorkflow(owner, {
      name: 'Note → note',
      triggerType: 'note',
      triggerConfig: {},
      graph: { nodes: [{ id: 'make', type: 'create_note', params: { title: 'Re: {{trigger.note.title}}' } }], edges: [{ from: 'trigger', to: 'make' }] },
    });
    const entries = await createWorkflow(owner, {
      name: 'Entry → entry',
      triggerType: 'entity',
      triggerConfig: { entity: 'calendar_entry', events: ['created'] },
      graph: {
        nodes: [{ id: 'make', type: 'create_calendar_entry', params: { title: 'Prep: {{trigger.after.title}}', startsAt: '2026-12-01T09:00:00Z' } }],
        edges: [{ from: 'trigger', to: 'make' }],
      },
    });
    for (const wf of [notes, entries])
      await until('the engine to know it', async () => (await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs`)).status === 200);
    assert.equal((await call(owner, 'POST', '/api/v1/notes', { title: 'one' })).status, 201);
    assert.equal((await call(owner, 'POST', '/api/v1/notes', { title: 'two' })).status, 201);
    assert.equal((await call(owner, 'POST', '/api/v1/calendar-entries', { title: 'Demo', startsAt: '2026-12-02T10:00:00Z' })).status, 201);
    await until('one run per person-made note', async () => (await finishedRuns(owner, notes.id)).length === 2);
    await until('one run per person-made entry', async () => (await finishedRuns(owner, entries.id)).length === 1);
    await until('the outbox to drain', async () => (await testDb.db.exec('SELECT count(*)::int AS n FROM workspace.outbox')).rows[0]!.n === 0);
    const titles = ((await call(owner, 'GET', '/api/v1/notes?limit=100')).body.items as { title: string }[]).map((n) => n.title).sort();
    assert.deepEqual(titles, ['Re: one', 'Re: two', 'one', 'two'], 'the runs’ notes started no run');
    assert.equal((await finishedRuns(owner, notes.id)).length, 2);
    assert.equal((await finishedRuns(owner, entries.id)).length, 1);
    const entryTitles = ((await call(owner, 'GET', '/api/v1/calendar-entries')).body.items as { title: string }[]).map((e) => e.title).sort();
    assert.deepEqual(entryTitles, ['Demo', 'Prep: Demo']);
  });
});
