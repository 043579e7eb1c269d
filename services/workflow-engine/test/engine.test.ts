// The engine consuming trigger events from the real embedded bus and running workflows against a
// real workspace-api on a fresh database (PGlite, or Postgres with DATABASE_URL), as the owner.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { TRIGGER_TOPIC, type TriggerEvent } from '@flowdesk/contracts';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, signInternalToken, type Service } from '@flowdesk/service-kit';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';
import { buildApp } from '../src/app.ts';
import { createGuardedHttpClient, type GuardedHttpClient } from '../src/adapters/guarded-http.ts';
import { workspaceClient } from '../src/adapters/workspace-client.ts';
import { SsrfPolicy, parseAllowlist } from '../src/domain/ssrf.ts';
import { startServer, type TestServer } from './support.ts';

const keys = generateSigningKeys();
let testDb: TestDatabase;
let bus: EventBus;
let api: Service;
let apiUrl: string;
let engine: Service | undefined;
let http: GuardedHttpClient;
let receiver: TestServer;
const tokenFor = (userId: string, azp = 'workflow-engine') =>
  signInternalToken(keys, { sub: userId, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp });

async function call(userId: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokenFor(userId, 'test')}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
}

async function startEngine(): Promise<Service> {
  const app = await buildApp({
    bus,
    http,
    workspace: workspaceClient({ workspaceApiUrl: apiUrl, userToken: async (id) => tokenFor(id) }),
    logLevel: 'silent',
  });
  await listen(app, 0);
  return app;
}

const publish = (event: TriggerEvent) => bus.publish(TRIGGER_TOPIC, [{ key: event.workflowId, value: event }]);
const eventFor = (wf: { id: string }, ownerId: string, payload: Record<string, unknown>, eventId = `evt_${randomUUID()}`): TriggerEvent => ({
  eventId,
  workflowId: wf.id,
  ownerId,
  source: 'webhook',
  receivedAt: new Date().toISOString(),
  payload,
  headers: { 'content-type': 'application/json' },
});

/** Waits until the workflow has `count` finished runs; returns them newest first. */
async function finishedRuns(userId: string, workflowId: string, count: number, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(userId, 'GET', `/api/v1/workflows/${workflowId}/runs?limit=100`);
    const done = (res.body.items as any[]).filter((r) => ['succeeded', 'failed', 'skipped'].includes(r.status));
    if (done.length >= count || Date.now() > deadline) return done;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function greetingWorkflow(receiverUrl: string) {
  return {
    name: 'New customer',
    triggerType: 'webhook',
    active: true,
    graph: {
      nodes: [
        { id: 'has_name', type: 'condition', params: { left: '{{trigger.customer.name}}', operator: 'exists' } },
        { id: 'notify', type: 'http_request', params: { method: 'POST', url: `${receiverUrl}/hook`, body: { greeting: 'Hi {{trigger.customer.name}}', plan: '{{trigger.plan}}' } } },
        { id: 'task', type: 'create_task', params: { title: 'Call {{trigger.customer.name}}', notes: 'CRM id {{nodes.notify.body.id}}' } },
      ],
      edges: [
        { from: 'trigger', to: 'has_name' },
        { from: 'has_name', to: 'notify', branch: 'true' },
        { from: 'notify', to: 'task' },
      ],
    },
  };
}

before(async () => {
  testDb = await createTestDatabase();
  await migrateWorkspace(testDb.db);
  api = await buildWorkspaceApi({ db: testDb.db, jwtPublicKeyPem: keys.publicKeyPem, webhookSecretKey: randomBytes(32), publicBaseUrl: 'http://flowdesk.test', logLevel: 'silent' });
  apiUrl = await listen(api, 0);
  bus = await createEmbeddedBus(testDb.db, { pollIntervalMs: 25, retry: { maxAttempts: 3, initialBackoffMs: 50, maxBackoffMs: 200 } });
  receiver = await startServer((req, res) => {
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: `crm-${req.url.length}` }));
  });
  // The SSRF guard stays on; the operator allowlist opens exactly the test receiver.
  http = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist(`127.0.0.1:${receiver.port}`)) });
  engine = await startEngine();
});

after(async () => {
  await engine?.close();
  await bus.close();
  await http.close();
  await api.close();
  await receiver.close();
  await testDb.close();
});

test('readiness answers 200 once the engine consumes', async () => {
  const url = engine!.server.address() as { port: number };
  assert.equal((await fetch(`http://127.0.0.1:${url.port}/readyz`)).status, 200);
});

