// Runs waiting for their owner's sandbox workers hold no slot (issue 36; docs/workflow-engine.md,
// "Isolation" and "Fairness across owners") on a real engine + workspace-api + embedded bus (PGlite, or
// Postgres with DATABASE_URL): owner A's runs fill every consumer slot, one running a long Code step
// on A's one sandbox worker and the others queued behind it; their jobs are handed back after
// ENGINE_SANDBOX_PARK_AFTER_MS and the runs park, so owner B's runs start and end while A's first
// Code step still runs. A's runs are woken through the wait timers and each ends once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { TRIGGER_TOPIC } from '@flowdesk/contracts';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { json, runsApi, startEngineOn, startEngineStack, webhookEvent, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));
const api = runsApi(call);
/** The receiver's requests, by path and query (`/a?n=2`). */
const hits: string[] = [];
const SLOTS = 4;
const SPIN_MS = 2_500;

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      hits.push(req.url);
      json(res, 200, { ok: true });
    },
  });
  // Four consumer slots, all of which one owner may hold (its cap is the replica's size); two sandbox
  // workers, one per owner; a job waits at most 100 ms behind its owner's worker before its run parks.
  ({ app: engine, url: engineUrl } = await startEngineOn(stack, {
    concurrency: SLOTS,
    workflowConcurrency: SLOTS,
    fairness: { ownerConcurrency: SLOTS, pollMs: 100 },
    sandbox: { workers: 2, perOwnerWorkers: 1, codeTimeoutMs: 10_000, budgetMsPerMinute: 600_000, parkAfterMs: 100 },
  }));
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

test("runs waiting for their owner's sandbox worker park instead of holding their slots: another owner's runs start and end meanwhile", async () => {
  const a = randomUUID();
  const b = randomUUID();
  const slowCode = await createWorkflow(
    a,
    {
      nodes: [
        { id: 'spin', type: 'code', params: { code: `const t = Date.now(); while (Date.now() - t < ${SPIN_MS}) {} return trigger.n;` } },
        { id: 'done', type: 'http_request', params: { method: 'GET', url: `${stack.receiver!.url}/a?n={{nodes.spin}}` } },
      ],
      edges: [
        { from: 'trigger', to: 'spin' },
        { from: 'spin', to: 'done' },
      ],
    },
    'slow code',
  );
  const quick = await createWorkflow(
    b,
    {
      nodes: [{ id: 'done', type: 'http_request', params: { method: 'GET', url: `${stack.receiver!.url}/b?n={{trigger.n}}` } }],
      edges: [{ from: 'trigger', to: 'done' }],
    },
    'quick',
  );
  // A's four runs take the four slots: one Code step runs on A's worker, three wait behind it.
  await stack.bus.publish(
    TRIGGER_TOPIC,
    [0, 1, 2, 3].map((n) => ({ key: slowCode.id, value: webhookEvent(slowCode, a, { n }) })),
  );
  await until("A's runs started", async () => ((await call(a, 'GET', '/api/v1/workflow-runs/usage')).body as { runs: number }).runs >= SLOTS || undefined);
  const started = Date.now();
  const bRuns = await Promise.all([0, 1].map((n) => api.runNow(b, quick, { n })));
  const bDone = await Promise.all(bRuns.map((r) => api.finished(b, r.id, 30_000)));
  const aDoneMeanwhile = hits.filter((h) => h.startsWith('/a?')).length;
  for (const r of bDone) assert.equal(r.status, 'succeeded', JSON.stringify(r));
  // Held slots, B's runs would wait for A's first run to end (its Code step alone spins 2.5 s).
  assert.equal(aDoneMeanwhile, 0, `B's runs took ${Date.now() - started} ms: ${aDoneMeanwhile} of A's runs ended first`);

  // A's runs parked for the sandbox worker, are woken by the wait timers and each ends once.
  const usage = await until('A has no run left', async () => {
    const u = (await call(a, 'GET', '/api/v1/workflow-runs/usage')).body as { runsFinished: number; inFlight: number };
    return hits.filter((h) => h.startsWith('/a?')).length >= SLOTS && u.inFlight === 0 ? u : undefined;
  });
  assert.ok(usage.runsFinished >= SLOTS, JSON.stringify(usage));
  const { rows } = await stack.testDb.db.exec(`SELECT status FROM "engine"."run" WHERE workflow_id = $1`, [slowCode.id]);
  assert.deepEqual(
    rows.map((r) => r.status),
    ['succeeded', 'succeeded', 'succeeded', 'succeeded'],
  );
  assert.deepEqual(hits.filter((h) => h.startsWith('/a?')).sort(), ['/a?n=0', '/a?n=1', '/a?n=2', '/a?n=3'], 'each of A’s runs ended once');
});
