// End to end on `npm start`'s stack, through the one base URL: a webhook delivery runs a workflow
// (condition → HTTP request to a loopback receiver → create task), and what must be refused is.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { loadConfig } from '../src/config.ts';
import { startEmbedded, type Embedded } from '../src/start.ts';
import { callJson } from '@flowdesk/service-kit/testing';

let home: string;
let database: TestDatabase | undefined;
let flowdesk: Embedded;
let receiver: http.Server;
let receiverUrl: string;
const received: { body: string; headers: http.IncomingHttpHeaders }[] = [];
let token: string;

const api = (method: string, p: string, body?: unknown) => callJson(`${flowdesk.localUrl}${p}`, token, method, body);

const deliver = (workflowId: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${flowdesk.localUrl}/functions/v1/webhook-trigger/${workflowId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function runsOf(workflowId: string, atLeast: number, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = (await api('GET', `/api/v1/workflows/${workflowId}/runs`)).body.items as any[];
    const done = items.filter((r) => ['succeeded', 'failed', 'skipped'].includes(r.status));
    if (done.length >= atLeast || Date.now() > deadline) return done;
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ body, headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ticket: 'T-1' }));
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as AddressInfo).port;
  receiverUrl = `http://127.0.0.1:${port}`;

  home = await mkdtemp(path.join(tmpdir(), 'flowdesk-webhook-'));
  database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const config = {
    ...loadConfig({ FLOWDESK_HOME: home, PORT: '0', LOG_LEVEL: 'silent', SSRF_ALLOWLIST: `127.0.0.1:${port}` }),
    databaseUrl: database?.url,
  };
  flowdesk = await startEmbedded(config);
  // The demo user's own Read + Write key, through the public API (/api/v1, the console's edge).
  token = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')).writeKey;
});

after(async () => {
  await flowdesk?.close();
  await new Promise((r) => receiver.close(r));
  await database?.close();
  await rm(home, { recursive: true, force: true });
});

test('webhook → condition → HTTP request → task, with {{trigger.customer.name}}; the run records every node', async () => {
  const created = await api('POST', '/api/v1/workflows', {
    name: 'New customer',
    triggerType: 'webhook',
    graph: {
      nodes: [
        { id: 'is_signup', type: 'condition', params: { left: '{{trigger.event}}', operator: 'equals', right: 'signup' } },
        { id: 'notify', type: 'http_request', params: { method: 'POST', url: `${receiverUrl}/crm`, body: { name: '{{trigger.customer.name}}' } } },
        { id: 'task', type: 'create_task', params: { title: 'Welcome {{trigger.customer.name}}', notes: 'ticket {{nodes.notify.body.ticket}}' } },
      ],
      edges: [
        { from: 'trigger', to: 'is_signup' },
        { from: 'is_signup', to: 'notify', branch: 'true' },
        { from: 'notify', to: 'task' },
      ],
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const wf = created.body;
  const secret: string = wf.webhookSecret;

  // Inactive: refused, no run.
  assert.equal((await deliver(wf.id, { event: 'signup', customer: { name: 'Ada' } }, { 'x-webhook-secret': secret })).status, 404);

  await api('PATCH', `/api/v1/workflows/${wf.id}`, { active: true });
  await new Promise((r) => setTimeout(r, 1_100)); // ingest trusts a lookup for one second

  // Wrong secret: refused, no run.
  const wrong = await deliver(wf.id, { event: 'signup', customer: { name: 'Eve' } }, { 'x-webhook-secret': `${secret}x` });
  assert.equal(wrong.status, 401);

  const ok = await deliver(wf.id, { event: 'signup', customer: { name: 'Ada' } }, { 'x-webhook-secret': secret });
  assert.equal(ok.status, 200);
  assert.equal(((await ok.json()) as any).accepted, true);

  const [run] = await runsOf(wf.id, 1);
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(
    run.steps.map((s: any) => s.nodeId),
    ['is_signup', 'notify', 'task'],
  );
  assert.deepEqual(
    received.map((r) => JSON.parse(r.body)),
    [{ name: 'Ada' }],
  );
  const tasks = (await api('GET', '/api/v1/tasks?q=Welcome')).body.items;
  assert.deepEqual(
    tasks.map((t: any) => [t.title, t.notes]),
    [['Welcome Ada', 'ticket T-1']],
  );
  assert.equal((await runsOf(wf.id, 1)).length, 1, 'the refused deliveries left no run');

  // A regenerated secret: the old one is refused from then on.
  const fresh = (await api('POST', `/api/v1/workflows/${wf.id}/webhook-secret/regenerate`)).body.secret;
  await new Promise((r) => setTimeout(r, 1_100));
  assert.equal((await deliver(wf.id, { event: 'signup', customer: { name: 'Old' } }, { 'x-webhook-secret': secret })).status, 401);
  assert.equal((await deliver(wf.id, { event: 'signup', customer: { name: 'Bo' } }, { 'x-webhook-secret': fresh })).status, 200);
  assert.equal((await runsOf(wf.id, 2)).length, 2);
});

test('the runs event stream through the one base URL: headers and the first bytes at once, each run event as it happens', async () => {
  const created = await api('POST', '/api/v1/workflows', {
    name: 'Streamed',
    triggerType: 'webhook',
    active: true,
    graph: { nodes: [{ id: 'task', type: 'create_task', params: { title: 'streamed {{trigger.n}}' } }], edges: [{ from: 'trigger', to: 'task' }] },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const wf = created.body;
  const aborter = new AbortController();
  const res = await fetch(`${flowdesk.localUrl}/api/v1/workflow-runs/stream?workflowId=${wf.id}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: aborter.signal,
  });
  try {
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    const readUntil = async (pattern: RegExp, what: string) => {
      const deadline = AbortSignal.timeout(20_000);
      while (!pattern.test(text)) {
        const chunk = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => deadline.addEventListener('abort', () => reject(new Error(`no ${what} within 20 s: ${JSON.stringify(text)}`)))),
        ]);
        if (chunk.done) throw new Error(`the stream ended before ${what}: ${JSON.stringify(text)}`);
        text += Buffer.from(chunk.value).toString();
      }
    };
    // Before any run: the stream's first bytes reached the client through the front.
    await readUntil(/: connected/, 'first bytes');
    assert.doesNotMatch(text, /event: run/);
    // The workflow's active state reaches ingest's cache within its one-second lookup.
    let ok: Response | undefined;
    for (let i = 0; i < 50 && ok?.status !== 200; i++) {
      if (i) await new Promise((r) => setTimeout(r, 100));
      ok = await deliver(wf.id, { n: 1 }, { 'x-webhook-secret': wf.webhookSecret });
      await ok.body?.cancel();
    }
    assert.equal(ok?.status, 200);
    await readUntil(/event: run\ndata: \{[^\n]*"status":"succeeded"/, 'succeeded run event');
    assert.match(text, new RegExp(`"workflowId":"${wf.id}"`));
  } finally {
    aborter.abort();
  }
});
