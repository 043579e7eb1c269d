import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { WorkflowGraph } from '@flowdesk/contracts';
import type { CreateTaskInput } from '../src/domain/ports.ts';
import { checkpointKey, executeWorkflow, planGraph, stepIdempotencyKey, type ExecuteWorkflowInput, type StepCheckpoint } from '../src/domain/executor.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { fixedClock, fixedEvent, silentLog, type RunExtras } from './support.ts';

const lines = [
  { sku: 'A-1', qty: 2, price: 3 },
  { sku: 'B-2', qty: 1, price: 10 },
  { sku: 'C-3', qty: 4, price: 0.5 },
];
const event = fixedEvent('evt-loop', { order: { id: 'o-9', lines }, tags: 'not a list' });

/** For each line → Set (sku, position, total) → Create Task; done → Aggregate of the task titles. */
const orderGraph = (items = '{{trigger.order.lines}}', concurrency?: string): WorkflowGraph => ({
  nodes: [
    { id: 'loop_1', type: 'for_each', params: { items, ...(concurrency ? { concurrency: concurrency as '1' } : {}) } },
    {
      id: 'set_1',
      type: 'set_fields',
      params: {
        fields: [
          { name: 'sku', value: '{{item.sku}}' },
          { name: 'position', value: '{{index}}' },
          { name: 'total', value: '{{= item.qty * item.price }}' },
        ],
      },
    },
    { id: 'task_1', type: 'create_task', params: { title: '{{nodes.set_1.sku}} #{{index}} of {{trigger.order.id}}', notes: 'total {{nodes.set_1.total}}' } },
    { id: 'agg_1', type: 'aggregate', params: { items: '{{nodes.loop_1.results}}', field: 'title', into: 'text', separator: ' | ' } },
  ],
  edges: [
    { from: 'trigger', to: 'loop_1' },
    { from: 'loop_1', to: 'set_1', branch: 'each' },
    { from: 'set_1', to: 'task_1' },
    { from: 'loop_1', to: 'agg_1', branch: 'done' },
  ],
});

type Created = { input: CreateTaskInput; key: string | undefined };
function ports(createTask?: (input: CreateTaskInput, key: string | undefined, n: number) => Promise<void>) {
  const created: Created[] = [];
  return {
    created,
    ports: {
      http: { send: () => Promise.reject(new Error('no HTTP')) },
      createTask: async (_owner: string, input: CreateTaskInput, opts: { idempotencyKey?: string } = {}) => {
        const n = created.length;
        created.push({ input, key: opts.idempotencyKey });
        await createTask?.(input, opts.idempotencyKey, n);
        return { id: `task-${input.title.split(' ')[0]}`, ...input };
      },
      clock: fixedClock(),
      log: silentLog,
      sandbox: inProcessSandbox,
    } as unknown as ExecuteWorkflowInput['ports'],
  };
}
const run = (graph: WorkflowGraph, p: ExecuteWorkflowInput['ports'], { ports: more, ...groups }: RunExtras = {}) =>
  executeWorkflow({ workflow: { id: event.workflowId, ownerId: event.ownerId, graph }, event, ports: { ...p, ...more }, ...groups });

test('For each runs its body once per item in order, with {{item}}, {{index}} and item expressions; the results and an Aggregate follow on done', async () => {
  const { created, ports: p } = ports();
  const record = await run(orderGraph(), p);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(
    created.map((c) => [c.input.title, c.input.notes]),
    [
      ['A-1 #0 of o-9', 'total 6'],
      ['B-2 #1 of o-9', 'total 10'],
      ['C-3 #2 of o-9', 'total 2'],
    ],
  );
  // Steps: the loop, then its body per item (labelled with the item), then what follows on done.
  assert.deepEqual(
    record.steps.map((s) => [s.nodeId, s.item ?? null, s.status]),
    [
      ['loop_1', null, 'succeeded'],
      ['set_1', 0, 'succeeded'],
      ['task_1', 0, 'succeeded'],
      ['set_1', 1, 'succeeded'],
      ['task_1', 1, 'succeeded'],
      ['set_1', 2, 'succeeded'],
      ['task_1', 2, 'succeeded'],
      ['agg_1', null, 'succeeded'],
    ],
  );
  const loop = record.steps[0]!;
  assert.deepEqual(loop.input, { count: 3, concurrency: 1 });
  const results = (loop.output as { results: { title: string }[]; count: number }).results;
  assert.equal((loop.output as { count: number }).count, 3);
  assert.deepEqual(
    results.map((r) => r.title),
    ['A-1 #0 of o-9', 'B-2 #1 of o-9', 'C-3 #2 of o-9'],
  );
  assert.deepEqual(record.steps.find((s) => s.nodeId === 'set_1' && s.item === 2)!.output, { sku: 'C-3', position: 2, total: 2 });
  assert.deepEqual(record.steps.at(-1)!.output, { text: 'A-1 #0 of o-9 | B-2 #1 of o-9 | C-3 #2 of o-9', count: 3, missing: 0 });
  // Each item's action has its own idempotency key.
  assert.equal(new Set(created.map((c) => c.key)).size, 3);
  assert.deepEqual(record.warnings, []);
});

