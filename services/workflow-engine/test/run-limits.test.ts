// Limits a workflow meets inside one run, each at its edge (docs/workflow-engine.md): the Code
// node's heap (32 MB: code asking for 40 MB fails naming the limit, 16 MB runs), a For each's
// list (at most FOR_EACH_MAX_ITEMS = 10,000 items per node) and the items of every loop of a run
// summed (MAX_LOOP_ITEMS_PER_RUN: two loops each under it, together over it, fail at the second).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FOR_EACH_MAX_ITEMS, type TriggerEvent, type WorkflowGraph } from '@flowdesk/contracts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { executeWorkflow, type RunLimits } from '../src/domain/executor.ts';
import { fixedClock, fixedEvent, noHttp, silentLog } from './support.ts';

/** The run of `graph` for `event` with these limits (no HTTP, no tasks: these graphs have none). */
async function runInMemory(graph: WorkflowGraph, event: TriggerEvent, limits?: Partial<RunLimits>) {
  const record = await executeWorkflow({
    workflow: { id: event.workflowId, ownerId: event.ownerId, graph },
    event,
    ports: { http: noHttp, createTask: () => Promise.reject(new Error('no tasks here')), clock: fixedClock(), log: silentLog, sandbox: inProcessSandbox },
    ...(limits ? { options: { limits } } : {}),
  });
  return { record };
}

const codeRun = (code: string) =>
  runInMemory({ nodes: [{ id: 'code_1', type: 'code', params: { code } }], edges: [{ from: 'trigger', to: 'code_1' }] }, fixedEvent('evt-mem', {}));

/** Keeps `mb` distinct buffers of 1 MB alive at once. */
const holding = (mb: number) => `const kept = []; for (let i = 0; i < ${mb}; i++) kept.push(new Uint8Array(1 << 20).fill(i)); return kept.length;`;
/** One buffer of `mb` MB. */
const oneBuffer = (mb: number) => `return new Uint8Array(${mb} * 1024 * 1024).length;`;

test('Code: a step that asks its 32 MB heap for more at once fails naming the limit; one within it runs', async () => {
  const over = await codeRun(oneBuffer(40));
  assert.equal(over.record.status, 'failed');
  assert.match(over.record.error ?? '', /^node "code_1" failed: the code used more than its memory limit of 32 MB/);
  const within = await codeRun(oneBuffer(16));
  assert.equal(within.record.status, 'succeeded', within.record.error ?? '');
  assert.equal(within.record.steps[0]!.output, 16 * 1024 * 1024);
});

// Not so today (issue 35): QuickJS's heap limit sees each allocation, not their sum, in this WebAssembly
// build, so 48 buffers of 1 MB run under a 32 MB limit, and code that keeps allocating stops only when
// the WebAssembly memory itself is exhausted (after ~20 s). A fix belongs in code-sandbox.ts.
test(
  'Code: a step that holds more than 32 MB in small pieces fails naming the limit',
  { skip: 'not yet: the heap limit does not count the sum of allocations (issue 35; code-sandbox.ts)' },
  async () => {
    const over = await codeRun(holding(48));
    assert.equal(over.record.status, 'failed');
    assert.match(over.record.error ?? '', /^node "code_1" failed: the code used more than its memory limit of 32 MB/);
    const within = await codeRun(holding(16));
    assert.equal(within.record.status, 'succeeded', within.record.error ?? '');
  },
);

/** trigger → For each {{trigger.<list>}} (body: Set) → done → [For each {{trigger.<second>}} (body: Set) → done →] Set end. */
const loops = (first: string, second?: string): WorkflowGraph => ({
  nodes: [
    { id: 'loop_1', type: 'for_each', params: { items: `{{trigger.${first}}}` } },
    { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'n', value: '{{item}}' }] } },
    ...(second
      ? [
          { id: 'loop_2', type: 'for_each' as const, params: { items: `{{trigger.${second}}}` } },
          { id: 'set_2', type: 'set_fields' as const, params: { fields: [{ name: 'n', value: '{{item}}' }] } },
        ]
      : []),
    { id: 'end', type: 'set_fields', params: { fields: [{ name: 'done', value: 'yes' }] } },
  ],
  edges: [
    { from: 'trigger', to: 'loop_1' },
    { from: 'loop_1', to: 'set_1', branch: 'each' },
    ...(second
      ? [
          { from: 'loop_1', to: 'loop_2', branch: 'done' },
          { from: 'loop_2', to: 'set_2', branch: 'each' },
        ]
      : []),
    { from: second ? 'loop_2' : 'loop_1', to: 'end', branch: 'done' },
  ],
});
const list = (n: number) => Array.from({ length: n }, (_, i) => i);

test('For each: a list longer than 10,000 items fails the node before any item runs; 10,000 run', async () => {
  assert.equal(FOR_EACH_MAX_ITEMS, 10_000);
  const event = fixedEvent('evt-cap', { over: list(FOR_EACH_MAX_ITEMS + 1), at: list(FOR_EACH_MAX_ITEMS) });
  const { record } = await runInMemory(loops('over'), event, { maxLoopItemsPerRun: 100_000 });
  assert.equal(record.status, 'failed');
  assert.equal(record.error, `node "loop_1" failed: the list has ${FOR_EACH_MAX_ITEMS + 1} items; a For each takes at most ${FOR_EACH_MAX_ITEMS}`);
  assert.deepEqual(
    record.steps.map((s) => s.nodeId),
    ['loop_1'],
    'no item ran',
  );
  const at = await runInMemory(loops('at'), event, { maxLoopItemsPerRun: 100_000 });
  assert.equal(at.record.status, 'succeeded', at.record.error ?? '');
  assert.equal((at.record.steps[0]!.output as { count: number }).count, FOR_EACH_MAX_ITEMS);
});

test("For each: the run's item limit counts every loop of the run; the loop that would pass it fails before its first item", async () => {
  const event = fixedEvent('evt-sum', { a: list(6), b: list(5), c: list(4) });
  const { record } = await runInMemory(loops('a', 'b'), event, { maxLoopItemsPerRun: 10 });
  assert.equal(record.status, 'failed');
  assert.match(record.error ?? '', /^node "loop_2" failed: the list has 5 items and this run looped over 6 before: more than the run's limit of 10 loop items/);
  assert.equal(record.steps.filter((s) => s.nodeId === 'set_2').length, 0, 'no item of the second loop ran');
  assert.equal(record.steps.filter((s) => s.nodeId === 'set_1').length, 6);
  // 6 + 4 is exactly the limit: both loops run.
  const ok = await runInMemory(loops('a', 'c'), event, { maxLoopItemsPerRun: 10 });
  assert.equal(ok.record.status, 'succeeded', ok.record.error ?? '');
});
