// Quotas on runs that start runs (issue 36 item 4; docs/workflow-engine.md, "Limits"), on a real engine
// + workspace-api + embedded bus: the child runs one run may start, the owner's starts per minute,
// the depth, each refused with an error in the run naming its setting, and For each × Run workflow of
// itself bounded by them (it made 3,906 runs from one event with depth as the only bound).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { StartQuotas, StartQuotaError } from '../src/domain/quotas.ts';
import { FINISHED_STATUSES as DONE, runsApi, startEngineOn, startEngineStack, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));
const api = runsApi(call);
const QUOTAS = { maxChildRunsPerRun: 3, startsPerMinute: 8, maxDepth: 3 };

before(async () => {
  stack = await startEngineStack({ keys });
  ({ app: engine, url: engineUrl } = await startEngineOn(stack, { waits: { pollMs: 50 }, quotas: QUOTAS }));
});
after(async () => {
  await engine?.close();
  await stack?.close();
});

type Graph = { nodes: unknown[]; edges: unknown[] };
type Run = { id: string; status: string; error: string | null; steps: { nodeId: string; status: string; error: string | null }[] };
async function createWorkflow(owner: string, graph: Graph, name = 'wf') {
  const res = await call(owner, 'POST', '/api/v1/workflows', { name, triggerType: 'webhook', active: true, graph });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
}
const runsOf = async (owner: string, wf: { id: string }) =>
  ((await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs?limit=100`)).body as { items: Run[] }).items;
const finishedRuns = (owner: string, wf: { id: string }, count: number) =>
  until(`${count} runs finished`, async () => {
    const all = await runsOf(owner, wf);
    return all.length >= count && all.every((r) => DONE.includes(r.status)) ? all : undefined;
  });
const child: Graph = {
  nodes: [{ id: 'done', type: 'set_fields', params: { fields: [{ name: 'ok', value: 'yes' }] } }],
  edges: [{ from: 'trigger', to: 'done' }],
};
/** For each over `items` (an expression) → Run workflow `target` without waiting. */
const fanOut = (items: string, target: string, payload: Record<string, unknown> = {}): Graph => ({
  nodes: [
    { id: 'loop', type: 'for_each', params: { items } },
    { id: 'start', type: 'run_workflow', params: { workflowId: target, payload, wait: false } },
  ],
  edges: [
    { from: 'trigger', to: 'loop' },
    { from: 'loop', to: 'start', branch: 'each' },
  ],
});

describe('quotas on runs that start runs', () => {
  test('one run starts at most MAX_CHILD_RUNS_PER_RUN child runs; the step past it fails naming the limit', async () => {
    const owner = randomUUID();
    const target = await createWorkflow(owner, child, 'child');
    const parent = await createWorkflow(owner, fanOut('{{= [1..5] }}', target.id), 'parent');
    const queued = await api.runNow(owner, parent, {});
    const run = (await api.finished(owner, queued.id)) as Run;
    assert.equal(run.status, 'failed');
    assert.match(run.error ?? '', /stopped at item 3/);
    assert.match(run.error ?? '', /started 3 child runs, the most one run may start \(MAX_CHILD_RUNS_PER_RUN = 3\)/);
    const children = await finishedRuns(owner, target, 3);
    assert.equal(children.length, 3);
  });

  test("an owner's workflows start at most WORKFLOW_STARTS_PER_MINUTE runs a minute; another owner's are not affected", async () => {
    const owner = randomUUID();
    const target = await createWorkflow(owner, child, 'child');
    const parent = await createWorkflow(owner, fanOut('{{= [1..3] }}', target.id), 'parent');
    // Three runs of three starts each: the ninth start is past the owner's 8 a minute.
    const outcomes: Run[] = [];
    for (let i = 0; i < 3; i++) outcomes.push((await api.finished(owner, (await api.runNow(owner, parent, {})).id)) as Run);
    assert.deepEqual(
      outcomes.map((r) => r.status),
      ['succeeded', 'succeeded', 'failed'],
    );
    assert.match(outcomes[2]!.error ?? '', /stopped at item 2: .*started more than 8 runs in a minute \(WORKFLOW_STARTS_PER_MINUTE\); retry in \d+ s/);
    assert.equal((await finishedRuns(owner, target, 8)).length, 8);
    // Another owner's bucket is its own.
    const other = randomUUID();
    const otherTarget = await createWorkflow(other, child, 'child');
    const otherParent = await createWorkflow(other, fanOut('{{= [1..3] }}', otherTarget.id), 'parent');
    assert.equal(((await api.finished(other, (await api.runNow(other, otherParent, {})).id)) as Run).status, 'succeeded');
  });

  test('a chain of runs stops at RUN_WORKFLOW_MAX_DEPTH as configured', async () => {
    const owner = randomUUID();
    const self = await createWorkflow(
      owner,
      {
        nodes: [{ id: 'again', type: 'run_workflow', params: { workflowId: '{{trigger.self}}', payload: { self: '{{trigger.self}}' }, wait: false } }],
        edges: [{ from: 'trigger', to: 'again' }],
      },
      'self',
    );
    await api.runNow(owner, self, { self: self.id });
    const runs = await finishedRuns(owner, self, QUOTAS.maxDepth + 1);
    assert.equal(runs.length, QUOTAS.maxDepth + 1);
    const failed = runs.filter((r) => r.status === 'failed');
    assert.equal(failed.length, 1);
    assert.match(failed[0]!.error ?? '', /at most 3 levels deep \(RUN_WORKFLOW_MAX_DEPTH\); this run is at depth 3/);
  });

  test('For each × Run workflow of itself is bounded by the quotas (one run, not thousands)', async () => {
    const owner = randomUUID();
    const self = await createWorkflow(owner, fanOut('{{= [1..5] }}', '{{trigger.self}}', { self: '{{trigger.self}}' }), 'fan-out');
    const started = Date.now();
    await api.runNow(owner, self, { self: self.id });
    // The owner's 8 starts a minute: the first run and 8 more, every one failed naming a limit.
    const runs = await finishedRuns(owner, self, 1 + QUOTAS.startsPerMinute);
    await new Promise((r) => setImmediate(r));
    const all = await runsOf(owner, self);
    assert.equal(all.length, 1 + QUOTAS.startsPerMinute, `runs: ${all.length}`);
    for (const r of runs) {
      assert.equal(r.status, 'failed');
      assert.match(r.error ?? '', /MAX_CHILD_RUNS_PER_RUN|WORKFLOW_STARTS_PER_MINUTE|RUN_WORKFLOW_MAX_DEPTH/);
    }
    assert.ok(Date.now() - started < 60_000, 'bounded in time');
  });
});

test("the owner's bucket refills at its rate per minute, per owner; refusals say when to retry", () => {
  let now = 0;
  const refused: string[] = [];
  const quotas = new StartQuotas(
    { startsPerMinute: 6 },
    () => now,
    (owner, quota) => refused.push(`${owner}:${quota}`),
  );
  for (let i = 0; i < 6; i++) quotas.takeStart('a');
  const err = (() => {
    try {
      quotas.takeStart('a');
    } catch (e) {
      return e as StartQuotaError;
    }
    return undefined;
  })();
  assert.ok(err instanceof StartQuotaError);
  assert.equal(err.status, 429);
  assert.equal(err.retryAfter, '10');
  quotas.takeStart('b');
  now += 10_000; // a sixth of a minute: one start again
  quotas.takeStart('a');
  assert.throws(() => quotas.takeStart('a'), StartQuotaError);
  assert.deepEqual(refused, ['a:starts_per_minute', 'a:starts_per_minute']);
});