test('concurrency: at most N items run at once (the bound is reached, never passed), results stay in list order', async () => {
  const items = Array.from({ length: 7 }, (_, i) => ({ sku: `S${i}`, qty: 1, price: i }));
  const ev = fixedEvent('evt-conc', { order: { id: 'o', lines: items } });
  let inFlight = 0;
  let max = 0;
  let started = 0;
  let waiting: (() => void)[] = [];
  const { ports: p } = ports(async () => {
    inFlight++;
    started++;
    max = Math.max(max, inFlight);
    // Hold every call until 3 are in flight (or no more will start): a bound of 1 or 2 would hang (the run timeout fails it).
    if (inFlight === 3 || started === items.length) {
      for (const release of waiting.splice(0)) release();
    } else await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight--;
  });
  const record = await executeWorkflow({
    workflow: { id: ev.workflowId, ownerId: ev.ownerId, graph: orderGraph('{{trigger.order.lines}}', '3') },
    event: ev,
    ports: p,
  });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.equal(max, 3);
  const results = (record.steps[0]!.output as { results: { title: string }[] }).results;
  assert.deepEqual(
    results.map((r) => r.title.split(' ')[0]),
    items.map((i) => i.sku),
  );
  assert.equal(record.steps.filter((s) => s.nodeId === 'task_1').length, 7);
  waiting = [];
});

test('the run-wide item limit fails the run loudly before the loop starts: no item runs, nothing is dropped silently', async () => {
  const { created, ports: p } = ports();
  const record = await run(orderGraph(), p, { options: { limits: { maxLoopItemsPerRun: 2 } } });
  assert.equal(record.status, 'failed');
  assert.match(record.error ?? '', /node "loop_1" failed: the list has 3 items .*limit of 2 loop items \(MAX_LOOP_ITEMS_PER_RUN\); no item ran/);
  assert.equal(created.length, 0);
  assert.deepEqual(
    record.steps.map((s) => [s.nodeId, s.status]),
    [['loop_1', 'failed']],
  );
  // Exactly at the limit runs.
  const ok = await run(orderGraph(), ports().ports, { options: { limits: { maxLoopItemsPerRun: 3 } } });
  assert.equal(ok.status, 'succeeded', ok.error ?? '');
});

test('an empty list runs no body step and continues on done; a value that is not a list fails the node clearly', async () => {
  const { created, ports: p } = ports();
  const empty = await run(orderGraph('{{= [] }}'), p);
  assert.equal(empty.status, 'succeeded', empty.error ?? '');
  assert.equal(created.length, 0);
  assert.deepEqual(
    empty.steps.map((s) => s.nodeId),
    ['loop_1', 'agg_1'],
  );
  assert.deepEqual(empty.steps[0]!.output, { results: [], count: 0 });
  assert.deepEqual(empty.steps[1]!.output, { text: '', count: 0, missing: 0 });

  const notList = await run(orderGraph('{{trigger.tags}}'), p);
  assert.equal(notList.status, 'failed');
  assert.match(notList.error ?? '', /node "loop_1" failed: the list to loop over is not a list \(string\)/);
  const missing = await run(orderGraph('{{trigger.nope}}'), p);
  assert.match(missing.error ?? '', /the list to loop over is empty or missing/);
});

test('a failing body step stops the loop at its item and fails the run, naming the item', async () => {
  const { created, ports: p } = ports(async (_input, _key, n) => {
    if (n === 1) throw new Error('workspace said no');
  });
  const record = await run(orderGraph(), p);
  assert.equal(record.status, 'failed');
  assert.match(record.error ?? '', /^node "loop_1" stopped at item 1: node "task_1" failed: .*workspace said no/);
  assert.equal(created.length, 2, 'item 2 never starts');
  assert.equal(record.steps.find((s) => s.nodeId === 'task_1' && s.item === 1)!.status, 'failed');
});

