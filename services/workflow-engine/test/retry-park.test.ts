// A long retry delay parks the run (docs/workflow-engine.md, "Retries" and "Parking") on a real engine
// + workspace-api + embedded bus (PGlite, or Postgres with DATABASE_URL): the run is `waiting` with
// its wake time while the step waits to be retried, the engine that parked it closes and another
// engine on the same database wakes it on time, the attempt goes out with the same Idempotency-Key;
// Resume now tries it again at once; a cancel while parked drops the timer.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { json, runsApi, startEngineOn, startEngineStack, type EngineStack, type Received, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
const received: (Received & { at: number })[] = [];
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));

const startEngine = () => startEngineOn(stack, { retryParkMs: 1_000 });

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      received.push({ ...req, at: Date.now() });
      // /flaky answers 503 to its first request per n, then 201; /down always 503.
      const seen = received.filter((r) => r.url === req.url).length;
      if (req.url.startsWith('/down') || (req.url.startsWith('/flaky') && seen === 1)) return json(res, 503, { error: 'busy' });
      json(res, 201, { ok: true });
    },
  });
  ({ app: engine, url: engineUrl } = await startEngine());
});
after(async () => {
  await engine?.close();
  await stack?.close();
});

async function createWorkflow(owner: string, path: string, delayMs = 1_500) {
  const res = await call(owner, 'POST', '/api/v1/workflows', {
    name: 'Retry later',
    triggerType: 'webhook',
    active: true,
    graph: {
      nodes: [
        {
          id: 'post',
          type: 'http_request',
          params: { method: 'POST', url: `${stack.receiver!.url}${path}?n={{trigger.n}}`, body: '{"n": "{{trigger.n}}"}' },
          retry: { attempts: 3, backoff: 'fixed', delayMs, maxDelayMs: delayMs },
        },
      ],
      edges: [{ from: 'trigger', to: 'post' }],
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
}
const api = runsApi(call);
const { runNow, getRun, waiting } = api;
const finished = (owner: string, id: string) => api.finished(owner, id, 15_000);
const requestsFor = (n: string) => received.filter((r) => r.url.endsWith(`?n=${n}`));

describe('a long retry delay parks the run', () => {
  test('the run waits with its retry time; another engine wakes it on time after the first closed; same Idempotency-Key', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, '/flaky');
    const n = randomUUID();
    const run = await runNow(owner, wf, { n });
    const parked = await waiting(owner, run.id);
    assert.equal(parked.wait.nodeId, 'post');
    assert.equal(parked.wait.resumable, false);
    const due = Date.parse(parked.wait.until);
    const step = parked.steps[0];
    assert.equal(step.status, 'waiting');
    assert.equal(step.attempts, 1);
    assert.equal(Date.parse(step.retryAt), due);
    assert.match(step.error, /503/);
    assert.equal(requestsFor(n).length, 1);

    // The engine that parked it goes away (nothing of the run is in its memory); a new one wakes it.
    await engine.close();
    ({ app: engine, url: engineUrl } = await startEngine());
    const done = await finished(owner, run.id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.steps.length, 1);
    assert.equal(done.steps[0].status, 'succeeded');
    assert.equal(done.steps[0].attempts, 2);
    assert.equal(done.steps[0].attemptErrors.length, 1);
    const requests = requestsFor(n);
    assert.equal(requests.length, 2);
    assert.match(String(requests[0]!.headers['idempotency-key']), /^fd1-/);
    assert.equal(requests[1]!.headers['idempotency-key'], requests[0]!.headers['idempotency-key'], 'the same key after the wake');
    assert.ok(requests[1]!.at >= due, 'not before its retry time');
    assert.ok(requests[1]!.at - due < 3_000, `on time (${requests[1]!.at - due} ms late)`);
  });

  test('Resume now on a run parked for its retry tries the step again at once, not after its delay', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, '/flaky', 3_600_000);
    const n = randomUUID();
    const run = await runNow(owner, wf, { n });
    const parked = await waiting(owner, run.id);
    assert.ok(parked.steps[0].retryAt);
    const res = await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/resume-now`);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const done = await finished(owner, run.id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.steps[0].attempts, 2);
    const requests = requestsFor(n);
    assert.equal(requests.length, 2, 'tried once more');
    assert.ok(requests[1]!.at < Date.parse(parked.steps[0].retryAt) - 3_500_000, 'about an hour early');
  });

  test('cancelling a run parked for its retry drops the timer: the step is not tried again', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, '/down');
    const n = randomUUID();
    const run = await runNow(owner, wf, { n });
    await waiting(owner, run.id);
    const cancelled = await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    const { rows } = await stack.testDb.db.exec(`SELECT count(*)::int AS n FROM "engine"."run_wait" WHERE run_id = $1`, [run.id]);
    assert.equal(rows[0]!.n, 0);
    // A later run of a workflow with the same delay is retried after it: by then the cancelled one would have been.
    const flaky = await createWorkflow(owner, '/flaky');
    const later = await runNow(owner, flaky, { n: randomUUID() });
    assert.equal((await finished(owner, later.id)).status, 'succeeded');
    assert.equal((await getRun(owner, run.id)).status, 'cancelled');
    assert.equal(requestsFor(n).length, 1);
  });
});
