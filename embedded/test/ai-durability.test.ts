// The AI step's durability in the embedded start (issue #38: "kill -9 between the two tool calls and
// the task is created once"). `npm start`'s process (embedded/src/main.ts, in a child process of its
// own, PGlite in a folder or a fresh Postgres database with DATABASE_URL) runs a webhook workflow
// whose AI step has the owner's Flowdesk tools (read and write) and a second MCP server (the SDK's
// McpServer on loopback, here). A stand-in OpenAI-compatible server scripts the model: create_task
// → (the process is killed with SIGKILL when the next model call arrives) → the MCP server's
// lookup_order → the answer. After a restart on the same home the run completes; exactly one task
// exists; the model call that had completed before the kill is not made again (the stand-in counts
// each model call), and the MCP tool is called once.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createTestDatabase } from '@flowdesk/db';
import { until } from './helpers/stack.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const listening = async (server: http.Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
};

/** `npm start`'s entry (without npm's prestart: the console bundle is not needed here), on `home`. */
function startFlowdeskProcess(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'embedded/src/main.ts'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited, output: () => output };
}

test(
  'kill -9 between the AI step’s two tool calls: after the restart the run completes, one task, the completed model call not made again',
  { timeout: 600_000 },
  async (t) => {
    const cleanups: (() => Promise<void> | void)[] = [];
    t.after(async () => {
      for (const c of cleanups.reverse()) await c();
    });

    // The model: m1 asks for create_task; the call after it (m2) kills the process the first time it
    // arrives, then asks for lookup_order; m3 answers with the two results.
    let flowdesk: ChildProcess | undefined;
    const calls = { m1: 0, m2: 0, m3: 0 };
    let killed = false;
    const model = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { model: string; messages: { role: string; content: unknown }[] };
        const results = body.messages.filter((m) => m.role === 'tool');
        const answer = (message: Record<string, unknown>, finish: string) =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              id: 'chatcmpl-d',
              object: 'chat.completion',
              model: body.model,
              choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
              usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
            }),
          );
        const toolCall = (id: string, name: string, args: unknown) => ({
          content: null,
          tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
        });
        if (results.length === 0) {
          calls.m1++;
          return answer(toolCall('c1', 'create_task', { title: 'Fix the outage', priority: 'high' }), 'tool_calls');
        }
        if (results.length === 1) {
          calls.m2++;
          if (!killed) {
            // Between the two tool calls: create_task has completed; the process dies before the next one.
            killed = true;
            flowdesk!.kill('SIGKILL');
            return void res.destroy();
          }
          return answer(toolCall('c2', 'lookup_order', { orderId: 'Z-9' }), 'tool_calls');
        }
        calls.m3++;
        answer({ content: results.map((m) => String(m.content)).join(' | ') }, 'stop');
      });
    });
    const modelPort = await listening(model);
    cleanups.push(() => new Promise<void>((r) => (model.closeAllConnections(), model.close(() => r()))));

    // The second MCP server (stateless Streamable HTTP), counting its tool's calls.
    const lookups: string[] = [];
    const mcp = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void (async () => {
          const server = new McpServer({ name: 'orders', version: '1.0.0' });
          server.registerTool('lookup_order', { description: 'Looks an order up by its id.', inputSchema: { orderId: z.string() } }, async ({ orderId }) => {
            lookups.push(orderId);
            return { content: [{ type: 'text', text: `order ${orderId} is shipped` }] };
          });
          const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
          res.on('close', () => void transport.close());
          await server.connect(transport);
          const raw = Buffer.concat(chunks).toString();
          await transport.handleRequest(req, res, raw ? JSON.parse(raw) : undefined);
        })();
      });
    });
    const mcpPort = await listening(mcp);
    cleanups.push(() => new Promise<void>((r) => (mcp.closeAllConnections(), mcp.close(() => r()))));

    const home = await mkdtemp(path.join(tmpdir(), 'flowdesk-ai-kill-'));
    const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
    cleanups.push(async () => {
      await database?.close();
      await rm(home, { recursive: true, force: true });
    });
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      FLOWDESK_HOME: home,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SSRF_ALLOWLIST: `127.0.0.1:${modelPort},127.0.0.1:${mcpPort}`,
    };
    delete env.PUBLIC_BASE_URL;
    delete env.DATABASE_URL;
    if (database?.url) env.DATABASE_URL = database.url;
    const base = `http://127.0.0.1:${port}`;

    const start = async () => {
      const p = startFlowdeskProcess(env);
      flowdesk = p.child;
      cleanups.push(() => void (p.child.exitCode === null && p.child.signalCode === null && p.child.kill('SIGKILL')));
      const ready = await until(
        async () => {
          if (p.child.exitCode !== null) return true;
          return /Flowdesk is running at/.test(p.output()) && existsSync(path.join(home, 'dev.json'));
        },
        240_000,
        250,
      );
      assert.ok(ready && p.child.exitCode === null, `Flowdesk did not start:\n${p.output()}`);
      return p;
    };

    let running = await start();
    const { writeKey } = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')) as { writeKey: string };
    const api = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { authorization: `Bearer ${writeKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      assert.ok(res.ok, `${method} ${url}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    await api('POST', '/api/v1/credentials', {
      name: 'llm',
      type: 'openai_compatible',
      fields: { baseUrl: `http://127.0.0.1:${modelPort}/v1`, apiKey: 'sk-test' },
    });
    const wf = (await api('POST', '/api/v1/workflows', {
      name: 'Triage with tools',
      triggerType: 'webhook',
      active: true,
      graph: {
        nodes: [
          {
            id: 'agent',
            type: 'ai',
            params: {
              credential: 'llm',
              model: 'agent',
              prompt: 'Triage: {{trigger.text}}',
              flowdeskTools: 'read_write',
              mcpServers: [{ url: `http://127.0.0.1:${mcpPort}/mcp` }],
            },
          },
        ],
        edges: [{ from: 'trigger', to: 'agent' }],
      },
    })) as { id: string; webhookSecret: string };
    const delivered = await fetch(`${base}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret },
      body: JSON.stringify({ text: 'the site is down' }),
    });
    assert.equal(delivered.status, 200, await delivered.text());

    // The process dies when the model is asked after create_task.
    await running.exited;
    assert.equal(running.child.signalCode, 'SIGKILL', `the process was not killed by the stand-in:\n${running.output()}`);
    assert.deepEqual(calls, { m1: 1, m2: 1, m3: 0 });
    assert.deepEqual(lookups, [], 'the MCP tool was not reached before the kill');

    // A fresh start on the same home: the bus hands the run's event out again (after its lease), and the run resumes.
    running = await start();
    type Run = { id: string; status: string; steps: { nodeId: string; output: { text?: string; toolCalls?: number } }[] };
    let runs: Run[] = [];
    const finished = await until(
      async () => {
        runs = ((await api('GET', `/api/v1/workflows/${wf.id}/runs`)) as { items: Run[] }).items;
        return runs.some((r) => r.status === 'succeeded' || r.status === 'failed');
      },
      240_000,
      500,
    );
    assert.ok(finished, `the run did not finish after the restart: ${JSON.stringify(runs)}\n${running.output()}`);
    assert.equal(runs.length, 1, 'one run for the event');
    const run = (await api('GET', `/api/v1/workflow-runs/${runs[0]!.id}`)) as Run;
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const tasks = ((await api('GET', '/api/v1/tasks?q=Fix%20the%20outage')) as { items: { id: string; title: string; priority: string }[] }).items;
    assert.deepEqual(
      tasks.map((x) => [x.title, x.priority]),
      [['Fix the outage', 'high']],
      'exactly one task',
    );
    // m1 (completed before the kill) read back from its checkpoint; m2 was in flight, so made again; then m3.
    assert.deepEqual(calls, { m1: 1, m2: 2, m3: 1 }, 'the model call completed before the kill was not made again');
    assert.deepEqual(lookups, ['Z-9'], 'the second MCP server’s tool was called once');
    const output = run.steps.find((s) => s.nodeId === 'agent')!.output;
    assert.equal(output.toolCalls, 2);
    assert.match(output.text ?? '', new RegExp(`"id":"${tasks[0]!.id}".* \\| order Z-9 is shipped$`));
    running.child.kill('SIGTERM');
    await running.exited;
  },
);
