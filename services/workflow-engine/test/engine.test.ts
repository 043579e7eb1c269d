// The engine consuming trigger events from the real embedded bus and running workflows against a
// real workspace-api on a fresh database (PGlite, or Postgres with DATABASE_URL), as the owner. The
// engine records the runs in its own schema and serves them; definitions reach it as workflow.changed
// events through workspace-api's outbox.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { EventBus } from '@flowdesk/bus';
import { TRIGGER_DLQ_TOPIC, TRIGGER_TOPIC, type TriggerEvent } from '@flowdesk/contracts';
import type { TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, signInternalToken, type Service } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import { createGuardedHttpClient, type GuardedHttpClient } from '@flowdesk/service-kit';
import { workspaceClient, type WorkspaceClient } from '../src/adapters/workspace-client.ts';
import { SsrfPolicy, parseAllowlist } from '@flowdesk/service-kit';
import type { DefinitionSource } from '../src/domain/definitions.ts';
import { startEngineStack, startServer, type EngineStack, type TestServer, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let testDb: TestDatabase;
let bus: EventBus;
let apiUrl: string;
let engine: Service | undefined;
let engineUrl: string;
let workspace: WorkspaceClient;
let http: GuardedHttpClient;
let receiver: TestServer;
const tokenFor = (userId: string, azp = 'workflow-engine', aud = 'workspace-api') =>
  signInternalToken(keys, { sub: userId, aud, scope: 'mcp:read mcp:write', azp });

const call = userCaller(keys, () => ({ apiUrl, engineUrl }));

async function startEngine(options: { workflowConcurrency?: number; definitions?: DefinitionSource } = {}): Promise<Service> {
  const app = await buildApp({
    bus,
    db: testDb.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    http,
    workspace,
    definitions: options.definitions,
    workflowConcurrency: options.workflowConcurrency,
    logLevel: 'silent',
  });
  engineUrl = await listen(app, 0);
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
        {
          id: 'notify',
          type: 'http_request',
          params: { method: 'POST', url: `${receiverUrl}/hook`, body: { greeting: 'Hi {{trigger.customer.name}}', plan: '{{trigger.plan}}' } },
        },
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
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `crm-${req.url.length}` }));
    },
  });
  ({ testDb, bus, apiUrl, workspace, http } = stack);
  receiver = stack.receiver!;
  engine = await startEngine();
});

after(async () => {
  await engine?.close();
  await stack?.close();
});

test('readiness answers 200 once the engine consumes', async () => {
  const url = engine!.server.address() as { port: number };
  assert.equal((await fetch(`http://127.0.0.1:${url.port}/readyz`)).status, 200);
});

test("Create Task is batched per owner: concurrent runs' tasks go as one call, each run gets its own task or its own error", async () => {
  const owner = randomUUID();
  const other = randomUUID();
  const theirs = (await call(other, 'POST', '/api/v1/projects', { name: 'Theirs' })).body;
  const mine = (await call(owner, 'POST', '/api/v1/projects', { name: 'Mine' })).body;
  // All asked for in one turn: one batch per owner (two owners here).
  const results = await Promise.allSettled([
    ...Array.from({ length: 20 }, (_, i) => workspace.createTask(owner, { title: `t${i}`, ...(i === 3 ? { projectId: mine.id } : {}) })),
    workspace.createTask(owner, { title: 'sneaky', projectId: theirs.id }),
    workspace.createTask(owner, { title: 'bad date', dueDate: '2026-13-40' }),
    workspace.createTask(other, { title: 'theirs' }),
  ]);
  const ok = results.slice(0, 20).map((r) => (r.status === 'fulfilled' ? (r.value as { title: string; projectId: string | null }) : null));
  assert.deepEqual(
    ok.map((t) => t?.title),
    Array.from({ length: 20 }, (_, i) => `t${i}`),
    'each run gets its own task, in order',
  );
  assert.equal(ok[3]!.projectId, mine.id);
  const sneaky = results[20]!;
  assert.equal(sneaky.status, 'rejected');
  assert.match(String(sneaky.reason.message), /404/);
  const bad = results[21]!;
  assert.equal(bad.status, 'rejected');
  assert.match(String(bad.reason.message), /400.*dueDate/);
  assert.equal(results[22]!.status, 'fulfilled');
  const listed = (await call(owner, 'GET', '/api/v1/tasks?limit=100')).body.items as { title: string }[];
  assert.equal(listed.length, 20, 'exactly the valid tasks of this owner exist');
  assert.deepEqual(
    (await call(other, 'GET', '/api/v1/tasks')).body.items.map((t: { title: string }) => t.title),
    ['theirs'],
  );
});

