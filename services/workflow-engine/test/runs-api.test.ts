// The runs API additions over real HTTP on a real engine + workspace-api + embedded bus (PGlite, or
// Postgres with DATABASE_URL): the runs stream (Server-Sent Events) and its per-user scoping, the
// 24-hour summary, and "run again with this payload".
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { EventBus } from '@flowdesk/bus';
import { TRIGGER_DLQ_TOPIC, TRIGGER_TOPIC } from '@flowdesk/contracts';
import type { TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, signInternalToken, type Service } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import type { GuardedHttpClient } from '@flowdesk/service-kit';
import type { WorkspaceClient } from '../src/adapters/workspace-client.ts';
import { json, startEngineStack, webhookEvent, type EngineStack, type TestServer, userCaller } from './support.ts';
import { until } from '@flowdesk/service-kit/testing';

const keys = generateSigningKeys();
let stack: EngineStack;
let testDb: TestDatabase;
let bus: EventBus;
let apiUrl: string;
let engine: Service;
let engineUrl: string;
let workspace: WorkspaceClient;
let http: GuardedHttpClient;
let receiver: TestServer;
/** Answers of /hold requests not given yet. */
const held: (() => void)[] = [];

const tokenFor = (userId: string, aud: string, scope = 'mcp:read mcp:write', azp = 'test') => signInternalToken(keys, { sub: userId, aud, scope, azp });

const call = userCaller(keys, () => ({ apiUrl, engineUrl }));

const publish = (wf: { id: string }, ownerId: string, payload: Record<string, unknown> = {}) =>
  bus.publish(TRIGGER_TOPIC, [{ key: wf.id, value: webhookEvent(wf, ownerId, payload) }]);

const finished = (r: any) => ['succeeded', 'failed', 'skipped'].includes(r.status);
const runsOf = async (userId: string, workflowId: string) => (await call(userId, 'GET', `/api/v1/workflows/${workflowId}/runs?limit=100`)).body.items as any[];