test('Aggregate: a field of each item into a list, whole items, or one text; items without the field are counted, not invented', async () => {
  const graph = (params: Record<string, unknown>): WorkflowGraph => ({
    nodes: [{ id: 'agg_1', type: 'aggregate', params: { items: '{{trigger.order.lines}}', into: 'list', ...params } as never }],
    edges: [{ from: 'trigger', to: 'agg_1' }],
  });
  const out = async (params: Record<string, unknown>) => {
    const r = await run(graph(params), ports().ports);
    assert.equal(r.status, 'succeeded', r.error ?? '');
    return r.steps[0]!.output;
  };
  assert.deepEqual(await out({ field: 'sku' }), { items: ['A-1', 'B-2', 'C-3'], count: 3, missing: 0 });
  assert.deepEqual(await out({}), { items: lines, count: 3, missing: 0 });
  assert.deepEqual(await out({ field: 'qty', into: 'text' }), { text: '2, 1, 4', count: 3, missing: 0 });
  assert.deepEqual(await out({ field: 'colour', into: 'text', separator: '-' }), { text: '', count: 0, missing: 3 });
  const bad = await run(graph({ items: '{{trigger.tags}}' }), ports().ports);
  assert.match(bad.error ?? '', /node "agg_1" failed: the list to aggregate is not a list/);
});

