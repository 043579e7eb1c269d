import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TriggerEvent, WorkflowGraph } from '@flowdesk/contracts';
import { createGuardedHttpClient, type GuardedHttpClient } from '@flowdesk/service-kit';
import { executeWorkflow, planGraph } from '../src/domain/executor.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import type { CreateTaskInput, HttpClient } from '../src/domain/ports.ts';
import { parseAllowlist, SsrfPolicy } from '@flowdesk/service-kit';
import { fixedClock, fixedEvent, json, silentLog, startServer, type RunExtras, type TestServer } from './support.ts';

let server: TestServer;
let http: GuardedHttpClient;
before(async () => {
  server = await startServer((req, res) => {
    if (req.url === '/fail') return json(res, 500, { error: 'boom' });
    if (req.url === '/slow') return void setTimeout(() => json(res, 200, {}), 2_000);
    json(res, 201, { id: 'EXT-42', received: JSON.parse(req.body || 'null') });
  });
  http = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('127.0.0.1')) });
});
after(async () => {
  await http.close();
  await server.close();
});

const event = (payload: Record<string, unknown>, headers: Record<string, string> = {}) => fixedEvent('evt-1', payload, headers);

function fakeTasks() {
  const calls: Array<{ ownerId: string; input: CreateTaskInput }> = [];
  return {
    calls,
    createTask: async (ownerId: string, input: CreateTaskInput) => {
      calls.push({ ownerId, input });
      return { id: `task-${calls.length}`, ...input, status: 'todo' };
    },
  };
}

function run(graph: WorkflowGraph, ev: TriggerEvent, tasks = fakeTasks(), extra: RunExtras = {}, client: HttpClient = http) {
  const { ports, ...groups } = extra;
  return executeWorkflow({
    workflow: { id: ev.workflowId, ownerId: ev.ownerId, graph },
    event: ev,
    ports: { http: client, createTask: tasks.createTask, clock: fixedClock(), log: silentLog, sandbox: inProcessSandbox, ...ports },
    ...groups,
  });
}

const mainGraph = (url: string): WorkflowGraph => ({
  nodes: [
    { id: 'check', type: 'condition', params: { left: '{{trigger.status}}', operator: 'equals', right: 'paid' } },
    {
      id: 'http',
      type: 'http_request',
      params: {
        method: 'POST',
        url,
        headers: { Authorization: 'Bearer top-secret' },
        body: { customer: '{{trigger.customer.name}}', amount: '{{trigger.amount}}' },
      },
    },
    {
      id: 'task',
      type: 'create_task',
      params: { title: 'Follow up {{trigger.customer.name}} ({{nodes.http.body.id}})', notes: 'HTTP said {{nodes.http.status}}', dueDate: '{{trigger.due}}' },
    },
  ],
  edges: [
    { from: 'trigger', to: 'check' },
    { from: 'check', to: 'http', branch: 'true' },
    { from: 'http', to: 'task' },
  ],
});

test('trigger → condition (true) → HTTP → create task: the request carries the rendered body and the task uses its answer', async () => {
  const tasks = fakeTasks();
  const seen = server.received.length;
  const ev = event({ status: 'paid', customer: { name: 'Ada' }, amount: 99, due: '2025-03-10' });
  const runRecord = await run(mainGraph(`${server.url}/orders`), ev, tasks);

  assert.equal(runRecord.status, 'succeeded');
  assert.equal(runRecord.error, null);
  assert.deepEqual(runRecord.warnings, []);
  assert.deepEqual(JSON.parse(server.received[seen]!.body), { customer: 'Ada', amount: 99 });
  assert.deepEqual(tasks.calls, [{ ownerId: ev.ownerId, input: { title: 'Follow up Ada (EXT-42)', notes: 'HTTP said 201', dueDate: '2025-03-10' } }]);

  assert.deepEqual(
    runRecord.steps.map((s) => [s.nodeId, s.type, s.status]),
    [
      ['check', 'condition', 'succeeded'],
      ['http', 'http_request', 'succeeded'],
      ['task', 'create_task', 'succeeded'],
    ],
  );
  const [check, httpStep, task] = runRecord.steps;
  assert.deepEqual(check!.output, { result: true });
  assert.equal((httpStep!.input as { headers: Record<string, string> }).headers.Authorization, 'Bearer ***', 'secrets are masked in the recorded input');
  assert.equal((httpStep!.output as { status: number }).status, 201);
  assert.equal((task!.output as { id: string }).id, 'task-1');
  for (const s of runRecord.steps) {
    assert.ok(Date.parse(s.startedAt) >= Date.parse(runRecord.startedAt));
    assert.ok(s.durationMs >= 0);
  }
  assert.ok(Date.parse(runRecord.finishedAt) > Date.parse(runRecord.startedAt));
  assert.equal(runRecord.durationMs, Date.parse(runRecord.finishedAt) - Date.parse(runRecord.startedAt));
});

