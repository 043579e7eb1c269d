// The runs API additions over real HTTP on a real engine + workspace-api + embedded bus (PGlite, or
// Postgres with DATABASE_URL): the runs stream (Server-Sent Events) and its per-user scoping, the
// 24-hour summary, and "run again with this payload".
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
import { workspaceClient, type WorkspaceClient } from '../src/adapters/workspace-client.ts';
import { migrateEngine } from '../src/adapters/run-store.ts';
import { SsrfPolicy, parseAllowlist } from '../src/domain/ssrf.ts';
import { json, startServer, type TestServer } from './support.ts';

const keys = generateSigningKeys();
let testDb: TestDatabase;
let bus: EventBus;
let api: Service;
let apiUrl: string;
let engine: Service;
let engineUrl: string;
let workspace: WorkspaceClient;
let http: GuardedHttpClient;
let receiver: TestServer;

const tokenFor = (userId: string, aud: string, scope = 'mcp:read mcp:write', azp = 'test') => signInternalToken(keys, { sub: userId, aud, scope, azp });
const isEngine = (path: string) => /^\/api\/v1\/(workflows\/[^/]+\/runs|workflow-runs)/.test(path);

async function call(userId: string, method: string, path: string, body?: unknown, scope?: string) {
  const aud = isEngine(path) ? 'workflow-engine' : 'workspace-api';
  const res = await fetch(`${aud === 'workflow-engine' ? engineUrl : apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokenFor(userId, aud, scope)}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
}

const publish = (wf: { id: string }, ownerId: string, payload: Record<string, unknown>) => {
  const event: TriggerEvent = { eventId: `evt_${randomUUID()}`, workflowId: wf.id, ownerId, source: 'webhook', receivedAt: new Date().toISOString(), payload, headers: {} };
  return bus.publish(TRIGGER_TOPIC, [{ key: wf.id, value: event }]);
};

/** Polls until `check` answers something truthy (generous ceiling: the machine may be loaded). */
async function until<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const finished = (r: any) => ['succeeded', 'failed', 'skipped'].includes(r.status);
const runsOf = async (userId: string, workflowId: string) => (await call(userId, 'GET', `/api/v1/workflows/${workflowId}/runs?limit=100`)).body.items as any[];

function workflow(url: string, active = true) {
  return {
    name: 'Notify',
    triggerType: 'webhook',
    active,
    graph: { nodes: [{ id: 'notify', type: 'http_request', params: { method: 'POST', url, body: { name: '{{trigger.name}}' } } }], edges: [{ from: 'trigger', to: 'notify' }] },
  };
}
const createWorkflow = async (owner: string, url = `${receiver.url}/hook`, active = true) => {
  const res = await call(owner, 'POST', '/api/v1/workflows', workflow(url, active));
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
};

/** An open runs stream: everything received so far, as text. */
interface OpenStream {
  status: number;
  headers: Headers;
  text(): string;
  close(): void;
}
async function openStream(userId: string, query = ''): Promise<OpenStream> {
  const ac = new AbortController();
  const res = await fetch(`${engineUrl}/api/v1/workflow-runs/stream${query}`, { headers: { authorization: `Bearer ${tokenFor(userId, 'workflow-engine')}` }, signal: ac.signal });
  let text = '';
  if (res.body) {
    const decoder = new TextDecoder();
    void (async () => {
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
      } catch {
        // aborted
      }
    })();
  }
  return { status: res.status, headers: res.headers, text: () => text, close: () => ac.abort() };
}
const runEvents = (text: string) =>
  text
    .split('\n\n')
    .filter((block) => block.startsWith('event: run\n'))
    .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as { workflowId: string; eventId: string; status: string });

before(async () => {
  testDb = await createTestDatabase();
  await migrateWorkspace(testDb.db);
  await migrateEngine(testDb.db);
  bus = await createEmbeddedBus(testDb.db, { pollIntervalMs: 25, retry: { maxAttempts: 3, initialBackoffMs: 50, maxBackoffMs: 200 } });
  api = await buildWorkspaceApi({ db: testDb.db, jwtPublicKeyPem: keys.publicKeyPem, webhookSecretKey: randomBytes(32), publicBaseUrl: 'http://flowdesk.test', logLevel: 'silent', events: bus, outboxPollMs: 100 });
  apiUrl = await listen(api, 0);
  workspace = workspaceClient({
    workspaceApiUrl: apiUrl,
    userToken: async (id) => tokenFor(id, 'workspace-api', 'mcp:read mcp:write', 'workflow-engine'),
    serviceToken: async () => signInternalToken(keys, { sub: 'svc:workflow-engine', aud: 'workspace-api', scope: 'internal', azp: 'workflow-engine' }),
  });
  receiver = await startServer((req, res) => json(res, req.url === '/fail' ? 500 : 201, { ok: true }));
  http = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist(`127.0.0.1:${receiver.port}`)) });
  engine = await buildApp({ bus, db: testDb.db, jwtPublicKeyPem: keys.publicKeyPem, http, workspace, logLevel: 'silent', streamHeartbeatMs: 200 });
  engineUrl = await listen(engine, 0);
});

after(async () => {
  await engine?.close();
  await bus?.close();
  await http?.close();
  await workspace?.close();
  await api?.close();
  await receiver?.close();
  await testDb?.close();
});

describe('GET /api/v1/workflow-runs/stream', () => {
  test("a run's events arrive on its owner's stream as it starts and finishes; another user's stream gets none of them", async () => {
    const owner = randomUUID();
    const other = randomUUID();
    const wf = await createWorkflow(owner);
    const mine = await openStream(owner);
    const filtered = await openStream(owner, `?workflowId=${wf.id}`);
    const theirs = await openStream(other);
    try {
      assert.equal(mine.status, 200);
      assert.match(mine.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.equal(mine.headers.get('cache-control'), 'no-store');
      await until('the streams to open', async () => mine.text().includes(': connected') && theirs.text().includes(': connected'));

      await publish(wf, owner, { name: 'Ada' });
      const events = await until('the finished run on the stream', async () => {
        const e = runEvents(mine.text()).filter((x) => x.workflowId === wf.id);
        return e.some((x) => x.status === 'succeeded') ? e : undefined;
      });
      assert.deepEqual(events.map((e) => e.status), ['running', 'succeeded']);
      await until('the filtered stream', async () => runEvents(filtered.text()).some((e) => e.status === 'succeeded'));
      // Heartbeats keep the stream alive while nothing happens.
      await until('a heartbeat', async () => theirs.text().includes(': heartbeat'));
      assert.deepEqual(runEvents(theirs.text()), [], 'no run of another user');
    } finally {
      mine.close();
      filtered.close();
      theirs.close();
    }
  });

  test('a stream filtered to another user’s workflow is 404; without a token 401; with a read-only scope 200', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner);
    const foreign = await openStream(randomUUID(), `?workflowId=${wf.id}`);
    assert.equal(foreign.status, 404);
    foreign.close();
    assert.equal((await fetch(`${engineUrl}/api/v1/workflow-runs/stream`)).status, 401);
    const bad = await fetch(`${engineUrl}/api/v1/workflow-runs/stream?workflowId=nope`, { headers: { authorization: `Bearer ${tokenFor(owner, 'workflow-engine')}` } });
    assert.equal(bad.status, 400);
    const ac = new AbortController();
    const read = await fetch(`${engineUrl}/api/v1/workflow-runs/stream`, { headers: { authorization: `Bearer ${tokenFor(owner, 'workflow-engine', 'mcp:read')}` }, signal: ac.signal });
    assert.equal(read.status, 200);
    ac.abort();
  });
});

describe('GET /api/v1/workflow-runs/summary', () => {
  test('runs and failures of the last 24 h per workflow and in total, with each workflow’s last run; nothing of other users', async () => {
    const owner = randomUUID();
    const ok = await createWorkflow(owner);
    const failing = await createWorkflow(owner, `${receiver.url}/fail`);
    const idle = await createWorkflow(owner);
    await publish(ok, owner, { name: 'a' });
    await publish(ok, owner, { name: 'b' });
    await publish(failing, owner, { name: 'c' });
    await until('three finished runs', async () => ((await runsOf(owner, ok.id)).filter(finished).length === 2 && (await runsOf(owner, failing.id)).filter(finished).length === 1) || undefined);

    const res = await call(owner, 'GET', '/api/v1/workflow-runs/summary');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.runs, 3);
    assert.equal(res.body.failed, 1);
    const byId = new Map((res.body.workflows as any[]).map((w) => [w.workflowId, w]));
    assert.equal(byId.get(ok.id).runs, 2);
    assert.equal(byId.get(ok.id).failed, 0);
    assert.equal(byId.get(ok.id).lastRun.status, 'succeeded');
    assert.equal(byId.get(failing.id).failed, 1);
    assert.equal(byId.get(failing.id).lastRun.status, 'failed');
    assert.equal(byId.has(idle.id), false, 'a workflow without runs is absent');
    assert.ok(Date.parse(res.body.since) < Date.now() - 23 * 3_600_000);

    const stranger = await call(randomUUID(), 'GET', '/api/v1/workflow-runs/summary');
    assert.deepEqual({ runs: stranger.body.runs, failed: stranger.body.failed, workflows: stranger.body.workflows }, { runs: 0, failed: 0, workflows: [] });
    assert.equal((await call(owner, 'GET', '/api/v1/workflow-runs/summary?hours=0')).status, 400);
  });
});

describe('POST /api/v1/workflow-runs/:id/rerun', () => {
  test('starts a new run of the same workflow with the same payload, recorded with who started it and the run it repeats', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner);
    await publish(wf, owner, { name: 'Grace' });
    const [first] = await until('the first run', async () => (await runsOf(owner, wf.id)).filter(finished).length === 1 && (await runsOf(owner, wf.id)));
    const hits = receiver.received.length;

    const res = await call(owner, 'POST', `/api/v1/workflow-runs/${first.id}/rerun`);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.notEqual(res.body.id, first.id);
    assert.equal(res.body.status, 'queued');
    assert.equal(res.body.startedBy, owner);
    assert.equal(res.body.rerunOf, first.id);
    assert.equal(first.startedBy, null);

    const again = await until('the rerun to finish', async () => {
      const r = (await call(owner, 'GET', `/api/v1/workflow-runs/${res.body.id}`)).body;
      return finished(r) ? r : undefined;
    });
    assert.equal(again.status, 'succeeded', JSON.stringify(again));
    assert.deepEqual(again.triggerPayload, { name: 'Grace' });
    assert.equal(again.startedBy, owner, 'the claim and the outcome keep who started it');
    assert.equal(again.rerunOf, first.id);
    assert.deepEqual(again.steps[0].input.body, { name: 'Grace' });
    assert.equal(receiver.received.length - hits, 1, 'the node ran once more');
    assert.equal((await runsOf(owner, wf.id)).length, 2);
  });

  test('another user’s run is 404; a read-only token is 403; an inactive workflow is 409', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner);
    await publish(wf, owner, { name: 'x' });
    const [run] = await until('the run', async () => (await runsOf(owner, wf.id)).filter(finished).length === 1 && (await runsOf(owner, wf.id)));
    assert.equal((await call(randomUUID(), 'POST', `/api/v1/workflow-runs/${run.id}/rerun`)).status, 404);
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/rerun`, undefined, 'mcp:read')).status, 403);
    assert.equal((await call(owner, 'PATCH', `/api/v1/workflows/${wf.id}`, { active: false })).status, 200);
    // Until the engine's cache has the deactivation event a rerun is still accepted (202, a run):
    // those are counted, so the check below is that a 409 queues nothing.
    let acceptedBefore = 0;
    const inactive = await until('the engine to see the deactivation', async () => {
      const r = await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/rerun`);
      if (r.status === 202) acceptedBefore++;
      return r.status === 409 ? r : undefined;
    });
    assert.match(inactive.body.message, /inactive/);
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/rerun`)).status, 409);
    assert.equal((await runsOf(owner, wf.id)).length, 1 + acceptedBefore, 'a 409 queued nothing');
  });
});
