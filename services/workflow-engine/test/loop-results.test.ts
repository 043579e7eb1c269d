// A For each's results are stored once (domain/loop-results.ts): the run record keeps them as its item
// steps' outputs and a marker, and a run read back is the run the executor made.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { RunStep, WorkflowGraph } from '@flowdesk/contracts';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { executeWorkflow, type ExecuteWorkflowInput, type RunRecord } from '../src/domain/executor.ts';
import { compactLoopResults, expandLoopResults, LOOP_RESULTS_FROM_ITEMS } from '../src/domain/loop-results.ts';
import { migrateEngine, RunStore } from '../src/adapters/run-store.ts';
import { fixedClock, fixedEvent, silentLog } from './support.ts';

const event = fixedEvent('evt-loop-results', { lines: [{ sku: 'A' }, { sku: 'B' }, { sku: 'C' }, { sku: 'D' }] });

/** For each line → Set → Switch (B goes nowhere) → Create Task; `stopAt` ends the run at that sku; `failAt` fails its task. */
function graph(opts: { stopAt?: string; onError?: 'fail' | 'continue' } = {}): WorkflowGraph {
  return {
    nodes: [
      { id: 'loop', type: 'for_each', params: { items: '{{trigger.lines}}', concurrency: '2' } },
      { id: 'set', type: 'set_fields', params: { fields: [{ name: 'sku', value: '{{item.sku}}' }] } },
      {
        id: 'route',
        type: 'switch',
        params: {
          value: '{{nodes.set.sku}}',
          rules: [
            { operator: 'equals', right: 'B' },
            { operator: 'equals', right: opts.stopAt ?? '-' },
          ],
        },
      },
      { id: 'task', type: 'create_task', params: { title: 'line {{nodes.set.sku}}' }, ...(opts.onError ? { onError: opts.onError } : {}) },
      { id: 'stop', type: 'stop', params: { status: 'succeeded' } },
    ],
    edges: [
      { from: 'trigger', to: 'loop' },
      { from: 'loop', to: 'set', branch: 'each' },
      { from: 'set', to: 'route' },
      { from: 'route', to: 'stop', branch: '2' },
      { from: 'route', to: 'task', branch: 'default' },
    ],
  };
}

function ports(failSku?: string): ExecuteWorkflowInput['ports'] {
  return {
    http: { send: () => Promise.reject(new Error('no HTTP')) },
    createTask: async (_owner: string, input: { title: string }) => {
      if (failSku && input.title.endsWith(failSku)) throw new Error(`no task for ${failSku}`);
      return { id: randomUUID(), title: input.title, status: 'todo' };
    },
    clock: fixedClock(),
    log: silentLog,
    sandbox: inProcessSandbox,
  };
}

const execute = (g: WorkflowGraph, failSku?: string): Promise<RunRecord> =>
  executeWorkflow({ workflow: { id: event.workflowId, ownerId: event.ownerId, graph: g }, event, ports: ports(failSku) });

/** The record as JSON would carry it (what the API answers). */
const asJson = (steps: readonly RunStep[]): unknown => JSON.parse(JSON.stringify(steps));
const loopOutputOf = (steps: readonly RunStep[]) => steps.find((s) => s.type === 'for_each')!.output as { results: unknown; count: number };

test('a finished For each stores its results as the marker, and reading puts back exactly what the executor recorded', async () => {
  const run = await execute(graph());
  assert.equal(run.status, 'succeeded', run.error ?? '');
  const results = loopOutputOf(run.steps).results as Record<string, unknown>[];
  assert.deepEqual(
    results.map((r) => r.title ?? r.branch),
    ['line A', '1', 'line C', 'line D'],
    "each item's last output: B ends at the Switch (its branch has no edge), the others at Create Task",
  );
  const stored = compactLoopResults(run.steps);
  assert.deepEqual(loopOutputOf(stored).results, LOOP_RESULTS_FROM_ITEMS);
  assert.equal(loopOutputOf(run.steps).results, results, 'the executor’s record is not changed');
  assert.ok(JSON.stringify(stored).length <= JSON.stringify(run.steps).length - JSON.stringify(results).length + 40, 'the results are not stored twice');
  assert.deepEqual(expandLoopResults(asJson(stored) as RunStep[]), asJson(run.steps));
});

test('results an item step does not hold are stored as they are: a Stop inside the loop, a failed loop', async () => {
  const stopped = await execute(graph({ stopAt: 'C' }));
  assert.equal(stopped.status, 'succeeded', stopped.error ?? '');
  const stoppedResults = loopOutputOf(stopped.steps).results as unknown[];
  assert.equal(stoppedResults[2], null, 'the item that stopped the loop has no result');
  assert.equal(compactLoopResults(stopped.steps), stopped.steps, 'nothing to compact: stored as recorded');

  const failed = await execute(graph(), 'D');
  assert.equal(failed.status, 'failed');
  assert.equal(compactLoopResults(failed.steps), failed.steps);
  assert.deepEqual(expandLoopResults(asJson(failed.steps) as RunStep[]), asJson(failed.steps));
});

test('a step that failed and continued is its item’s result (its error output), and survives the round trip', async () => {
  const run = await execute(graph({ onError: 'continue' }), 'C');
  assert.equal(run.status, 'succeeded', run.error ?? '');
  assert.match(JSON.stringify((loopOutputOf(run.steps).results as unknown[])[2]), /no task for C/);
  const stored = compactLoopResults(run.steps);
  assert.deepEqual(loopOutputOf(stored).results, LOOP_RESULTS_FROM_ITEMS);
  assert.deepEqual(expandLoopResults(asJson(stored) as RunStep[]), asJson(run.steps));
});

let testDb: TestDatabase;
before(async () => {
  testDb = await createTestDatabase();
  await migrateEngine(testDb.db);
});
after(async () => {
  await testDb?.close();
});

test('through the run store: the row holds the marker, the run read back has the results', async () => {
  const run = await execute(graph());
  const store = new RunStore(testDb.db);
  const ownerId = randomUUID();
  const workflowId = randomUUID();
  assert.equal(await store.record({ ownerId, workflowId, eventId: 'e1', status: 'running', startedAt: run.startedAt }), true);
  assert.equal(
    await store.record({ ownerId, workflowId, eventId: 'e1', status: 'succeeded', steps: run.steps, warnings: [], finishedAt: run.finishedAt }),
    true,
  );
  await store.drain();
  const { rows } = await testDb.db.exec(`SELECT id, steps FROM "engine"."run" WHERE workflow_id = $1`, [workflowId]);
  const raw = typeof rows[0]!.steps === 'string' ? JSON.parse(rows[0]!.steps) : rows[0]!.steps;
  assert.deepEqual(loopOutputOf(raw as RunStep[]).results, LOOP_RESULTS_FROM_ITEMS, 'stored once');
  const read = await store.get(ownerId, String(rows[0]!.id));
  assert.deepEqual(asJson(read!.steps), asJson(run.steps), 'read back as the executor recorded it');
});
