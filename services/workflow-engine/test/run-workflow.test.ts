// The Run workflow node (issue 25 item 2) over real HTTP on a real engine + workspace-api + embedded
// bus (PGlite, or Postgres with DATABASE_URL): fire-and-forget starts the child once, waiting parks
// the parent until the child's result resumes it, a failed child fails the node (its error branch),
// another owner's workflow is refused, the depth limit, and a step executed twice starts one child.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { RUN_WORKFLOW_MAX_DEPTH, TRIGGER_TOPIC, type TriggerEvent } from '@flowdesk/contracts';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { FINISHED_STATUSES as DONE, json, runsApi, startEngineOn, startEngineStack, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
/** Paths the receiver was sent, with the bodies. */
const received: { url: string; body: string; key: unknown }[] = [];
/** Requests to /hold/<n> wait here until released. */
const held = new Map<string, http.ServerResponse>();
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      received.push({ url: req.url, body: req.body, key: req.headers['idempotency-key'] });
      const hold = /^\/hold\/([^?]+)/.exec(req.url);
      if (hold) held.set(hold[1]!, res);
      else json(res, 201, { ok: true });
    },
  });
  ({ app: engine, url: engineUrl } = await startEngineOn(stack, { waits: { pollMs: 50 } }));
});
after(async () => {
  for (const res of held.values()) res.destroy();
  await engine?.close();
  await stack?.close();
});

