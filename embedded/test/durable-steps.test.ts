// Durable runs (docs/workflow-engine.md, "Durable runs"): kill -9 while runs are between side effects
// and inside an HTTP POST; a fresh process resumes each run from its checkpoint. The workflow:
// POST /a (counted) → Create Task → POST /b (slow, counted per Idempotency-Key, answers the first
// result again for a key it has seen, as a receiver honouring the header does). Every accepted event
// gives one run, one task, one request to /a (an earlier step is never repeated) and one effect per
// key at /b. The whole stack runs in a child process on one database (PGlite in a folder, or Postgres
// with DATABASE_URL) with the embedded bus; waits are on conditions.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, signInternalToken } from '@flowdesk/service-kit';
import { children, runsOf, send, startStack, until, type Stack } from './helpers/stack.ts';

const N = 150;
const keys = generateSigningKeys();
const owner = randomUUID();
const stackEnv = { keys, secretKey: randomBytes(32).toString('base64') };

// /a: every request counted by the trigger's n. /b: slow; effects counted per key (a repeated key gets
// the first answer, no second effect); requests in flight counted.
const aHits = new Map<string, number>();
const aKeys = new Map<string, Set<string>>();
const aLog: string[] = [];
let killed = false;
const bSeen = new Set<string>();
const bEffects = new Map<string, string>();
let bRequests = 0;
let bInFlight = 0;
let bLatencyMs = 1_000;
const endpoint = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { n?: unknown; task?: unknown };
    const n = String(body.n);
    const key = String(req.headers['idempotency-key'] ?? '');
    if (req.url === '/a') {
      aHits.set(n, (aHits.get(n) ?? 0) + 1);
      aKeys.set(n, (aKeys.get(n) ?? new Set()).add(key));
      aLog.push(`${n}${killed ? ' after' : ' before'} the kill`);
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ref: `A-${n}` }));
    }
    if (!killed) bSeen.add(n);
    bRequests++;
    bInFlight++;
    setTimeout(() => {
      bInFlight--;
      if (!bEffects.has(key)) bEffects.set(key, String(body.task));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ task: bEffects.get(key) }));
    }, bLatencyMs);
  });
});

let testDb: TestDatabase | undefined;
let dataDir: string | undefined;

after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  endpoint.close();
  await testDb?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const tasksOf = (s: Stack) =>
  new Promise<{ title: string; n: number }[]>((resolve) => {
    s.child.once('message', (m: { tasks: { title: string; n: number }[] }) => resolve(m.tasks));
    s.child.send({ q: 'tasks' });
  });

test(
  'kill -9 between and inside side effects: runs resume from their checkpoints, one task and one effect per key per event',
  { timeout: 900_000 },
  async (t) => {
    await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
    const allow = `127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
    let dbConfig: unknown;
    if (process.env.DATABASE_URL) {
      testDb = await createTestDatabase();
      dbConfig = { kind: 'postgres', url: testDb.url };
    } else {
      dataDir = mkdtempSync(path.join(tmpdir(), 'flowdesk-steps-'));
      dbConfig = { kind: 'pglite', dataDir };
    }
    t.diagnostic(`database: ${process.env.DATABASE_URL ? 'postgres' : 'pglite'}`);

    let stack = await startStack(stackEnv, dbConfig, allow, (m) => t.diagnostic(m));
    const ownerToken = signInternalToken(keys, { sub: owner, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp: 'test' });
    const wf = (await (
      await fetch(`${stack.apiUrl}/api/v1/workflows`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'Orders',
          triggerType: 'webhook',
          active: true,
          requireWebhookSecret: true,
          graph: {
            nodes: [
              { id: 'a', type: 'http_request', params: { method: 'POST', url: `http://${allow}/a`, body: { n: '{{trigger.n}}' } } },
              { id: 'task', type: 'create_task', params: { title: 'order {{trigger.n}} {{nodes.a.body.ref}}' } },
              { id: 'b', type: 'http_request', params: { method: 'POST', url: `http://${allow}/b`, body: { task: '{{nodes.task.id}}', n: '{{trigger.n}}' } } },
            ],
            edges: [
              { from: 'trigger', to: 'a' },
              { from: 'a', to: 'task' },
              { from: 'task', to: 'b' },
            ],
          },
        }),
      })
    ).json()) as { id: string; webhookSecret: string };
    assert.ok(wf.id, JSON.stringify(wf));

    // Every run past /a and its task, many of them inside POST /b: kill -9.
    const accepted = await send(stack, wf, N);
    assert.equal(accepted.length, N, 'a healthy process accepts every delivery');
    assert.ok(await until(() => bInFlight >= 10, 300_000, 5), `runs inside POST /b (${bInFlight})`);
    t.diagnostic(`killing with ${bInFlight} runs inside POST /b; /a seen for ${aHits.size} events, ${bRequests} requests to /b`);
    killed = true;
    stack.child.kill('SIGKILL');
    await stack.exited;

    // A fresh process finishes the work from the checkpoints.
    bLatencyMs = 20;
    stack = await startStack(stackEnv, dbConfig, allow, (m) => t.diagnostic(m));
    let runs: { eventId: string; status: string }[] = [];
    const finished = await until(
      async () => {
        runs = await runsOf(stack);
        const done = new Set(runs.filter((r) => r.status === 'succeeded').map((r) => r.eventId));
        return accepted.every((id) => done.has(id));
      },
      600_000,
      500,
    );
    const statusOf = new Map(runs.map((r) => [r.eventId, r.status]));
    assert.ok(finished, `accepted events without a succeeded run: ${accepted.filter((id) => statusOf.get(id) !== 'succeeded').length}`);
    assert.equal(runs.length, N, 'one run per accepted event');

    const tasks = await tasksOf(stack);
    assert.equal(tasks.length, N, 'a task for every event');
    assert.deepEqual(
      tasks.filter((x) => x.n !== 1),
      [],
      'one task per event, none created twice',
    );
    // A run that had reached /b when killed had stored /a and its task: it resumed at /b.
    const repeatedA = [...bSeen].filter((n) => aHits.get(n) !== 1);
    assert.deepEqual(
      repeatedA.map((n) => aLog.filter((l) => l.startsWith(`${n} `))),
      [],
      'a run inside /b when killed did not send /a again (resumed from its checkpoint)',
    );
    assert.equal(aHits.size, N);
    assert.deepEqual(
      [...aKeys].filter(([, k]) => k.size !== 1),
      [],
      'a step sent again carries the same key',
    );
    assert.equal(bEffects.size, N, 'one effect per key at /b: every event once');
    assert.ok(bRequests > N, `some requests to /b were sent again with their key (${bRequests} requests, ${bEffects.size} keys)`);
    t.diagnostic(
      `${N} runs, ${tasks.length} tasks, /a ${[...aHits.values()].reduce((x, y) => x + y, 0)} requests (${[...aHits.values()].filter((h) => h > 1).length} events more than once: ${aLog
        .filter((l) => (aHits.get(l.split(' ')[0]!) ?? 0) > 1)
        .slice(0, 9)
        .join(', ')}), /b ${bRequests} requests for ${bEffects.size} keys`,
    );
    stack.child.kill('SIGKILL');
    await stack.exited;
  },
);