function workflow(url: string, active = true) {
  return {
    name: 'Notify',
    triggerType: 'webhook',
    active,
    graph: {
      nodes: [{ id: 'notify', type: 'http_request', params: { method: 'POST', url, body: { name: '{{trigger.name}}' } } }],
      edges: [{ from: 'trigger', to: 'notify' }],
    },
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
  const res = await fetch(`${engineUrl}/api/v1/workflow-runs/stream${query}`, {
    headers: { authorization: `Bearer ${tokenFor(userId, 'workflow-engine')}` },
    signal: ac.signal,
  });
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
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      // /hold answers only when a test lets it (a run in flight); /fail fails the node.
      if (req.url === '/hold') held.push(() => json(res, 201, { ok: true }));
      else json(res, req.url === '/fail' ? 500 : 201, { ok: true });
    },
  });
  ({ testDb, bus, apiUrl, workspace, http } = stack);
  receiver = stack.receiver!;
  engine = await buildApp({ bus, db: testDb.db, jwtPublicKeyPem: keys.publicKeyPem, http, workspace, logLevel: 'silent', streamHeartbeatMs: 200 });
  engineUrl = await listen(engine, 0);
});
after(async () => {
  for (const answer of held.splice(0)) answer();
  await engine?.close();
  await stack?.close();
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
      assert.deepEqual(
        events.map((e) => e.status),
        ['running', 'succeeded'],
      );
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
    const bad = await fetch(`${engineUrl}/api/v1/workflow-runs/stream?workflowId=nope`, {
      headers: { authorization: `Bearer ${tokenFor(owner, 'workflow-engine')}` },
    });
    assert.equal(bad.status, 400);
    const ac = new AbortController();
    const read = await fetch(`${engineUrl}/api/v1/workflow-runs/stream`, {
      headers: { authorization: `Bearer ${tokenFor(owner, 'workflow-engine', 'mcp:read')}` },
      signal: ac.signal,
    });
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
    await until(
      'three finished runs',
      async () => ((await runsOf(owner, ok.id)).filter(finished).length === 2 && (await runsOf(owner, failing.id)).filter(finished).length === 1) || undefined,
    );

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

  test('another user’s run is 404; a read-only token is 403; an inactive workflow still runs by hand (as a test run)', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner);
    await publish(wf, owner, { name: 'x' });
    const [run] = await until('the run', async () => (await runsOf(owner, wf.id)).filter(finished).length === 1 && (await runsOf(owner, wf.id)));
    assert.equal((await call(randomUUID(), 'POST', `/api/v1/workflow-runs/${run.id}/rerun`)).status, 404);
    assert.equal((await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/rerun`, undefined, 'mcp:read')).status, 403);
    assert.equal((await call(owner, 'PATCH', `/api/v1/workflows/${wf.id}`, { active: false })).status, 200);
    const res = await call(owner, 'POST', `/api/v1/workflow-runs/${run.id}/rerun`);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const again = await until('the rerun of the inactive workflow to finish', async () => {
      const r = (await call(owner, 'GET', `/api/v1/workflow-runs/${res.body.id}`)).body;
      return finished(r) ? r : undefined;
    });
    assert.equal(again.status, 'succeeded', JSON.stringify(again));
    assert.equal(again.triggerType, 'manual');
  });
});

describe('POST /api/v1/workflows/:id/runs (Run now)', () => {
  test('starts a run with the given payload, recorded as manual with who started it; without a body the payload is {}', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner, `${receiver.url}/hook`, false);
    const hits = receiver.received.length;
    const res = await call(owner, 'POST', `/api/v1/workflows/${wf.id}/runs`, { payload: { name: 'Ada' } });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.status, 'queued');
    assert.equal(res.body.triggerType, 'manual');
    assert.equal(res.body.startedBy, owner);
    const done = await until('the manual run to finish', async () => {
      const r = (await call(owner, 'GET', `/api/v1/workflow-runs/${res.body.id}`)).body;
      return finished(r) ? r : undefined;
    });
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.triggerType, 'manual');
    assert.equal(done.startedBy, owner);
    assert.deepEqual(done.steps[0].input.body, { name: 'Ada' }, 'the payload is {{trigger.*}}');
    assert.equal(receiver.received.length - hits, 1);

    const bare = await fetch(`${engineUrl}/api/v1/workflows/${wf.id}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenFor(owner, 'workflow-engine')}` },
    });
    assert.equal(bare.status, 202, await bare.clone().text());
    const bareRun = (await bare.json()) as { id: string; triggerPayload: unknown };
    assert.deepEqual(bareRun.triggerPayload, {});
  });

  test('the same Idempotency-Key starts one run; bad bodies are 400; other users 404; read-only 403', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner);
    const send = (key: string) =>
      fetch(`${engineUrl}/api/v1/workflows/${wf.id}/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenFor(owner, 'workflow-engine')}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ payload: { n: 1 } }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const first = await send('k-1');
    const second = await send('k-1');
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    assert.equal(second.body.id, first.body.id, 'a retried request answers the same run');
    await until('the run to finish', async () => finished((await call(owner, 'GET', `/api/v1/workflow-runs/${first.body.id}`)).body));
    assert.equal((await runsOf(owner, wf.id)).length, 1);

    const bad = await call(owner, 'POST', `/api/v1/workflows/${wf.id}/runs`, { payload: 'x' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /payload/);
    assert.equal((await call(owner, 'POST', `/api/v1/workflows/${wf.id}/runs`, { other: 1 })).status, 400);
    assert.equal((await call(randomUUID(), 'POST', `/api/v1/workflows/${wf.id}/runs`, {})).status, 404);
    assert.equal((await call(owner, 'POST', `/api/v1/workflows/${wf.id}/runs`, {}, 'mcp:read')).status, 403);
  });
});