test('concurrency N: the items in flight ask for their Create Task in one event-loop turn, so the workspace client sends them as one batch', async () => {
  let turn = 0;
  let ticking = true;
  const tick = () => {
    turn++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const turns: number[] = [];
  const { ports: p } = ports(async () => void turns.push(turn));
  const record = await run(orderGraph('{{trigger.order.lines}}', '3'), p);
  ticking = false;
  assert.equal(record.status, 'succeeded', record.error ?? '');
  // The owner batcher (adapters/workspace-client.ts) sends what was asked for in one turn together.
  assert.deepEqual(turns, [turns[0], turns[0], turns[0]]);
});

test('resume after a crash mid-loop: Create Task is exactly once by its key, so no item is checkpointed and the items executed again answer the same tasks', async () => {
  const stored: StepCheckpoint[] = [];
  // The engine "dies" during item 2's Create Task (the call never answers within this claim).
  const first = ports(async (_input, _key, n) => {
    if (n === 2) throw new Error('engine died');
  });
  await run(orderGraph(), first.ports, { ports: { checkpoint: async (steps) => void stored.push(...steps) } });
  assert.equal(first.created.length, 3);
  assert.deepEqual(stored, [], 'no checkpoint round trip between the items');
  const second = ports();
  const resumed = await run(orderGraph(), second.ports, { resume: { checkpoints: new Map() } });
  assert.equal(resumed.status, 'succeeded', resumed.error ?? '');
  // Every item runs again with the key it had: a keyed receiver (workspace-api) makes one task per key.
  assert.deepEqual(
    second.created.map((c) => c.key),
    first.created.map((c) => c.key),
  );
  assert.deepEqual(
    first.created.map((c) => c.key),
    [0, 1, 2].map((i) => stepIdempotencyKey(event.workflowId, event.eventId, 'task_1', i)),
  );
  const results = (resumed.steps[0]!.output as { results: { title: string }[] }).results;
  assert.deepEqual(
    results.map((r) => r.title),
    ['A-1 #0 of o-9', 'B-2 #1 of o-9', 'C-3 #2 of o-9'],
  );
});

test('resume after a crash mid-loop with an HTTP Request in the body: completed items are reused from their checkpoints, no POST repeated', async () => {
  const base = orderGraph();
  const graph: WorkflowGraph = {
    nodes: [
      ...base.nodes,
      { id: 'hook_1', type: 'http_request', params: { method: 'POST', url: 'https://hooks.example/lines', body: { sku: '{{item.sku}}' } } },
    ],
    edges: [...base.edges.filter((e) => !(e.from === 'set_1' && e.to === 'task_1')), { from: 'set_1', to: 'hook_1' }, { from: 'hook_1', to: 'task_1' }],
  };
  const posted: string[] = [];
  const http = {
    send: async (req: { url: string; body?: unknown }) => {
      posted.push(String(req.url));
      return { status: 201, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{}'), truncated: false, url: req.url };
    },
  };
  const stored: StepCheckpoint[] = [];
  const first = ports(async (_input, _key, n) => {
    if (n === 2) throw new Error('engine died');
  });
  await run(graph, { ...first.ports, http }, { ports: { checkpoint: async (steps) => void stored.push(...steps) } });
  assert.equal(posted.length, 3);
  // Before each item's Create Task its POST is stored (a repeat could reach the receiver twice); the
  // earlier item's Create Task rides along, never forcing a round trip of its own.
  assert.deepEqual(
    stored.map((c) => checkpointKey(c.step.nodeId, c.step.item)),
    ['set_1#0', 'hook_1#0', 'task_1#0', 'set_1#1', 'hook_1#1', 'task_1#1', 'set_1#2', 'hook_1#2'],
  );
  const resume = new Map(stored.map((c) => [checkpointKey(c.step.nodeId, c.step.item), c]));
  const second = ports();
  const resumed = await run(graph, { ...second.ports, http }, { resume: { checkpoints: resume } });
  assert.equal(resumed.status, 'succeeded', resumed.error ?? '');
  assert.equal(posted.length, 3, 'no POST sent again');
  assert.deepEqual(
    second.created.map((c) => [c.input.title, c.key]),
    [['C-3 #2 of o-9', first.created[2]!.key]],
    "only item 2's Create Task runs again, with its key",
  );
  assert.equal(resumed.steps.filter((s) => s.item !== undefined).length, 9);
});

test('a step outside a loop keeps its idempotency key as before (no item in the hash)', () => {
  const old = `fd1-${createHash('sha256').update(`wf\nev\ntask_1`).digest('base64url')}`;
  assert.equal(stepIdempotencyKey('wf', 'ev', 'task_1'), old);
  assert.notEqual(stepIdempotencyKey('wf', 'ev', 'task_1', 0), old);
});

test('a loop body is closed: an edge leaving it or entering it from outside is refused with a clear problem', () => {
  const base = orderGraph();
  const leaving: WorkflowGraph = { ...base, edges: [...base.edges, { from: 'task_1', to: 'agg_1' }] };
  assert.match(
    planGraph(leaving).problem ?? '',
    /node "agg_1" is in the loop of "loop_1" \(reached from its "each" branch\) and also reached from outside it \(edge loop_1 -> agg_1\).*hangs off "done"/,
  );
  const entering: WorkflowGraph = { ...base, edges: [...base.edges, { from: 'trigger', to: 'task_1' }] };
  assert.match(planGraph(entering).problem ?? '', /node "task_1" is in the loop of "loop_1" .*\(edge trigger -> task_1\)/);
  assert.equal(planGraph(base).problem, null);
});

test('a step that parks the run inside a loop body (a Wait, a Run workflow that waits) is refused with a clear problem', () => {
  const base = orderGraph();
  const withBody = (node: WorkflowGraph['nodes'][number]): WorkflowGraph => ({
    nodes: [...base.nodes, node],
    edges: [...base.edges, { from: 'task_1', to: node.id }],
  });
  assert.match(
    planGraph(withBody({ id: 'wait_1', type: 'wait', params: { mode: 'duration', durationMs: 60_000 } } as never)).problem ?? '',
    /node "wait_1" waits \(a Wait\) inside the loop of "loop_1": a step that parks the run cannot run per item yet/,
  );
  const run = { id: 'run_1', type: 'run_workflow', params: { workflowId: 'w' } } as never;
  assert.match(planGraph(withBody(run)).problem ?? '', /node "run_1" waits \(a Run workflow that waits for its result\) .*or set it not to wait/);
  const started = { id: 'run_1', type: 'run_workflow', params: { workflowId: 'w', wait: false } } as never;
  assert.equal(planGraph(withBody(started)).problem, null);
});

test('{{item}} and {{index}} outside a loop body are missing: empty, with a warning that says where they are set', async () => {
  const graph: WorkflowGraph = {
    nodes: [{ id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'x', value: 'a{{item.sku}}b{{index}}' }] } }],
    edges: [{ from: 'trigger', to: 'set_1' }],
  };
  const record = await run(graph, ports().ports);
  assert.equal(record.status, 'succeeded');
  assert.deepEqual(record.steps[0]!.output, { x: 'ab' });
  assert.ok(record.warnings.includes(`node "set_1": {{item.sku}} is empty: {{item}} is only set inside a For each's loop body`), record.warnings.join('\n'));
});
