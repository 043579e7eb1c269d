// A For each of Code steps for an owner past its sandbox budget parks its run (issue 36; docs/workflow-engine.md,
// "Isolation" and "For each") on a real engine + workspace-api + embedded bus (PGlite, or Postgres with
// DATABASE_URL): an item's Code step refused for the budget stops the loop, the run parks at the For each
// (holding no slot) with the items that ended checkpointed, the wait timers wake it when the budget
// allows, and it ends with every item's POST sent exactly once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { json, runsApi, startEngineOn, startEngineStack, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));
const api = runsApi(call);
/** POST /hit?i=<item>&d=<what the item's Code returned>, in arrival order. */
const hits: string[] = [];

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      if (req.url.startsWith('/hit')) hits.push(req.url);
      json(res, 200, { ok: true });
    },
  });
  // 1.5 s of sandbox time per owner per minute: a few hundred small Code jobs use it up, and it gives
  // back a 20 ms job's time in under a second (the time to try again follows the owner's mean job).
  ({ app: engine, url: engineUrl } = await startEngineOn(stack, { sandbox: { workers: 1, budgetMsPerMinute: 1_500 } }));
});
after(async () => {
  await engine?.close();
  await stack?.close();
});

async function createWorkflow(owner: string, graph: { nodes: unknown[]; edges: unknown[] }, name: string) {
  const res = await call(owner, 'POST', '/api/v1/workflows', { name, triggerType: 'webhook', active: true, graph });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
}

/**
 * For each item of {{trigger.items}}: a Code step (item 0's takes 250 ms: more than the budget gives
 * back at a time, so the loop parks again after it), then a POST naming the item and the Code's
 * answer; `burn`: the Code step takes at least 5 ms, and no POST.
 */
const loopOfCode = (burn = false) => ({
  nodes: [
    { id: 'each', type: 'for_each', params: { items: '{{trigger.items}}', concurrency: '1' } },
    {
      id: 'double',
      type: 'code',
      params: {
        code: burn
          ? 'const t = Date.now(); while (Date.now() - t < 5) {} return 0;'
          : 'const t = Date.now(); while (index === 0 && Date.now() - t < 250) {} return item * 2;',
      },
    },
    ...(burn
      ? []
      : [{ id: 'post', type: 'http_request', params: { method: 'POST', url: `${stack.receiver!.url}/hit?i={{index}}&d={{nodes.double}}`, body: '{}' } }]),
  ],
  edges: [{ from: 'trigger', to: 'each' }, { from: 'each', to: 'double', branch: 'each' }, ...(burn ? [] : [{ from: 'double', to: 'post' }])],
});

test('a For each of Code steps past the owner’s sandbox budget parks at the For each, resumes when the budget allows and runs every item once', async () => {
  const owner = randomUUID();
  const usage = async () => (await call(owner, 'GET', '/api/v1/workflow-runs/usage')).body as { sandbox: { overBudget: boolean } };
  // The owner uses up its budget (many small jobs: the time to try again follows the owner's mean job).
  const burn = await createWorkflow(owner, loopOfCode(true), 'burn');
  const burning = await api.runNow(owner, burn, { items: Array.from({ length: 1_000 }, (_, i) => i) });
  await until('the owner past its budget', async () => (await usage()).sandbox.overBudget || undefined, 60_000);
  const cancelled = await call(owner, 'POST', `/api/v1/workflow-runs/${burning.id}/cancel`);
  assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));

  const wf = await createWorkflow(owner, loopOfCode(), 'loop');
  const run = await api.runNow(owner, wf, { items: [0, 1, 2, 3] });
  // Parked at the For each (not waiting in the sandbox's queue with its slot), after an item ended.
  const parked = await until(
    'the run parked at the For each after an item ended',
    async () => {
      const r = await api.getRun(owner, run.id);
      return r.status === 'waiting' && hits.length >= 1 ? r : undefined;
    },
    60_000,
    20,
  );
  assert.equal(parked.wait.nodeId, 'each', JSON.stringify(parked));
  const each = parked.steps.find((s: { nodeId: string }) => s.nodeId === 'each');
  assert.equal(each.status, 'waiting');
  assert.equal(each.output.waitingFor, 'sandbox budget');
  assert.ok(Date.parse(each.output.until) > Date.now() - 5_000, JSON.stringify(each.output));

  const done = await api.finished(owner, run.id, 90_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done));
  // Every item once: the items that ended before a park are reused from their checkpoints, not run again.
  assert.deepEqual(hits, ['/hit?i=0&d=0', '/hit?i=1&d=2', '/hit?i=2&d=4', '/hit?i=3&d=6']);
  const steps = done.steps as { nodeId: string; item?: number; status: string }[];
  for (const id of ['double', 'post'])
    assert.deepEqual(
      steps.filter((s) => s.nodeId === id).map((s) => [s.item, s.status]),
      [0, 1, 2, 3].map((i) => [i, 'succeeded']),
      `${id}: one succeeded step per item`,
    );
  assert.equal(steps.filter((s) => s.nodeId === 'each').length, 1);
  assert.equal(done.steps.find((s: { nodeId: string }) => s.nodeId === 'each').output.count, 4);
});
