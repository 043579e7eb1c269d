// The Code node's and JSONata's wall-time limits (1 s each, docs/workflow-engine.md) as a user meets
// them: a step that never ends fails the run, and the failure arrives in bounded time (under 3 s),
// asserted, not left to a test that hangs until its timeout. The run executes in a worker thread
// (limit-probe.ts), so a limit that stopped holding cannot block this thread: it is ended after
// PROBE_GIVE_UP_MS and the test fails saying so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { WorkflowGraph } from '@flowdesk/contracts';

const BOUND_MS = 3_000;
/** Generous for a worker's start on a loaded machine; a run past it has no working limit. */
const PROBE_GIVE_UP_MS = 20_000;

type Outcome = { status: string; error: string | null; ms: number };

function runInWorker(graph: WorkflowGraph): Promise<Outcome> {
  // tsx's loader is registered in the worker itself (a worker does not take --import's hooks on Node 20).
  const probe = JSON.stringify(new URL('./limit-probe.ts', import.meta.url).href);
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${probe}); })`;
  const worker = new Worker(boot, { eval: true, workerData: { graph }, execArgv: ['--conditions=source'] });
  return new Promise<Outcome>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the run had not ended ${PROBE_GIVE_UP_MS} ms after it started: no time limit stopped it`)),
      PROBE_GIVE_UP_MS,
    );
    worker.once('message', (m: Outcome) => (clearTimeout(timer), resolve(m)));
    worker.once('error', (err) => (clearTimeout(timer), reject(err)));
  }).finally(() => void worker.terminate());
}

const oneStep = (node: WorkflowGraph['nodes'][number]): WorkflowGraph => ({ nodes: [node], edges: [{ from: 'trigger', to: node.id }] });

test('a Code step that never ends fails the run within 3 s, naming its time limit', async () => {
  const out = await runInWorker(oneStep({ id: 'code_1', type: 'code', params: { code: 'while (true) {}' } }));
  assert.equal(out.status, 'failed');
  assert.match(out.error ?? '', /^node "code_1" failed: .*(longer than|limit|timeout)/i);
  assert.ok(out.ms < BOUND_MS, `the failure took ${Math.round(out.ms)} ms`);
  assert.ok(out.ms >= 900, `and not before the 1 s limit (${Math.round(out.ms)} ms)`);
});

test('an expression that never ends fails the run within 3 s, naming its time limit', async () => {
  const out = await runInWorker(
    oneStep({ id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'x', value: '{{= ($f := function($n) { $f($n + 1) }; $f(0)) }}' }] } }),
  );
  assert.equal(out.status, 'failed');
  assert.match(out.error ?? '', /^node "set_1" failed: .*(timeout|longer than|limit)/i);
  assert.ok(out.ms < BOUND_MS, `the failure took ${Math.round(out.ms)} ms`);
  assert.ok(out.ms >= 900, `and not before the 1 s limit (${Math.round(out.ms)} ms)`);
});