test('a false condition without a false edge ends the run as skipped, with no action taken', async () => {
  const tasks = fakeTasks();
  const seen = server.received.length;
  const r = await run(mainGraph(`${server.url}/orders`), event({ status: 'refunded', customer: { name: 'Ada' } }), tasks);
  assert.equal(r.status, 'skipped');
  assert.equal(r.error, null);
  assert.equal(server.received.length, seen, 'no HTTP request was sent');
  assert.equal(tasks.calls.length, 0);
  assert.deepEqual(
    r.steps.map((s) => [s.nodeId, s.status]),
    [
      ['check', 'succeeded'],
      ['http', 'skipped'],
      ['task', 'skipped'],
    ],
  );
  assert.deepEqual(r.steps[0]!.output, { result: false });
});

test('a false edge is followed when the condition is false', async () => {
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'check', type: 'condition', params: { left: '{{trigger.vip}}', operator: 'equals', right: 'yes' } },
      { id: 'vip', type: 'create_task', params: { title: 'VIP {{trigger.name}}' } },
      { id: 'normal', type: 'create_task', params: { title: 'Normal {{trigger.name}}' } },
    ],
    edges: [
      { from: 'trigger', to: 'check' },
      { from: 'check', to: 'vip', branch: 'true' },
      { from: 'check', to: 'normal', branch: 'false' },
    ],
  };
  const tasks = fakeTasks();
  const r = await run(graph, event({ vip: 'no', name: 'Bo' }), tasks);
  assert.equal(r.status, 'succeeded');
  assert.deepEqual(
    tasks.calls.map((c) => c.input.title),
    ['Normal Bo'],
  );
  assert.deepEqual(
    r.steps.map((s) => [s.nodeId, s.status]),
    [
      ['check', 'succeeded'],
      ['vip', 'skipped'],
      ['normal', 'succeeded'],
    ],
  );
});

test('a failing node fails the run, records the error on the step and the run, and stops there', async () => {
  const tasks = fakeTasks();
  const graph = mainGraph(`${server.url}/fail`);
  const r = await run(graph, event({ status: 'paid', customer: { name: 'Ada' } }), tasks);
  assert.equal(r.status, 'failed');
  assert.match(r.error!, /^node "http" failed: POST http:\/\/127\.0\.0\.1:\d+\/fail answered HTTP 500$/, 'no retry policy: one attempt');
  const httpStep = r.steps.find((s) => s.nodeId === 'http')!;
  assert.equal(httpStep.status, 'failed');
  assert.match(httpStep.error!, /HTTP 500/);
  assert.deepEqual((httpStep.output as { body: unknown }).body, { error: 'boom' }, 'the failing answer is kept for debugging');
  assert.equal(tasks.calls.length, 0);
  assert.equal(
    r.steps.some((s) => s.nodeId === 'task'),
    false,
    'nothing after the failure ran',
  );
});

test('an SSRF refusal fails the run with the guard message', async () => {
  const r = await run(mainGraph('http://169.254.169.254/latest/meta-data/'), event({ status: 'paid' }));
  assert.equal(r.status, 'failed');
  assert.match(r.error!, /refused by the SSRF guard: 169\.254\.169\.254 is a link-local/);
});

