// Parked runs across a restart (docs/workflow-engine.md, "Parking"): runs wait 25 s at a Wait node;
// the stack process is killed with SIGKILL in the middle of the wait and a fresh one started: every
// run resumes exactly once (one POST /after per event), not before its due time and within about a
// second of it. The stack runs in a child process on one database (PGlite in a folder, or Postgres with
// DATABASE_URL) with the embedded bus; waits are on conditions.
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
import { children, runsOf, send, startStack, until } from './helpers/stack.ts';

const N = 100;
// Longer than a restart on a loaded machine (seen: 16 s), so the runs are due after the new process is up.
const WAIT_S = 25;
const keys = generateSigningKeys();
const owner = randomUUID();
const stackEnv = { keys, secretKey: randomBytes(32).toString('base64') };

/** POST /after: arrival times per trigger n. */
const arrivals = new Map<string, number[]>();
const endpoint = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { n?: unknown };
    const n = String(body.n);
    arrivals.set(n, [...(arrivals.get(n) ?? []), Date.now()]);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
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

test('kill -9 in the middle of a wait: every run resumes once, on time, in the next process', { timeout: 600_000 }, async (t) => {
  await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
  const allow = `127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
  let dbConfig: unknown;
  if (process.env.DATABASE_URL) {
    testDb = await createTestDatabase();
    dbConfig = { kind: 'postgres', url: testDb.url };
  } else {
    dataDir = mkdtempSync(path.join(tmpdir(), 'flowdesk-wait-'));
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
        name: 'Remind later',
        triggerType: 'webhook',
        active: true,
        requireWebhookSecret: true,
        graph: {
          nodes: [
            { id: 'wait', type: 'wait', params: { mode: 'duration', amount: String(WAIT_S), unit: 'seconds' } },
            { id: 'after', type: 'http_request', params: { method: 'POST', url: `http://${allow}/after`, body: { n: '{{trigger.n}}' } } },
          ],
          edges: [
            { from: 'trigger', to: 'wait' },
            { from: 'wait', to: 'after', branch: 'resumed' },
          ],
        },
      }),
    })
  ).json()) as { id: string; webhookSecret: string };
  assert.ok(wf.id, JSON.stringify(wf));

  const firstSent = Date.now();
  const accepted = await send(stack, wf, N);
  assert.equal(accepted.length, N);
  const parkedAll = await until(async () => (await runsOf(stack)).filter((r) => r.status === 'waiting').length === N, 120_000, 200);
  const lastParked = Date.now();
  assert.ok(parkedAll, 'every run parked');
  assert.equal(arrivals.size, 0, 'nothing resumed yet');
  t.diagnostic(`${N} runs parked in ${lastParked - firstSent} ms; killing the process`);
  stack.child.kill('SIGKILL');
  await stack.exited;

  stack = await startStack(stackEnv, dbConfig, allow, (m) => t.diagnostic(m));
  const restarted = Date.now();
  const done = await until(async () => (await runsOf(stack)).filter((r) => r.status === 'succeeded').length === N, 120_000, 200);
  assert.ok(done, 'every run finished after the restart');
  assert.equal(arrivals.size, N, 'every run resumed');
  assert.deepEqual(
    [...arrivals].filter(([, a]) => a.length !== 1).map(([n]) => n),
    [],
    'each run resumed exactly once',
  );
  const times = [...arrivals.values()].map((a) => a[0]!);
  const earliest = Math.min(...times);
  const latest = Math.max(...times);
  t.diagnostic(
    `restart took ${restarted - lastParked} ms after the kill; resumed between ${earliest - firstSent} and ${latest - firstSent} ms after the first delivery`,
  );
  assert.ok(earliest >= firstSent + WAIT_S * 1000, 'no run resumed before its due time');
  // Due between firstSent + 25 s and lastParked + 25 s. A restart slower than the wait makes them late
  // by its excess (the engine starts consuming, and polling its timers, a moment after the process is ready).
  const slowRestart = restarted + 3_000 > lastParked + WAIT_S * 1000;
  if (slowRestart) t.diagnostic('the restart took longer than the wait: the due runs fired at the start');
  const bound = Math.max(lastParked + WAIT_S * 1000, slowRestart ? restarted + 3_000 : 0) + 1_500;
  assert.ok(latest <= bound, `every run resumed within ~1 s of its due time (latest ${latest - bound + 1_500} ms after the bound)`);
  stack.child.kill('SIGKILL');
  await stack.exited;
});
