// Operators and owners see it (issue 36 item 5; docs/observability.md, "Per-owner metrics"): on a real
// engine + workspace-api + embedded bus (PGlite, or Postgres with DATABASE_URL), an owner driven past
// its in-flight cap and backlog, and refused by the child-run quota, sees why on the usage API
// (throttle reasons with their settings and Retry-After, the throttled workflow, the refusal naming
// its limit), and an operator sees the same owner on /metrics under its owner_id, another owner not throttled.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { TRIGGER_TOPIC, type OwnerUsage } from '@flowdesk/contracts';
import { metricsText } from '@flowdesk/telemetry';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { json, runsApi, startEngineOn, startEngineStack, webhookEvent, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));
const api = runsApi(call);
const held: http.ServerResponse[] = [];
const CAP = 1;
const MAX_BACKLOG = 3;

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      if (!req.url.startsWith('/hold')) return json(res, 200, { ok: true });
      held.push(res);
    },
  });
  ({ app: engine, url: engineUrl } = await startEngineOn(stack, {
    concurrency: 8,
    workflowConcurrency: 8,
    fairness: { ownerConcurrency: CAP, concurrency: 2, maxBacklog: MAX_BACKLOG, pollMs: 100 },
    quotas: { maxChildRunsPerRun: 1 },
    metricsTopOwners: 10,
  }));
});
after(async () => {
  for (const h of held.splice(0)) h.destroy();
  await engine?.close();
  await stack?.close();
});

async function createWorkflow(owner: string, graph: { nodes: unknown[]; edges: unknown[] }, name = 'wf') {
  const res = await call(owner, 'POST', '/api/v1/workflows', { name, triggerType: 'webhook', active: true, graph });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
}
const usage = async (owner: string) => {
  const res = await call(owner, 'GET', '/api/v1/workflow-runs/usage');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as OwnerUsage;
};
/** The value of a series on the process's /metrics text, or undefined. */
async function series(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const text = await metricsText();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.indexOf('}'));
    if (want.every((w) => labelText.split(',').includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

test("an owner past its cap and backlog, and refused a child run, sees why on the usage API; /metrics has it under the owner's id", async () => {
  const a = randomUUID();
  const b = randomUUID();
  const slow = await createWorkflow(
    a,
    {
      nodes: [{ id: 'hold', type: 'http_request', params: { method: 'GET', url: `${stack.receiver!.url}/hold`, timeoutMs: 60_000 } }],
      edges: [{ from: 'trigger', to: 'hold' }],
    },
    'slow',
  );
  const quickB = await createWorkflow(b, {
    nodes: [{ id: 's', type: 'set_fields', params: { fields: [{ name: 'ok', value: 'yes' }] } }],
    edges: [{ from: 'trigger', to: 's' }],
  });

  // A refused: one run starting two child runs, past MAX_CHILD_RUNS_PER_RUN = 1.
  const child = await createWorkflow(
    a,
    { nodes: [{ id: 's', type: 'set_fields', params: { fields: [{ name: 'ok', value: 'yes' }] } }], edges: [{ from: 'trigger', to: 's' }] },
    'child',
  );
  const parent = await createWorkflow(
    a,
    {
      nodes: [
        { id: 'loop', type: 'for_each', params: { items: '{{= [1, 2] }}' } },
        { id: 'start', type: 'run_workflow', params: { workflowId: child.id, payload: {}, wait: false } },
      ],
      edges: [
        { from: 'trigger', to: 'loop' },
        { from: 'loop', to: 'start', branch: 'each' },
      ],
    },
    'parent',
  );
  const refusedRun = await api.finished(a, (await api.runNow(a, parent, {})).id);
  assert.equal(refusedRun.status, 'failed');
  await until('the child run done', async () => ((await usage(a)).runsFinished >= 2 ? true : undefined));

  // A throttled: one run holds its cap of one, the rest queue past the backlog bound.
  await stack.bus.publish(
    TRIGGER_TOPIC,
    Array.from({ length: 8 }, (_, n) => ({ key: slow.id, value: webhookEvent(slow, a, { n }) })),
  );
  const ua = await until('A throttled at intake', async () => {
    const u = await usage(a);
    return u.intakeThrottled && u.queued >= MAX_BACKLOG ? u : undefined;
  });
  assert.equal(ua.throttle.active, true);
  const reasons = new Map(ua.throttle.reasons.map((r) => [r.reason, r]));
  assert.equal(reasons.get('backlog')?.setting, 'ENGINE_OWNER_MAX_BACKLOG');
  assert.ok((reasons.get('backlog')?.retryAfterSeconds ?? 0) >= 1, JSON.stringify(ua.throttle));
  assert.equal(reasons.get('in_flight')?.setting, 'ENGINE_OWNER_CONCURRENCY');
  assert.equal(ua.inFlight, CAP);
  // The throttled workflow is named, with its queue and reason; the child and parent are not.
  assert.deepEqual(
    ua.workflows.map((w) => [w.workflowId, w.reason]),
    [[slow.id, 'backlog']],
  );
  assert.ok(ua.workflows[0]!.queued >= MAX_BACKLOG);
  // The refusal names its limit.
  assert.equal(ua.refused.child_runs_per_run, 1);
  assert.equal(ua.recentRefusals[0]?.setting, 'MAX_CHILD_RUNS_PER_RUN');
  assert.match(ua.recentRefusals[0]?.message ?? '', /MAX_CHILD_RUNS_PER_RUN = 1/);
  assert.equal(ua.sandbox.budgetMsPerMinute > 0, true);

  // Another owner: not throttled, nothing refused, its run goes.
  assert.equal((await api.finished(b, (await api.runNow(b, quickB, {})).id)).status, 'succeeded');
  const ub = await usage(b);
  assert.equal(ub.throttle.active, false);
  assert.deepEqual(ub.workflows, []);
  assert.deepEqual(ub.recentRefusals, []);

  // The operator's view: /metrics under A's owner_id (the busiest owners get a label), B not throttled.
  assert.equal(await series('flowdesk_engine_owner_intake_throttled', { owner_id: a }), 1);
  assert.equal(await series('flowdesk_engine_owner_intake_throttled', { owner_id: b }), 0);
  assert.equal(await series('flowdesk_engine_owner_start_refusals', { owner_id: a, quota: 'child_runs_per_run' }), 1);
  assert.ok(((await series('flowdesk_engine_owner_runs_queued', { owner_id: a })) ?? 0) >= MAX_BACKLOG);
  assert.ok(((await series('flowdesk_engine_owner_runs_started', { owner_id: a })) ?? 0) >= 3);
  assert.ok(((await series('flowdesk_engine_owner_runs_finished', { owner_id: b })) ?? 0) >= 1);

  // Released, A's queue drains and the throttle lifts: the usage API says so.
  const releaser = setInterval(() => {
    for (const h of held.splice(0)) json(h, 200, { ok: true });
  }, 50);
  try {
    const done = await until(
      'A drained',
      async () => {
        const u = await usage(a);
        return u.queued === 0 && u.inFlight === 0 && !u.intakeThrottled ? u : undefined;
      },
      30_000,
    );
    assert.equal(done.throttle.active, false);
    assert.deepEqual(done.workflows, []);
  } finally {
    clearInterval(releaser);
  }
});