test('a failing create-task port fails the run', async () => {
  const graph: WorkflowGraph = { nodes: [{ id: 't', type: 'create_task', params: { title: 'x' } }], edges: [{ from: 'trigger', to: 't' }] };
  const r = await run(graph, event({}), {
    calls: [],
    createTask: async () => {
      throw new Error('workspace-api answered 422: projectId is not a uuid');
    },
  });
  assert.equal(r.status, 'failed');
  assert.equal(r.error, 'node "t" failed: workspace-api answered 422: projectId is not a uuid');
});

test('missing variables produce warnings on the run (naming the node) without failing it', async () => {
  const graph: WorkflowGraph = {
    nodes: [{ id: 'task', type: 'create_task', params: { title: 'Call {{trigger.customer.nmae}} now', projectId: '{{trigger.project}}' } }],
    edges: [{ from: 'trigger', to: 'task' }],
  };
  const tasks = fakeTasks();
  const r = await run(graph, event({ customer: { name: 'Ada' } }), tasks);
  assert.equal(r.status, 'succeeded');
  assert.deepEqual(r.warnings, ['node "task": {{trigger.customer.nmae}} is empty: no such field', 'node "task": {{trigger.project}} is empty: no such field']);
  assert.deepEqual(tasks.calls[0]!.input, { title: 'Call  now' }, 'an empty optional field is left out');
});

test('a title that renders empty fails the create-task node with a clear error', async () => {
  const graph: WorkflowGraph = { nodes: [{ id: 't', type: 'create_task', params: { title: '{{trigger.title}}' } }], edges: [{ from: 'trigger', to: 't' }] };
  const r = await run(graph, event({}));
  assert.equal(r.status, 'failed');
  assert.match(r.error!, /title is empty/);
});

test('join: a node after two branches runs once, after both, when at least one reached it', async () => {
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'a', type: 'create_task', params: { title: 'A' } },
      { id: 'gate', type: 'condition', params: { left: '{{trigger.go}}', operator: 'exists' } },
      { id: 'b', type: 'create_task', params: { title: 'B' } },
      { id: 'join', type: 'create_task', params: { title: 'after {{nodes.a.id}} and [{{nodes.b.id}}]' } },
    ],
    edges: [
      { from: 'trigger', to: 'a' },
      { from: 'trigger', to: 'gate' },
      { from: 'gate', to: 'b', branch: 'true' },
      { from: 'a', to: 'join' },
      { from: 'b', to: 'join' },
    ],
  };
  const both = fakeTasks();
  const r1 = await run(graph, event({ go: 1 }), both);
  assert.deepEqual(
    both.calls.map((c) => c.input.title),
    ['A', 'B', 'after task-1 and [task-2]'],
  );
  assert.equal(r1.steps.filter((s) => s.nodeId === 'join').length, 1);

  const one = fakeTasks();
  const r2 = await run(graph, event({}), one);
  assert.equal(r2.status, 'succeeded', 'an action ran, so a false condition elsewhere does not make the run skipped');
  assert.deepEqual(
    one.calls.map((c) => c.input.title),
    ['A', 'after task-1 and []'],
  );
  assert.deepEqual(
    r2.steps.map((s) => [s.nodeId, s.status]),
    [
      ['a', 'succeeded'],
      ['gate', 'succeeded'],
      ['b', 'skipped'],
      ['join', 'succeeded'],
    ],
  );
  assert.ok(r2.warnings.includes('node "join": {{nodes.b.id}} is empty: node "b" has not run before this step'));
});

test('the run fails when it exceeds the executed-node limit', async () => {
  const graph: WorkflowGraph = {
    nodes: [1, 2, 3].map((n) => ({ id: `t${n}`, type: 'create_task' as const, params: { title: `T${n}` } })),
    edges: [
      { from: 'trigger', to: 't1' },
      { from: 't1', to: 't2' },
      { from: 't2', to: 't3' },
    ],
  };
  const tasks = fakeTasks();
  const r = await run(graph, event({}), tasks, { options: { limits: { maxNodesPerRun: 2 } } });
  assert.equal(r.status, 'failed');
  assert.equal(r.error, 'the run exceeded its limit of 2 executed nodes');
  assert.equal(tasks.calls.length, 2);
});