describe('a trigger event runs the workflow as its owner', () => {
  test('condition → HTTP request with the rendered body → task from trigger and node variables; every node recorded', async () => {
    const owner = randomUUID();
    const wf = (await call(owner, 'POST', '/api/v1/workflows', greetingWorkflow(receiver.url))).body;
    const before = receiver.received.length;
    await publish(eventFor(wf, owner, { customer: { name: 'Ada' }, plan: 'pro' }));
    const [run] = await finishedRuns(owner, wf.id, 1);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual(
      run.steps.map((s: any) => [s.nodeId, s.status]),
      [
        ['has_name', 'succeeded'],
        ['notify', 'succeeded'],
        ['task', 'succeeded'],
      ],
    );
    assert.deepEqual(run.triggerPayload, { customer: { name: 'Ada' }, plan: 'pro' });
    assert.ok(run.finishedAt && run.startedAt);

    const hit = receiver.received.slice(before);
    assert.equal(hit.length, 1);
    assert.deepEqual(JSON.parse(hit[0]!.body), { greeting: 'Hi Ada', plan: 'pro' });

    const tasks = (await call(owner, 'GET', '/api/v1/tasks')).body.items;
    assert.deepEqual(
      tasks.map((t: any) => [t.title, t.notes]),
      [['Call Ada', 'CRM id crm-5']],
    );
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
        graph: {
          nodes: [{ id: 'grab', type: 'http_request', params: { method: 'GET', url: 'http://169.254.169.254/latest/meta-data/' } }],
          edges: [{ from: 'trigger', to: 'grab' }],
        },
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
  const stored = await testDb.db.exec('SELECT count(*)::int AS n FROM "engine"."run" WHERE workflow_id = $1', [wf.id]);
  assert.equal(stored.rows[0]?.n, 0, 'nothing ran while stopped');
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

describe('the runs API, served by the engine', () => {
  test('lists by workflow and status with a cursor, gets one run with its steps; another user sees nothing', async () => {
    const owner = randomUUID();
    const intruder = randomUUID();
    const wf = (await call(owner, 'POST', '/api/v1/workflows', greetingWorkflow(receiver.url))).body;
    await publish(eventFor(wf, owner, { customer: {} }));
    for (const name of ['A', 'B']) await publish(eventFor(wf, owner, { customer: { name } }));
    await finishedRuns(owner, wf.id, 3);
    const page1 = await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs?status=succeeded&limit=1`);
    assert.equal(page1.status, 200);
    assert.equal(page1.body.items.length, 1);
    assert.ok(page1.body.nextCursor);
    const page2 = await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs?status=succeeded&limit=1&cursor=${page1.body.nextCursor}`);
    assert.equal(page2.body.items.length, 1);
    assert.equal(page2.body.nextCursor, null);
    assert.notEqual(page1.body.items[0].id, page2.body.items[0].id);
    const skipped = await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs?status=skipped`);
    assert.equal(skipped.body.items.length, 1);
    const all = await call(owner, 'GET', '/api/v1/workflow-runs?limit=100');
    assert.ok(all.body.items.length >= 3);
    const one = await call(owner, 'GET', `/api/v1/workflow-runs/${page1.body.items[0].id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.steps.length, 3);
    assert.equal(typeof one.body.durationMs, 'number');

    // Another user: the workflow is 404 (like a missing one), the run is 404, the listing is empty.
    const theirs = await call(intruder, 'GET', `/api/v1/workflows/${wf.id}/runs`);
    const missing = await call(intruder, 'GET', `/api/v1/workflows/${randomUUID()}/runs`);
    assert.equal(theirs.status, 404);
    assert.deepEqual(theirs.body, missing.body);
    assert.equal((await call(intruder, 'GET', `/api/v1/workflow-runs/${one.body.id}`)).status, 404);
    assert.deepEqual((await call(intruder, 'GET', '/api/v1/workflow-runs')).body.items, []);
    // Only internal tokens for this audience; a cursor of another listing is refused.
    const wrongAud = await fetch(`${engineUrl}/api/v1/workflow-runs`, { headers: { authorization: `Bearer ${tokenFor(owner, 'test', 'workspace-api')}` } });
    assert.equal(wrongAud.status, 401);
    assert.equal((await fetch(`${engineUrl}/api/v1/workflow-runs`)).status, 401);
    const bad = await call(owner, 'GET', `/api/v1/workflow-runs?cursor=${page1.body.nextCursor}`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'validation_failed');
  });
});

describe('definitions reach the engine as workflow.changed events', () => {
  test('a deactivation takes effect for the next event; a deletion removes the workflow and its runs', async () => {
    const owner = randomUUID();
    const wf = (await call(owner, 'POST', '/api/v1/workflows', greetingWorkflow(receiver.url))).body;
    await publish(eventFor(wf, owner, { customer: {} }));
    await finishedRuns(owner, wf.id, 1);
    await call(owner, 'PATCH', `/api/v1/workflows/${wf.id}`, { active: false });
    // The change arrives through the outbox and the bus: wait until the engine skips a new event.
    let runs: any[] = [];
    for (let i = 0; i < 200 && !runs.some((r) => /deactivated/.test(r.error ?? '')); i++) {
      await publish(eventFor(wf, owner, { customer: { name: 'Late' } }));
      runs = await finishedRuns(owner, wf.id, i + 2);
    }
    assert.ok(
      runs.some((r) => r.status === 'skipped' && /deactivated/.test(r.error)),
      'the deactivation reached the engine',
    );
    // Once it has arrived it stays: every later event is skipped too.
    const later = [1, 2, 3].map((n) => eventFor(wf, owner, { customer: { name: `After ${n}` } }));
    for (const e of later) await publish(e);
    const all = await finishedRuns(owner, wf.id, runs.length + 3);
    for (const e of later) {
      const run = all.find((r) => r.eventId === e.eventId);
      assert.equal(run?.status, 'skipped', JSON.stringify(run));
      assert.match(run.error, /deactivated/);
    }

    assert.equal((await call(owner, 'DELETE', `/api/v1/workflows/${wf.id}`)).status, 204);
    for (let i = 0; i < 200; i++) {
      const res = await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs`);
      if (res.status === 404) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal((await call(owner, 'GET', `/api/v1/workflows/${wf.id}/runs`)).status, 404);
    for (let i = 0; i < 200; i++) {
      const { rows } = await testDb.db.exec('SELECT count(*)::int AS n FROM "engine"."run" WHERE workflow_id = $1', [wf.id]);
      if (rows[0]?.n === 0) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const { rows } = await testDb.db.exec('SELECT count(*)::int AS n FROM "engine"."run" WHERE workflow_id = $1', [wf.id]);
    assert.equal(rows[0]?.n, 0, "the deleted workflow's runs are gone");
  });
});

test('a dead-lettered trigger event becomes a failed run with its reason', async () => {
  const owner = randomUUID();
  const wf = (await call(owner, 'POST', '/api/v1/workflows', greetingWorkflow(receiver.url))).body;
  const event = eventFor(wf, owner, { customer: { name: 'Dee' } });
  await bus.publish(TRIGGER_DLQ_TOPIC, [
    { key: wf.id, value: event, headers: { 'x-dlq-error': 'workspace-api answered 503', 'x-dlq-attempts': '5', 'x-dlq-group-id': 'workflow-engine' } },
  ]);
  const [run] = await finishedRuns(owner, wf.id, 1);
  assert.equal(run.status, 'failed');
  assert.equal(run.eventId, event.eventId);
  assert.match(run.error, /after 5 attempts: workspace-api answered 503/);
  assert.deepEqual(run.triggerPayload, { customer: { name: 'Dee' } });
});

describe('never lost silently: an event the engine cannot store or gives up on is a failed run with the reason', () => {
  /** A TCP path to workspace-api that can be cut (a network partition), for the engine's definition reads only. */
  async function cuttablePathTo(url: string) {
    const target = new URL(url);
    let open = true;
    const sockets = new Set<net.Socket>();
    const track = (s: net.Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    };
    const server = net.createServer((client) => {
      track(client);
      if (!open) return void client.destroy();
      const upstream = net.connect(Number(target.port), target.hostname);
      track(upstream);
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
      cut() {
        open = false;
        for (const s of sockets) s.destroy();
      },
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  test('an event that fails every attempt (its workflow cannot be read) is dead-lettered by the bus and becomes a failed run with the error and attempt count', async () => {
    const path = await cuttablePathTo(apiUrl);
    const reader = workspaceClient({
      workspaceApiUrl: path.url,
      userToken: async (id) => tokenFor(id),
      serviceToken: async () => signInternalToken(keys, { sub: 'svc:workflow-engine', aud: 'workspace-api', scope: 'internal', azp: 'workflow-engine' }),
    });
    try {
      await engine!.close();
      engine = await startEngine({ definitions: reader.definitions });
      const owner = randomUUID();
      const wf = (await call(owner, 'POST', '/api/v1/workflows', greetingWorkflow(receiver.url))).body;
      // Inactive: the engine then reads the workflow from workspace-api before skipping an event (its
      // cache may lag). Wait until it knows, i.e. until an event is skipped for it.
      await call(owner, 'PATCH', `/api/v1/workflows/${wf.id}`, { active: false });
      let skipped = 0;
      for (let i = 1; skipped === 0 && i <= 200; i++) {
        await publish(eventFor(wf, owner, { customer: { name: `Early ${i}` } }));
        skipped = (await finishedRuns(owner, wf.id, i)).filter((r) => r.status === 'skipped').length;
      }
      assert.ok(skipped > 0, 'the deactivation reached the engine');
      const before = (await finishedRuns(owner, wf.id, 0)).length;
      // Now workspace-api cannot be reached from the engine: every attempt of the next event fails.
      path.cut();
      const event = eventFor(wf, owner, { customer: { name: 'Unlucky' } });
      await publish(event);
      const runs = await finishedRuns(owner, wf.id, before + 1);
      const run = runs.find((r) => r.eventId === event.eventId);
      assert.equal(run?.status, 'failed', JSON.stringify(runs));
      assert.match(run.error, /^the event could not be processed after 3 attempts: .+/);
      assert.deepEqual(run.triggerPayload, { customer: { name: 'Unlucky' } });
      assert.equal(run.triggerType, 'webhook');
    } finally {
      path.cut();
      await engine!.close();
      engine = await startEngine();
      await reader.close();
      await path.close();
    }
  });

  test('a run whose outcome cannot be stored (an HTTP response with a \\u0000) is recorded failed once, not executed again on every retry', async () => {
    let hits = 0;
    const nul = await startServer((_req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"echo":"a\\u0000b"}');
    });
    const client = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist(`127.0.0.1:${nul.port},127.0.0.1:${receiver.port}`)) });
    const previous = http;
    try {
      await engine!.close();
      http = client;
      engine = await startEngine();
      const owner = randomUUID();
      const wf = (
        await call(owner, 'POST', '/api/v1/workflows', {
          name: 'echo',
          triggerType: 'webhook',
          active: true,
          graph: {
            nodes: [{ id: 'echo', type: 'http_request', params: { method: 'POST', url: `${nul.url}/echo`, body: { n: 1 } } }],
            edges: [{ from: 'trigger', to: 'echo' }],
          },
        })
      ).body;
      const event = eventFor(wf, owner, { n: 1 });
      await publish(event);
      const [run] = await finishedRuns(owner, wf.id, 1);
      assert.equal(run.status, 'failed', JSON.stringify(run));
      assert.match(
        run.error,
        /^the run finished as succeeded but its record could not be stored \(.*Unicode.*\); its steps are kept without their inputs, outputs and errors$/,
      );
      assert.deepEqual(
        run.steps.map((s: any) => [s.nodeId, s.status, s.output]),
        [['echo', 'succeeded', null]],
      );
      assert.deepEqual(run.triggerPayload, { n: 1 }, 'the payload itself was stored');
      // Finished by the engine itself, not by the dead-letter subscriber after the bus's retries,
      // each of which would have executed the workflow (and sent its request) again.
      assert.equal(hits, 1, 'the request was sent once');
    } finally {
      await engine!.close();
      http = previous;
      engine = await startEngine();
      await client.close();
      await nul.close();
    }
  });
});

describe('runs of one workflow', () => {
  /** A loopback endpoint that holds each request until released, counting how many it holds at once. */
  async function gate() {
    let inFlight = 0;
    let maxInFlight = 0;
    const order: number[] = [];
    const waiting: (() => void)[] = [];
    const server = await startServer((req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      order.push(JSON.parse(req.body).n);
      waiting.push(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    return {
      server,
      order,
      get maxInFlight() {
        return maxInFlight;
      },
      get waiting() {
        return waiting.length;
      },
      releaseAll: () => waiting.splice(0).forEach((go) => go()),
    };
  }
  const slowWorkflow = (url: string, executionOrder: 'parallel' | 'ordered') => ({
    name: `slow ${executionOrder}`,
    triggerType: 'webhook',
    active: true,
    executionOrder,
    graph: {
      nodes: [{ id: 'call', type: 'http_request', params: { method: 'POST', url: `${url}/slow`, body: { n: '{{trigger.n}}' } } }],
      edges: [{ from: 'trigger', to: 'call' }],
    },
  });

  test('run concurrently by default: several HTTP requests of one workflow are in flight at once', async () => {
    const g = await gate();
    const client = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist(`127.0.0.1:${g.server.port},127.0.0.1:${receiver.port}`)) });
    const owner = randomUUID();
    const wf = (await call(owner, 'POST', '/api/v1/workflows', slowWorkflow(g.server.url, 'parallel'))).body;
    const previous = http;
    try {
      await engine!.close();
      http = client;
      engine = await startEngine({ workflowConcurrency: 4 });
      for (let n = 0; n < 6; n++) await publish(eventFor(wf, owner, { n }));
      // Held open by the endpoint: the runs can only all be waiting at once if they overlap.
      for (let i = 0; i < 400 && g.waiting < 4; i++) await new Promise((r) => setTimeout(r, 25));
      assert.equal(g.waiting, 4, 'four runs of the one workflow wait on the endpoint together');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(g.maxInFlight, 4, 'never more than the per-workflow limit');
      // Release as requests arrive until every run has finished.
      const releaser = setInterval(() => g.releaseAll(), 20);
      const runs = await finishedRuns(owner, wf.id, 6).finally(() => clearInterval(releaser));
      assert.equal(runs.filter((r) => r.status === 'succeeded').length, 6);
    } finally {
      g.releaseAll();
      await engine!.close();
      http = previous;
      engine = await startEngine();
      await client.close();
      await g.server.close();
    }
  });

  test('a workflow set to "ordered" runs one at a time, in the order its events were published', async () => {
    const g = await gate();
    const client = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist(`127.0.0.1:${g.server.port},127.0.0.1:${receiver.port}`)) });
    const owner = randomUUID();
    const wf = (await call(owner, 'POST', '/api/v1/workflows', slowWorkflow(g.server.url, 'ordered'))).body;
    assert.equal(wf.executionOrder, 'ordered');
    const previous = http;
    try {
      await engine!.close();
      http = client;
      engine = await startEngine({ workflowConcurrency: 8 });
      // As webhook-ingest publishes them for an ordered workflow.
      for (let n = 0; n < 6; n++) await bus.publish(TRIGGER_TOPIC, [{ key: wf.id, value: eventFor(wf, owner, { n }), ordered: true }]);
      // Each request is held a moment before release, so a second one would have time to arrive.
      const releaser = setInterval(() => g.releaseAll(), 50);
      const runs = await finishedRuns(owner, wf.id, 6).finally(() => clearInterval(releaser));
      assert.equal(runs.length, 6);
      assert.deepEqual(g.order, [0, 1, 2, 3, 4, 5], 'in publish order');
      assert.equal(g.maxInFlight, 1, 'one at a time');
    } finally {
      g.releaseAll();
      await engine!.close();
      http = previous;
      engine = await startEngine();
      await client.close();
      await g.server.close();
    }
  });
});