describe('a trigger event runs the workflow as its owner', () => {
  test('condition → HTTP request with the rendered body → task from trigger and node variables; every node recorded', async () => {
    const owner = randomUUID();
    const wf = (await call(owner, 'POST', '/api/v1/workflows', greetingWorkflow(receiver.url))).body;
    const before = receiver.received.length;
    await publish(eventFor(wf, owner, { customer: { name: 'Ada' }, plan: 'pro' }));
    const [run] = await finishedRuns(owner, wf.id, 1);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual(run.steps.map((s: any) => [s.nodeId, s.status]), [['has_name', 'succeeded'], ['notify', 'succeeded'], ['task', 'succeeded']]);
    assert.deepEqual(run.triggerPayload, { customer: { name: 'Ada' }, plan: 'pro' });
    assert.ok(run.finishedAt && run.startedAt);

    const hit = receiver.received.slice(before);
    assert.equal(hit.length, 1);
    assert.deepEqual(JSON.parse(hit[0]!.body), { greeting: 'Hi Ada', plan: 'pro' });

    const tasks = (await call(owner, 'GET', '/api/v1/tasks')).body.items;
    assert.deepEqual(tasks.map((t: any) => [t.title, t.notes]), [['Call Ada', 'CRM id crm-5']]);
    const again = (await call(owner, 'GET', `/api/v1/workflows/${wf.id}`)).body;
    assert.deepEqual(again.samplePayload, { customer: { name: 'Ada' }, plan: 'pro' }, 'the payload is kept for the variable picker');
  });

  test('the same event delivered twice gives one run and one request', async () => {
    const owner = randomUUID();
    const wf = (await call(owner, 'POST', '/api/v1/workflows', greetingWorkflow(receiver.url))).body;
    const before = receiver.received.length;
    const event = eventFor(wf, owner, { customer: { name: 'Bo' } }, 'key_same');
    await publish(event);
    await finishedRuns(owner, wf.id, 1);
    await publish(event);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await finishedRuns(owner, wf.id, 1)).length, 1);
    assert.equal(receiver.received.length - before, 1);
  });

  test('a false condition ends the run as skipped, without any request', async () => {
    const owner = randomUUID();
    const wf = (await call(owner, 'POST', '/api/v1/workflows', greetingWorkflow(receiver.url))).body;
    const before = receiver.received.length;
    await publish(eventFor(wf, owner, { customer: {} }));
    const [run] = await finishedRuns(owner, wf.id, 1);
    assert.equal(run.status, 'skipped');
    assert.equal(receiver.received.length, before);
    assert.equal((await call(owner, 'GET', '/api/v1/tasks')).body.items.length, 0);
  });

  test('an SSRF-refused URL fails the run with the reason, and nothing is sent', async () => {
    const owner = randomUUID();
    const wf = (
      await call(owner, 'POST', '/api/v1/workflows', {
        name: 'Metadata grab',
        triggerType: 'webhook',
        active: true,
        graph: { nodes: [{ id: 'grab', type: 'http_request', params: { method: 'GET', url: 'http://169.254.169.254/latest/meta-data/' } }], edges: [{ from: 'trigger', to: 'grab' }] },
      })
    ).body;
    await publish(eventFor(wf, owner, {}));
    const [run] = await finishedRuns(owner, wf.id, 1);
    assert.equal(run.status, 'failed');
    assert.match(run.error ?? run.steps[0].error, /SSRF/);
  });

  test('a workflow deactivated after the webhook was accepted records a skipped run and does nothing', async () => {
    const owner = randomUUID();
    const wf = (await call(owner, 'POST', '/api/v1/workflows', { ...greetingWorkflow(receiver.url), active: false })).body;
    const before = receiver.received.length;
    await publish(eventFor(wf, owner, { customer: { name: 'Cy' } }));
    const [run] = await finishedRuns(owner, wf.id, 1);
    assert.equal(run.status, 'skipped');
    assert.match(run.error, /deactivated/);
    assert.equal(receiver.received.length, before);
  });
});

test('events accepted while the engine is stopped all run once it is back: none lost, none doubled', async () => {
  const owner = randomUUID();
  const wf = (
    await call(owner, 'POST', '/api/v1/workflows', {
      name: 'Counter',
      triggerType: 'webhook',
      active: true,
      graph: { nodes: [{ id: 'task', type: 'create_task', params: { title: 'n={{trigger.n}}' } }], edges: [{ from: 'trigger', to: 'task' }] },
    })
  ).body;
  await engine!.close();
  engine = undefined;
  const N = 40;
  for (let n = 0; n < N; n++) await publish(eventFor(wf, owner, { n }));
  assert.equal((await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs`)).body.items.length, 0, 'nothing ran while stopped');
  engine = await startEngine();
  const runs = await finishedRuns(owner, wf.id, N, 60_000);
  assert.equal(runs.length, N);
  const titles = new Set<string>();
  let cursor: string | null = null;
  do {
    const page: any = (await call(owner, 'GET', `/api/v1/tasks?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).body;
    for (const t of page.items) titles.add(t.title);
    cursor = page.nextCursor;
  } while (cursor);
  assert.equal(titles.size, N);
});