test('a run has no overall time limit; a slow node fails by its own timeout', async () => {
  const graph: WorkflowGraph = {
    nodes: [{ id: 'slow', type: 'http_request', params: { method: 'GET', url: `${server.url}/slow`, timeoutMs: 200 } }],
    edges: [{ from: 'trigger', to: 'slow' }],
  };
  const r = await run(graph, event({}), fakeTasks());
  assert.equal(r.status, 'failed');
  assert.match(r.error ?? '', /^node "slow" failed: /);
  assert.doesNotMatch(r.error ?? '', /time limit of/);
});

test('a cyclic or dangling graph fails the run instead of hanging', async () => {
  const cyclic: WorkflowGraph = {
    nodes: [
      { id: 'a', type: 'create_task', params: { title: 'A' } },
      { id: 'b', type: 'create_task', params: { title: 'B' } },
    ],
    edges: [
      { from: 'trigger', to: 'a' },
      { from: 'a', to: 'b' },
      { from: 'b', to: 'a' },
    ],
  };
  const tasks = fakeTasks();
  const r = await run(cyclic, event({}), tasks);
  assert.equal(r.status, 'failed');
  assert.match(r.error!, /cycle/);
  assert.equal(tasks.calls.length, 0);
  assert.match(planGraph({ nodes: [], edges: [{ from: 'trigger', to: 'ghost' }] }).problem!, /unknown node/);
});

test('headers of the trigger are available as {{trigger.headers.<name>}} and a signature check can gate the run', async () => {
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'sig', type: 'condition', params: { left: '{{trigger.headers.x-token}}', operator: 'equals', right: 'expected-token' } },
      { id: 't', type: 'create_task', params: { title: 'ok' } },
    ],
    edges: [
      { from: 'trigger', to: 'sig' },
      { from: 'sig', to: 't', branch: 'true' },
    ],
  };
  assert.equal((await run(graph, event({}, { 'x-token': 'expected-token' }))).status, 'succeeded');
  assert.equal((await run(graph, event({}, { 'x-token': 'forged' }))).status, 'skipped');
});

/** A workspace that keeps Create Task's idempotency key, as workspace-api does: the same key answers the same task. */
function keyedTasks(shared = new Map<string, Record<string, unknown>>()) {
  const calls: (string | undefined)[] = [];
  return {
    calls,
    byKey: shared,
    createTask: async (_ownerId: string, input: CreateTaskInput, opts: { idempotencyKey?: string } = {}) => {
      calls.push(opts.idempotencyKey);
      const key = opts.idempotencyKey ?? `none-${calls.length}`;
      let task = shared.get(key);
      if (!task) shared.set(key, (task = { id: `task-${shared.size + 1}`, ...input, status: 'todo' }));
      return task;
    },
  };
}