type Graph = { nodes: unknown[]; edges: unknown[] };
async function createWorkflow(owner: string, graph: Graph, name = 'wf') {
  const res = await call(owner, 'POST', '/api/v1/workflows', { name, triggerType: 'webhook', active: true, graph });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
}
const api = runsApi(call);
const { runNow } = api;
type Run = {
  id: string;
  status: string;
  eventId: string;
  error: string | null;
  triggerType: string;
  payload: Record<string, unknown>;
  steps: { nodeId: string; status: string; output: unknown; error: string | null }[];
  wait?: { nodeId: string };
};
const getRun = async (owner: string, id: string) => (await api.getRun(owner, id)) as Run;
const runsOf = async (owner: string, wf: { id: string }) => ((await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs`)).body as { items: Run[] }).items;
const finished = async (owner: string, id: string) => (await api.finished(owner, id)) as Run;
const stepOf = (run: Run, nodeId: string) => run.steps.find((s) => s.nodeId === nodeId)!;
const postsTo = (path: string) => received.filter((r) => r.url.startsWith(path));

/** A child that posts `/child?n=…` with its payload, then outputs `{ answer }`. */
const childGraph = (receiverUrl: string): Graph => ({
  nodes: [
    { id: 'post', type: 'http_request', params: { method: 'POST', url: `${receiverUrl}/child?n={{trigger.n}}`, body: { n: '{{trigger.n}}' } } },
    { id: 'result', type: 'set_fields', params: { fields: [{ name: 'answer', value: 'done {{trigger.n}}' }] } },
  ],
  edges: [
    { from: 'trigger', to: 'post' },
    { from: 'post', to: 'result' },
  ],
});
/** The child above, first holding in a GET /hold/<n> until the test answers it. */
const holdingChild = (receiverUrl: string): Graph => {
  const graph = childGraph(receiverUrl);
  graph.nodes.unshift({ id: 'hold', type: 'http_request', params: { method: 'GET', url: `${receiverUrl}/hold/{{trigger.n}}` } });
  graph.edges = [{ from: 'trigger', to: 'hold' }, { from: 'hold', to: 'post' }, ...graph.edges.slice(1)];
  return graph;
};
/** A parent: run the child with `{ n }`, then post its output to `/after?n=…`. */
const parentGraph = (receiverUrl: string, childId: string, params: Record<string, unknown> = {}, extra: Partial<{ onError: string }> = {}): Graph => ({
  nodes: [
    { id: 'run', type: 'run_workflow', ...extra, params: { workflowId: childId, payload: { n: '{{trigger.n}}' }, ...params } },
    { id: 'after', type: 'http_request', params: { method: 'POST', url: `${receiverUrl}/after?n={{trigger.n}}`, body: { run: '{{nodes.run}}' } } },
  ],
  edges: [
    { from: 'trigger', to: 'run' },
    { from: 'run', to: 'after' },
  ],
});

describe('Run workflow node', () => {
  test('without waiting it starts the child once and goes on', async () => {
    const owner = randomUUID();
    const child = await createWorkflow(owner, childGraph(stack.receiver!.url), 'child');
    const parent = await createWorkflow(owner, parentGraph(stack.receiver!.url, child.id, { wait: false }), 'parent');
    const n = randomUUID();
    const run = await finished(owner, (await runNow(owner, parent, { n })).id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const out = stepOf(run, 'run').output as { eventId: string; started: boolean };
    assert.equal(out.started, true);
    const childRun = await until('the child ran', async () => (await runsOf(owner, child)).find((r) => r.eventId === out.eventId && DONE.includes(r.status)));
    assert.equal(childRun.status, 'succeeded');
    assert.equal(childRun.triggerType, 'manual');
    assert.equal(postsTo(`/child?n=${n}`).length, 1);
    assert.equal(JSON.parse(postsTo(`/child?n=${n}`)[0]!.body).n, n);
  });

  test('waiting parks the parent while the child runs and outputs the child’s result', async () => {
    const owner = randomUUID();
    const n = randomUUID();
    // The child holds in a request until released, so the parent is seen parked.
    const child = await createWorkflow(owner, holdingChild(stack.receiver!.url), 'child');
    const parent = await createWorkflow(owner, parentGraph(stack.receiver!.url, child.id), 'parent');
    const started = await runNow(owner, parent, { n });
    await until('the child holds', () => held.has(n));
    const parked = (await api.waiting(owner, started.id)) as Run;
    assert.equal(parked.wait?.nodeId, 'run');
    assert.equal(stepOf(parked, 'run').status, 'waiting');
    assert.equal(postsTo(`/after?n=${n}`).length, 0);
    json(held.get(n)!, 200, { ok: true });
    const run = await finished(owner, started.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const out = stepOf(run, 'run').output as { runId: string; status: string; output: unknown; error: unknown };
    const childRun = (await runsOf(owner, child))[0]!;
    assert.deepEqual(out, { runId: childRun.id, status: 'succeeded', output: { answer: `done ${n}` }, error: null });
    assert.equal(postsTo(`/after?n=${n}`).length, 1);
  });

  test('a failed child fails the node; with onError branch the error edge is taken', async () => {
    const owner = randomUUID();
    const child = await createWorkflow(
      owner,
      { nodes: [{ id: 'stop', type: 'stop', params: { status: 'failed', message: 'no stock for {{trigger.n}}' } }], edges: [{ from: 'trigger', to: 'stop' }] },
      'child',
    );
    const graph = parentGraph(stack.receiver!.url, child.id, {}, { onError: 'branch' });
    graph.nodes.push({
      id: 'onfail',
      type: 'http_request',
      params: { method: 'POST', url: `${stack.receiver!.url}/failed?n={{trigger.n}}`, body: { e: '{{nodes.run.error}}' } },
    });
    graph.edges.push({ from: 'run', to: 'onfail', branch: 'error' });
    const parent = await createWorkflow(owner, graph, 'parent');
    const n = randomUUID();
    const run = await finished(owner, (await runNow(owner, parent, { n })).id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const step = stepOf(run, 'run');
    assert.equal(step.status, 'failed');
    assert.match(step.error ?? '', new RegExp(`the workflow's run failed: .*no stock for ${n}`));
    assert.equal(postsTo(`/failed?n=${n}`).length, 1);
    assert.equal(postsTo(`/after?n=${n}`).length, 0);
  });

  test("another owner's workflow (or a missing one) is refused", async () => {
    const owner = randomUUID();
    const other = randomUUID();
    const theirs = await createWorkflow(other, childGraph(stack.receiver!.url), 'theirs');
    const parent = await createWorkflow(owner, parentGraph(stack.receiver!.url, theirs.id), 'parent');
    const run = await finished(owner, (await runNow(owner, parent, { n: randomUUID() })).id);
    assert.equal(run.status, 'failed');
    assert.equal(stepOf(run, 'run').error, `workflow ${theirs.id} not found`);
    assert.equal((await runsOf(other, theirs)).length, 0);
  });

  test(`a chain of runs starting runs stops at depth ${RUN_WORKFLOW_MAX_DEPTH}`, async () => {
    const owner = randomUUID();
    const n = randomUUID();
    // Runs itself (its id comes in the payload), then posts /depth.
    const self = await createWorkflow(
      owner,
      {
        nodes: [
          {
            id: 'again',
            type: 'run_workflow',
            params: { workflowId: '{{trigger.self}}', payload: { self: '{{trigger.self}}', n: '{{trigger.n}}' }, wait: false },
          },
          { id: 'post', type: 'http_request', params: { method: 'POST', url: `${stack.receiver!.url}/depth?n={{trigger.n}}`, body: {} } },
        ],
        edges: [
          { from: 'trigger', to: 'again' },
          { from: 'again', to: 'post' },
        ],
      },
      'self',
    );
    await runNow(owner, self, { self: self.id, n });
    const runs = await until('the chain ended', async () => {
      const all = await runsOf(owner, self);
      return all.length === RUN_WORKFLOW_MAX_DEPTH + 1 && all.every((r) => DONE.includes(r.status)) ? all : undefined;
    });
    const failed = runs.filter((r) => r.status === 'failed');
    assert.equal(failed.length, 1);
    assert.match(failed[0]!.error ?? '', new RegExp(`at most ${RUN_WORKFLOW_MAX_DEPTH} levels deep`));
    assert.equal(postsTo(`/depth?n=${n}`).length, RUN_WORKFLOW_MAX_DEPTH);
  });

  test('the step executed twice (a redelivered event taken over mid-run) starts the child once', async () => {
    const owner = randomUUID();
    const child = await createWorkflow(owner, childGraph(stack.receiver!.url), 'child');
    const n = randomUUID();
    // The parent holds before the Run workflow step; the same event is delivered twice meanwhile, so
    // the second delivery takes the run over (as after a crash) and both execute the step.
    const parent = await createWorkflow(
      owner,
      {
        nodes: [
          { id: 'hold', type: 'http_request', params: { method: 'GET', url: `${stack.receiver!.url}/hold/{{trigger.n}}` } },
          { id: 'run', type: 'run_workflow', params: { workflowId: child.id, payload: { n: '{{trigger.n}}' } } },
        ],
        edges: [
          { from: 'trigger', to: 'hold' },
          { from: 'hold', to: 'run' },
        ],
      },
      'parent',
    );
    const event: TriggerEvent = {
      eventId: `evt_${randomUUID()}`,
      workflowId: parent.id,
      ownerId: owner,
      source: 'webhook',
      receivedAt: new Date().toISOString(),
      payload: { n },
      headers: {},
    };
    await stack.bus.publish(TRIGGER_TOPIC, [{ key: parent.id, value: event }]);
    await until('the first delivery holds', () => held.has(n));
    const first = held.get(n)!;
    held.delete(n);
    await stack.bus.publish(TRIGGER_TOPIC, [{ key: parent.id, value: event }]);
    await until('the second delivery holds', () => held.has(n));
    json(first, 200, { ok: true });
    json(held.get(n)!, 200, { ok: true });
    const runs = await until('the parent finished', async () => {
      const all = await runsOf(owner, parent);
      return all.length === 1 && DONE.includes(all[0]!.status) ? all : undefined;
    });
    const run = await getRun(owner, runs[0]!.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual((stepOf(run, 'run').output as { output: unknown }).output, { answer: `done ${n}` });
    // One child run. Its event was published twice too: the second delivery took the child's run
    // over as any redelivery does, so its POST may be sent again, always with the same key.
    const childRuns = await runsOf(owner, child);
    assert.equal(childRuns.length, 1);
    assert.equal(childRuns[0]!.status, 'succeeded');
    assert.ok(postsTo(`/child?n=${n}`).length >= 1);
    assert.equal(new Set(postsTo(`/child?n=${n}`).map((r) => r.key)).size, 1);
  });

  /** A parent whose Run workflow step takes the error branch: `/failed?n=` with the error, else `/after?n=`. */
  const parentWithErrorBranch = (childId: string): Graph => {
    const graph = parentGraph(stack.receiver!.url, childId, {}, { onError: 'branch' });
    graph.nodes.push({
      id: 'onfail',
      type: 'http_request',
      params: { method: 'POST', url: `${stack.receiver!.url}/failed?n={{trigger.n}}`, body: { e: '{{nodes.run.error}}' } },
    });
    graph.edges.push({ from: 'run', to: 'onfail', branch: 'error' });
    return graph;
  };
  /** A child that parks on an approval (Wait, resume mode) before posting. */
  const parkingChild = (): Graph => ({
    nodes: [
      { id: 'approve', type: 'wait', params: { mode: 'resume' } },
      { id: 'post', type: 'http_request', params: { method: 'POST', url: `${stack.receiver!.url}/child?n={{trigger.n}}`, body: {} } },
    ],
    edges: [
      { from: 'trigger', to: 'approve' },
      { from: 'approve', to: 'post', branch: 'resumed' },
    ],
  });
  const childRunOf = (owner: string, child: { id: string }, status: string) =>
    until(`the child run ${status}`, async () => (await runsOf(owner, child)).find((r) => r.status === status));
  const cancel = async (owner: string, runId: string) => {
    const res = await call(owner, 'POST', `/api/v1/workflow-runs/${runId}/cancel`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };

  test('a child cancelled while it is parked wakes the parent: the step fails ("child run … was cancelled"), its error branch runs', async () => {
    const owner = randomUUID();
    const child = await createWorkflow(owner, parkingChild(), 'child');
    const parent = await createWorkflow(owner, parentWithErrorBranch(child.id), 'parent');
    const n = randomUUID();
    const started = await runNow(owner, parent, { n });
    const childRun = await childRunOf(owner, child, 'waiting');
    await api.waiting(owner, started.id);
    await cancel(owner, childRun.id);
    const run = await finished(owner, started.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const step = stepOf(run, 'run');
    assert.equal(step.status, 'failed');
    assert.equal(step.error, `child run ${childRun.id} was cancelled`);
    assert.equal(postsTo(`/failed?n=${n}`).length, 1);
    assert.match(JSON.parse(postsTo(`/failed?n=${n}`)[0]!.body).e, /was cancelled/);
    assert.equal(postsTo(`/after?n=${n}`).length, 0);
    assert.equal(postsTo(`/child?n=${n}`).length, 0);
  });

  test('a child cancelled while it runs wakes the parent; without an error branch the parent run fails', async () => {
    const owner = randomUUID();
    const child = await createWorkflow(owner, holdingChild(stack.receiver!.url), 'child');
    const parent = await createWorkflow(owner, parentGraph(stack.receiver!.url, child.id), 'parent');
    const n = randomUUID();
    const started = await runNow(owner, parent, { n });
    await until('the child holds', () => held.has(n));
    const childRun = await childRunOf(owner, child, 'running');
    await cancel(owner, childRun.id);
    json(held.get(n)!, 200, { ok: true });
    const run = await finished(owner, started.id);
    assert.equal(run.status, 'failed', JSON.stringify(run));
    assert.equal(stepOf(run, 'run').error, `child run ${childRun.id} was cancelled`);
    assert.match(run.error ?? '', /was cancelled/);
    assert.equal(postsTo(`/child?n=${n}`).length, 0, 'the cancelled child stopped at its next step');
    assert.equal(postsTo(`/after?n=${n}`).length, 0);
  });

  test('however a child ends (succeeded, failed, skipped, cancelled) its parent wakes exactly once, with two engines', async () => {
    const second = await startEngineOn(stack, { waits: { pollMs: 50 } });
    try {
      const owner = randomUUID();
      const receiverUrl = stack.receiver!.url;
      const children = {
        succeeded: await createWorkflow(owner, childGraph(receiverUrl), 'succeeds'),
        failed: await createWorkflow(
          owner,
          { nodes: [{ id: 'stop', type: 'stop', params: { status: 'failed', message: 'no' } }], edges: [{ from: 'trigger', to: 'stop' }] },
          'fails',
        ),
        skipped: await createWorkflow(
          owner,
          {
            nodes: [
              { id: 'check', type: 'condition', params: { left: '{{trigger.n}}', operator: 'equals', right: 'never' } },
              { id: 'post', type: 'http_request', params: { method: 'POST', url: `${receiverUrl}/child?n={{trigger.n}}`, body: {} } },
            ],
            edges: [
              { from: 'trigger', to: 'check' },
              { from: 'check', to: 'post', branch: 'true' },
            ],
          },
          'skips',
        ),
        cancelled: await createWorkflow(owner, parkingChild(), 'cancelled'),
      };
      const outcomes = Object.keys(children) as (keyof typeof children)[];
      const cases = outcomes.flatMap((outcome) => Array.from({ length: 3 }, () => ({ outcome, n: randomUUID() })));
      const parents = Object.fromEntries(
        await Promise.all(outcomes.map(async (o) => [o, await createWorkflow(owner, parentWithErrorBranch(children[o].id), `parent ${o}`)] as const)),
      );
      const started = await Promise.all(cases.map(async (c) => ({ ...c, run: await runNow(owner, parents[c.outcome]!, { n: c.n }) })));
      const parked = await until('the cancelled children parked', async () => {
        const runs = (await runsOf(owner, children.cancelled)).filter((r) => r.status === 'waiting');
        return runs.length === 3 ? runs : undefined;
      });
      await Promise.all(parked.map((r) => cancel(owner, r.id)));
      for (const c of started) {
        const run = await finished(owner, c.run.id);
        assert.equal(run.status, 'succeeded', JSON.stringify(run));
        const step = stepOf(run, 'run');
        const wentOn = c.outcome === 'succeeded' || c.outcome === 'skipped';
        assert.equal(step.status, wentOn ? 'succeeded' : 'failed', c.outcome);
        if (wentOn) assert.equal((step.output as { status: string }).status, c.outcome);
        else assert.match(step.error ?? '', c.outcome === 'failed' ? /^the workflow's run failed: .*: no$/ : /^child run \S+ was cancelled$/);
        // Woken once: one of the two branches, one request.
        assert.equal(postsTo(`/after?n=${c.n}`).length, wentOn ? 1 : 0, c.outcome);
        assert.equal(postsTo(`/failed?n=${c.n}`).length, wentOn ? 0 : 1, c.outcome);
      }
      // One child run per parent run.
      for (const o of outcomes) assert.equal((await runsOf(owner, children[o])).length, 3, o);
    } finally {
      await second.app.close();
    }
  });
});
