import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { loadConfig } from '../../src/config.ts';
import { startEmbedded, type Embedded } from '../../src/start.ts';

/**
 * `npm start`'s stack in this process with a loopback receiver the HTTP Request node may reach, and
 * what the observability tests do through it: a webhook through to a finished run, an MCP tools/call.
 */
export interface Pipeline {
  flowdesk: Embedded;
  /** The stack's Postgres database (DATABASE_URL set), for reading what a service stored; undefined on PGlite. */
  databaseUrl: string | undefined;
  receiverUrl: string;
  received: http.IncomingHttpHeaders[];
  api(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Creates and activates condition → HTTP request → create task; returns its id and secret. */
  webhookWorkflow(): Promise<{ id: string; secret: string }>;
  /** Delivers until accepted (ingest's trigger cache may still hold the inactive answer), returns the eventId. */
  deliver(workflowId: string, secret: string, body: unknown): Promise<string>;
  finishedRun(workflowId: string, eventId: string): Promise<any>;
  callTool(name: string, args: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

export async function startPipeline(): Promise<Pipeline> {
  const received: http.IncomingHttpHeaders[] = [];
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ticket: 'T-1' }));
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as AddressInfo).port;
  const receiverUrl = `http://127.0.0.1:${port}`;
  const home = await mkdtemp(path.join(tmpdir(), 'flowdesk-observability-'));
  const database: TestDatabase | undefined = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const flowdesk = await startEmbedded({
    ...loadConfig({ FLOWDESK_HOME: home, PORT: '0', LOG_LEVEL: 'silent', SSRF_ALLOWLIST: `127.0.0.1:${port}` }),
    databaseUrl: database?.url,
  });
  const token: string = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')).writeKey;

  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${flowdesk.localUrl}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
  };

  return {
    flowdesk,
    databaseUrl: database?.url,
    receiverUrl,
    received,
    api,
    async webhookWorkflow() {
      const created = await api('POST', '/api/v1/workflows', {
        name: 'Observed',
        triggerType: 'webhook',
        active: true,
        graph: {
          nodes: [
            { id: 'is_signup', type: 'condition', params: { left: '{{trigger.event}}', operator: 'equals', right: 'signup' } },
            { id: 'notify', type: 'http_request', params: { method: 'POST', url: `${receiverUrl}/crm`, body: { name: '{{trigger.name}}' } } },
            { id: 'task', type: 'create_task', params: { title: 'Welcome {{trigger.name}}' } },
          ],
          edges: [
            { from: 'trigger', to: 'is_signup' },
            { from: 'is_signup', to: 'notify', branch: 'true' },
            { from: 'notify', to: 'task' },
          ],
        },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      if (!created.body.active) assert.equal((await api('PATCH', `/api/v1/workflows/${created.body.id}`, { active: true })).status, 200);
      return { id: created.body.id, secret: created.body.webhookSecret };
    },
    async deliver(workflowId, secret, body) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const res = await fetch(`${flowdesk.localUrl}/functions/v1/webhook-trigger/${workflowId}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-webhook-secret': secret },
          body: JSON.stringify(body),
        });
        const answer = (await res.json()) as any;
        if (res.status === 200) return answer.eventId as string;
        assert.equal(res.status, 404, JSON.stringify(answer));
        assert.ok(Date.now() < deadline, 'the webhook was never accepted');
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async finishedRun(workflowId, eventId) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const items = ((await api('GET', `/api/v1/workflows/${workflowId}/runs`)).body?.items ?? []) as any[];
        const run = items.find((r) => r.eventId === eventId && ['succeeded', 'failed', 'skipped'].includes(r.status));
        if (run) return run;
        assert.ok(Date.now() < deadline, 'the run never finished');
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async callTool(name, args) {
      const client = new Client({ name: 'observability-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${flowdesk.localUrl}/functions/v1/mcp-server-v2`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        return await client.callTool({ name, arguments: args });
      } finally {
        await client.close();
      }
    },
    async close() {
      await flowdesk.close();
      await new Promise((r) => receiver.close(r));
      await database?.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** One sample's value from a Prometheus text exposition (0 when the series is absent). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) {
      total += Number(m[4]);
      found = true;
    }
  }
  return found ? total : 0;
}