test('durable runs: steps are checkpointed before a side effect that follows an unstored one a repeat could make again, and a resumed run reuses them', async () => {
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'check', type: 'condition', params: { left: '{{trigger.status}}', operator: 'equals', right: 'paid' } },
      { id: 'notify', type: 'http_request', params: { method: 'POST', url: `${server.url}/durable-a`, body: { n: '{{trigger.n}}' } } },
      { id: 'task', type: 'create_task', params: { title: 'Ship {{nodes.notify.body.id}}' } },
      { id: 'ack', type: 'http_request', params: { method: 'POST', url: `${server.url}/durable-b`, body: { task: '{{nodes.task.id}}' } } },
    ],
    edges: [
      { from: 'trigger', to: 'check' },
      { from: 'check', to: 'notify', branch: 'true' },
      { from: 'notify', to: 'task' },
      { from: 'task', to: 'ack' },
    ],
  };
  const ev = event({ status: 'paid', n: 1 });
  const stored: import('../src/domain/executor.ts').StepCheckpoint[][] = [];
  const workspace = keyedTasks();
  const before = server.received.length;
  const first = await run(graph, ev, workspace as never, { ports: { checkpoint: async (steps) => void stored.push(steps) } });
  assert.equal(first.status, 'succeeded');
  // The condition and the first POST are stored before Create Task (a POST repeated could act twice).
  // Create Task is exactly once by its key: nothing is stored before the second POST; the rest rides
  // with the run's final write.
  assert.deepEqual(
    stored.map((batch) => batch.map((c) => c.step.nodeId)),
    [['check', 'notify']],
  );
  assert.equal(stored[0]![0]!.branch, 'true');
  const sent = server.received.slice(before);
  assert.deepEqual(
    sent.map((r) => r.url),
    ['/durable-a', '/durable-b'],
  );
  const [keyA, keyB] = sent.map((r) => r.headers['idempotency-key']);
  assert.match(String(keyA), /^fd1-[A-Za-z0-9_-]{43}$/);
  assert.notEqual(keyA, keyB, 'one key per step');
  assert.match(String(workspace.calls[0]), /^fd1-/);

  // The engine died during 'ack': a new claim resumes from the stored steps; Create Task executes
  // again with its key and answers the task it made, so 'ack' is sent with the same task.
  const resume = new Map(stored.flat().map((c) => [c.step.nodeId, c]));
  const again = keyedTasks(workspace.byKey);
  const mark = server.received.length;
  const resumed = await run(graph, ev, again as never, {
    resume: { checkpoints: resume },
    ports: { checkpoint: async () => assert.fail('nothing new to store: Create Task is exactly once') },
  });
  assert.equal(resumed.status, 'succeeded');
  assert.deepEqual(again.calls, workspace.calls, 'Create Task executed again with the same key');
  assert.equal(workspace.byKey.size, 1, 'one task for the run');
  const resent = server.received.slice(mark);
  assert.deepEqual(
    resent.map((r) => r.url),
    ['/durable-b'],
    'the earlier POST is not repeated',
  );
  assert.equal(resent[0]!.headers['idempotency-key'], keyB, 'the step sent again carries the same key');
  assert.deepEqual(JSON.parse(resent[0]!.body), { task: 'task-1' }, 'later steps read the same task');
  assert.deepEqual(
    resumed.steps.map((s) => [s.nodeId, s.status]),
    first.steps.map((s) => [s.nodeId, s.status]),
  );
});

test('durable runs: side effects that are exactly once by their key (Create Task) write no checkpoint between them', async () => {
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'a', type: 'create_task', params: { title: 'one' } },
      { id: 'b', type: 'create_task', params: { title: 'two' } },
      { id: 'c', type: 'create_task', params: { title: 'three' } },
    ],
    edges: [
      { from: 'trigger', to: 'a' },
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
    ],
  };
  const workspace = keyedTasks();
  const record = await run(graph, event({}), workspace as never, {
    ports: { checkpoint: async () => assert.fail('no checkpoint between exactly-once steps') },
  });
  assert.equal(record.status, 'succeeded');
  // Executed again from the top (a crash before the final write): the same three tasks, none more.
  const again = keyedTasks(workspace.byKey);
  await run(graph, event({}), again as never);
  assert.equal(workspace.byKey.size, 3);
  assert.deepEqual(again.calls, workspace.calls);
});

test('durable runs: a checkpoint that cannot be stored ends the run unfinished (rejects), so the event is delivered again', async () => {
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'a', type: 'http_request', params: { method: 'POST', url: `${server.url}/durable-store-fails`, body: {} } },
      { id: 'b', type: 'create_task', params: { title: 'two' } },
    ],
    edges: [
      { from: 'trigger', to: 'a' },
      { from: 'a', to: 'b' },
    ],
  };
  const tasks = fakeTasks();
  await assert.rejects(
    run(graph, event({}), tasks, {
      ports: {
        checkpoint: async () => {
          throw new Error('database unreachable');
        },
      },
    }),
    /database unreachable/,
  );
  assert.equal(tasks.calls.length, 0, 'the second side effect is not made before the first is stored');
});