describe('GET /api/v1/workflow-runs/health', () => {
  test('the last hour by status, the failing workflows with their last failure, the backlog and dead letters; nothing of other users', async () => {
    const owner = randomUUID();
    const ok = await createWorkflow(owner);
    const failing = await createWorkflow(owner, `${receiver.url}/fail`);
    const slow = await createWorkflow(owner, `${receiver.url}/hold`);
    await publish(ok, owner, { name: 'a' });
    await publish(failing, owner, { name: 'b' });
    await publish(failing, owner, { name: 'c' });
    await until(
      'three finished runs',
      async () => ((await runsOf(owner, ok.id)).filter(finished).length === 1 && (await runsOf(owner, failing.id)).filter(finished).length === 2) || undefined,
    );
    // A trigger event the engine gave up on (dead-lettered after its retries): a failed run with the reason.
    const dead = webhookEvent(ok, owner, { name: 'd' });
    await bus.publish(TRIGGER_DLQ_TOPIC, [
      { key: ok.id, value: dead, headers: { 'x-dlq-error': 'workspace-api answered 503', 'x-dlq-attempts': '5', 'x-dlq-group-id': 'workflow-engine' } },
    ]);
    await until('the dead letter recorded', async () => (await runsOf(owner, ok.id)).some((r) => r.eventId === dead.eventId) || undefined);
    // A run in flight: its node waits for the receiver, so its event is not processed yet.
    const publishedAt = Date.now();
    await publish(slow, owner, { name: 'e' });
    await until('the held request', async () => held.length > 0 || undefined);

    const res = await call(owner, 'GET', '/api/v1/workflow-runs/health');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const h = res.body;
    assert.deepEqual(h.byStatus, { queued: 0, running: 1, succeeded: 1, failed: 3, skipped: 0 });
    assert.ok(Math.abs(Date.parse(h.checkedAt) - Date.parse(h.since) - 3_600_000) < 1000, 'one hour by default');
    assert.deepEqual(
      h.failingWorkflows.map((w: any) => [w.workflowId, w.runs, w.failed]),
      [
        [failing.id, 2, 2],
        [ok.id, 2, 1],
      ],
    );
    const lastFailure = h.failingWorkflows[0].lastFailure;
    assert.equal(lastFailure.runId, (await runsOf(owner, failing.id))[0].id, 'the newest failed run');
    assert.match(lastFailure.error, /500/);
    assert.equal(h.deadLettered.count, 1);
    assert.match(h.deadLettered.last.error, /after 5 attempts: workspace-api answered 503/);
    assert.equal(h.deadLettered.last.runId, (await runsOf(owner, ok.id)).find((r) => r.eventId === dead.eventId).id);
    assert.equal(h.backlog.unfinishedRuns, 1);
    assert.equal(h.backlog.waitingEvents, 1, 'the event in flight is not processed yet (the embedded bus counts it)');
    assert.ok(Math.abs(Date.parse(h.backlog.oldestWaitingAt) - publishedAt) < 5_000, h.backlog.oldestWaitingAt);
    assert.ok(h.backlog.oldestUnfinishedAt);

    // Another user sees an empty pipeline, whatever this one's state.
    const stranger = (await call(randomUUID(), 'GET', '/api/v1/workflow-runs/health', undefined, 'mcp:read')).body;
    assert.deepEqual(
      { byStatus: stranger.byStatus, failing: stranger.failingWorkflows, backlog: stranger.backlog, dead: stranger.deadLettered },
      {
        byStatus: { queued: 0, running: 0, succeeded: 0, failed: 0, skipped: 0 },
        failing: [],
        backlog: { waitingEvents: 0, oldestWaitingAt: null, unfinishedRuns: 0, oldestUnfinishedAt: null },
        dead: { count: 0, last: null },
      },
    );

    // Once the request is answered the backlog drains.
    for (const answer of held.splice(0)) answer();
    await until('the backlog to drain', async () => {
      const b = (await call(owner, 'GET', '/api/v1/workflow-runs/health?hours=24')).body;
      return b.backlog.waitingEvents === 0 && b.backlog.unfinishedRuns === 0 && b.byStatus.succeeded === 2 ? b : undefined;
    });
    assert.equal((await call(owner, 'GET', '/api/v1/workflow-runs/health?hours=0')).status, 400);
    assert.equal((await call(owner, 'GET', '/api/v1/workflow-runs/health?hours=25')).status, 400);
    assert.equal((await fetch(`${engineUrl}/api/v1/workflow-runs/health`)).status, 401);
  });

  test('a run answers its trace id: null when tracing was off (embedded/test/tracing.test.ts has one with tracing on)', async () => {
    const owner = randomUUID();
    const wf = await createWorkflow(owner);
    await publish(wf, owner, { name: 'x' });
    const [run] = await until('the run', async () => (await runsOf(owner, wf.id)).filter(finished).length === 1 && (await runsOf(owner, wf.id)));
    assert.equal(run.traceId, null);
    assert.equal((await call(owner, 'GET', `/api/v1/workflow-runs/${run.id}`)).body.traceId, null);
  });
});
