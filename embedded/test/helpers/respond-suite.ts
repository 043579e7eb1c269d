// Answering the webhook's caller (docs/webhooks.md, "Answering the caller") on `npm start`'s stack,
// one suite for both buses: respond.test.ts (embedded bus) and respond-kafka.test.ts (a real broker).
// The bus carries the trigger event to the engine and the answer back to ingest.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { loadConfig } from '../../src/config.ts';
import { startEmbedded, type Embedded } from '../../src/start.ts';
import { callJson } from '@flowdesk/service-kit/testing';

const RESPOND_TIMEOUT_MS = 3_000;

/**
 * The suite, on the stack `loadConfig` builds with what `setup` gives added to its environment
 * (KAFKA_BROKERS for Kafka); `teardown` runs after the stack closed.
 */
export function respondSuite(setup: () => Promise<Record<string, string>> = async () => ({}), teardown: () => Promise<void> = async () => {}): void {
  let home: string;
  let database: TestDatabase | undefined;
  let flowdesk: Embedded;
  let token: string;
  let receiver: http.Server;
  let receiverUrl: string;
  /** Requests the slow receiver holds until the test releases them. */
  const held: http.ServerResponse[] = [];

  const api = (method: string, p: string, body?: unknown) => callJson(`${flowdesk.localUrl}${p}`, token, method, body);

  async function deliver(workflowId: string, secret: string, body: unknown) {
    const res = await fetch(`${flowdesk.localUrl}/functions/v1/webhook-trigger/${workflowId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': secret },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  }

  async function workflow(nodes: unknown[], responseMode?: string) {
    const edges = nodes.map((n, i) => ({ from: i === 0 ? 'trigger' : (nodes[i - 1] as { id: string }).id, to: (n as { id: string }).id }));
    const created = await api('POST', '/api/v1/workflows', {
      name: `respond ${responseMode ?? 'default'} ${Math.random()}`,
      triggerType: 'webhook',
      active: true,
      ...(responseMode ? { triggerConfig: { responseMode } } : {}),
      graph: { nodes, edges },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { id: created.body.id as string, secret: created.body.webhookSecret as string };
  }

  before(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => held.push(res));
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    receiverUrl = `http://127.0.0.1:${port}`;
    home = await mkdtemp(path.join(tmpdir(), 'flowdesk-respond-'));
    database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
    const config = {
      ...loadConfig({
        FLOWDESK_HOME: home,
        PORT: '0',
        LOG_LEVEL: 'silent',
        SSRF_ALLOWLIST: `127.0.0.1:${port}`,
        RESPOND_TIMEOUT_MS: String(RESPOND_TIMEOUT_MS),
        ...(await setup()),
      }),
      databaseUrl: database?.url,
    };
    flowdesk = await startEmbedded(config);
    token = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')).writeKey;
  });

  after(async () => {
    for (const res of held) res.end();
    await flowdesk?.close();
    await new Promise((r) => receiver.close(r));
    await database?.close();
    await rm(home, { recursive: true, force: true });
    await teardown();
  });

  test('immediately (the default): 200 {accepted, eventId} as before, the run still happens', async () => {
    const wf = await workflow([{ id: 'set', type: 'set_fields', params: { fields: [{ name: 'x', value: '1' }] } }]);
    const res = await deliver(wf.id, wf.secret, { a: 1 });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['accepted', 'eventId']);
    assert.equal(res.body.accepted, true);
  });

  test('when the run finishes: {runId, status, output} with the last step’s output', async () => {
    const wf = await workflow(
      [{ id: 'total', type: 'set_fields', params: { fields: [{ name: 'total', value: '{{= trigger.qty * trigger.price }}' }] } }],
      'finished',
    );
    const res = await deliver(wf.id, wf.secret, { qty: 3, price: 4.5 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.status, 'succeeded');
    assert.deepEqual(res.body.output, { total: 13.5 });
    const run = await api('GET', `/api/v1/workflow-runs/${res.body.runId}`);
    assert.equal(run.status, 200);
    assert.equal(run.body.workflowId, wf.id);
  });

  test('from a Respond node: status, templated headers and a body from the payload; only the first Respond answers; the run goes on', async () => {
    const wf = await workflow(
      [
        {
          id: 'respond_1',
          type: 'respond',
          params: {
            status: 201,
            headers: { 'X-Order': '{{trigger.order.id}}' },
            body: { received: '{{trigger.order.id}}', lines: '{{= $count(trigger.order.lines) }}' },
          },
        },
        { id: 'respond_2', type: 'respond', params: { status: 500, body: { never: true } } },
        { id: 'after', type: 'set_fields', params: { fields: [{ name: 'done', value: 'yes' }] } },
      ],
      'respond_node',
    );
    const res = await deliver(wf.id, wf.secret, { order: { id: 'A-17', lines: [1, 2, 3] } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.headers.get('x-order'), 'A-17');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(res.body, { received: 'A-17', lines: 3 });
    const run = await pollRun(wf.id, (r) => r.status === 'succeeded');
    assert.deepEqual(
      run.steps.map((s: any) => [s.nodeId, s.status]),
      [
        ['respond_1', 'succeeded'],
        ['respond_2', 'succeeded'],
        ['after', 'succeeded'],
      ],
    );
    assert.equal(run.steps[0].output.sent, true);
    assert.equal(run.steps[1].output.sent, false);
    assert.ok(
      run.warnings.some((w: string) => w.includes('respond_2') && w.includes('answered the caller earlier')),
      JSON.stringify(run.warnings),
    );
  });

  test('a run that fails before its Respond node answers per the fallback: 500 {runId, status: failed, error}', async () => {
    const wf = await workflow(
      [
        { id: 'stop', type: 'stop', params: { status: 'failed', message: 'no lines in {{trigger.order}}' } },
        { id: 'respond', type: 'respond', params: { body: { ok: true } } },
      ],
      'respond_node',
    );
    const res = await deliver(wf.id, wf.secret, { order: 'B-2' });
    assert.equal(res.status, 500, JSON.stringify(res.body));
    assert.equal(res.body.status, 'failed');
    assert.match(res.body.error, /no lines in B-2/);
    assert.ok(res.body.runId);
  });

  test('a refused header fails the Respond node; the caller gets the fallback, never the header', async () => {
    const wf = await workflow([{ id: 'respond', type: 'respond', params: { headers: { 'Set-Cookie': 'sid=1' }, body: { ok: true } } }], 'respond_node');
    const res = await deliver(wf.id, wf.secret, {});
    assert.equal(res.status, 500, JSON.stringify(res.body));
    assert.equal(res.headers.get('set-cookie'), null);
    assert.match(res.body.error, /set-cookie.*cannot be set/);
  });

  test('past RESPOND_TIMEOUT_MS: 202 with a poll link; the event runs anyway and the poll link gives the result', async () => {
    const wf = await workflow(
      [
        { id: 'slow', type: 'http_request', params: { method: 'GET', url: `${receiverUrl}/slow` } },
        { id: 'respond', type: 'respond', params: { status: 200, body: { slow: '{{nodes.slow.body.ok}}' } } },
      ],
      'respond_node',
    );
    const started = Date.now();
    const res = await deliver(wf.id, wf.secret, {});
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.ok(Date.now() - started >= RESPOND_TIMEOUT_MS - 100);
    assert.equal(res.body.accepted, true);
    assert.equal(res.body.status, 'running');
    assert.equal(res.body.poll, `/api/v1/workflows/${wf.id}/runs/by-event/${encodeURIComponent(res.body.eventId)}`);

    // The poll link is the runs API: without a key it is refused.
    assert.equal((await fetch(`${flowdesk.localUrl}${res.body.poll}`)).status, 401);
    const running = await api('GET', res.body.poll);
    assert.equal(running.status, 200, JSON.stringify(running.body));
    assert.equal(running.body.status, 'running');

    // The receiver answers; the run finishes and the poll link shows what the Respond node answered.
    while (held.length === 0) await new Promise((r) => setTimeout(r, 20));
    const slow = held.shift()!;
    slow.writeHead(200, { 'content-type': 'application/json' });
    slow.end(JSON.stringify({ ok: 'finally' }));
    let polled = await api('GET', res.body.poll);
    for (const deadline = Date.now() + 20_000; polled.body.status !== 'succeeded' && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 50));
      polled = await api('GET', res.body.poll);
    }
    assert.equal(polled.body.status, 'succeeded', JSON.stringify(polled.body));
    const answer = polled.body.steps.find((s: any) => s.nodeId === 'respond').output;
    assert.deepEqual(answer.body, { slow: 'finally' });
    assert.equal(answer.status, 200);
  });

  test('the poll link of an unknown event is 404', async () => {
    const wf = await workflow([{ id: 'respond', type: 'respond', params: {} }], 'respond_node');
    const res = await api('GET', `/api/v1/workflows/${wf.id}/runs/by-event/evt_nothing`);
    assert.equal(res.status, 404);
  });

  async function pollRun(workflowId: string, done: (run: any) => boolean) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const items = (await api('GET', `/api/v1/workflows/${workflowId}/runs`)).body.items as any[];
      const run = items.find(done);
      if (run) return (await api('GET', `/api/v1/workflow-runs/${run.id}`)).body;
      if (Date.now() > deadline) throw new Error(`no run matched: ${JSON.stringify(items)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
