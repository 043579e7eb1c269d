// The container images' entrypoints, exercised as the images run them: `node services/<svc>/dist/
// migrate.js` (the migration Job), then each `dist/main.js` with production configuration
// (NODE_ENV=production, generated keys and secrets, a fresh database on the machine's Postgres, no
// KAFKA_BROKERS → the embedded bus on Postgres). Each must become ready, log only pino JSON without
// a secret in it, and on SIGTERM fail readiness at once and exit 0 within SHUTDOWN_GRACE_MS.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createFirstUser } from './support/flowdesk.ts';
import { killAll, runMigrate, type ServiceProcess } from './support/processes.ts';
import { defineStack, freshDatabase, migrateAll, secretValues, SERVICES, type Stack } from './support/stack.ts';

const GRACE_MS = 10_000;
const DRAIN_MS = 400;
let database: Awaited<ReturnType<typeof freshDatabase>>;
let stack: Stack;
const procs: ServiceProcess[] = [];
let apiKey: string;

before(async () => {
  database = await freshDatabase();
  stack = await defineStack({
    databaseUrl: database.url,
    logLevel: 'info',
    graceMs: GRACE_MS,
    // Long enough to observe /readyz answering 503 while the service still serves.
    env: Object.fromEntries(SERVICES.map((s) => [s, { SHUTDOWN_DRAIN_MS: String(DRAIN_MS) }])),
  });
});

after(async () => {
  await killAll(procs);
  await stack?.close();
  await database?.close();
});

const parseJson = (line: string): Record<string, unknown> | undefined => {
  try {
    const v = JSON.parse(line) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

test('dist/migrate.js applies each service’s migrations, is idempotent, and fails with exit 1 and a clear log line', async () => {
  await migrateAll(stack);
  for (const s of ['workspace-api', 'auth', 'mcp-gateway'] as const) {
    const again = await runMigrate(s, stack.envOf(s));
    assert.equal(again.code, 0, again.stdout.join('\n'));
    const line = parseJson(again.stdout.at(-1) ?? '');
    assert.equal(line?.msg, 'migrate done');
    assert.deepEqual(line?.applied, [], `${s}: nothing left to apply the second time`);
  }
  const url = new URL(database.url);
  url.pathname = '/flowdesk_no_such_database';
  const failed = await runMigrate('auth', { ...stack.envOf('auth'), DATABASE_URL: url.toString() });
  assert.equal(failed.code, 1);
  const line = parseJson(failed.stdout.at(-1) ?? '');
  assert.equal(line?.level, 50);
  assert.match(String(line?.msg), /^migrate failed: .*flowdesk_no_such_database/);
});

test('each dist/main.js starts with production configuration and answers /readyz 200', async () => {
  procs.push(...(await Promise.all(SERVICES.map((s) => stack.start(s)))));
  for (const p of procs) {
    const res = await fetch(`${p.url}/readyz`);
    assert.equal(res.status, 200, p.name);
    assert.deepEqual(await res.json(), { status: 'ready', service: p.name });
  }
});

test('logs are pino JSON lines of the right service, with no secret value in them', async () => {
  // Give the services something to log that carries credentials: an MCP initialize with a real
  // API key (the gateway introspects it at auth with its service secret), a webhook with a secret header.
  ({ apiKey } = await createFirstUser(database.url));
  const init = await fetch(`${stack.url('mcp-gateway')}/functions/v1/mcp-server-v2`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'entrypoints-test', version: '1' } },
    }),
  });
  assert.equal(init.status, 200, await init.clone().text());
  await init.arrayBuffer();
  const hook = await fetch(`${stack.url('webhook-ingest')}/functions/v1/webhook-trigger/${crypto.randomUUID()}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-secret': 'whsec-test-value-that-must-not-be-logged' },
    body: '{}',
  });
  assert.equal(hook.status, 404);

  const secrets = secretValues(stack.secrets, [apiKey, 'whsec-test-value-that-must-not-be-logged']);
  for (const p of procs) {
    assert.ok(p.stdout.length > 0, `${p.name} logged something (at least that it listens)`);
    for (const line of p.stdout) {
      const entry = parseJson(line);
      assert.ok(entry, `${p.name}: not a JSON line: ${line}`);
      assert.equal(typeof entry.level, 'number', `${p.name}: pino level in ${line}`);
      assert.equal(typeof entry.time, 'number', `${p.name}: pino time in ${line}`);
      assert.equal(entry.service, p.name, `${p.name}: service field in ${line}`);
    }
    assert.deepEqual(p.stderr, [], `${p.name} wrote nothing to stderr`);
    for (const s of secrets) {
      assert.ok(![...p.stdout, ...p.stderr].some((l) => l.includes(s)), `${p.name} logged a secret value (${s.slice(0, 6)}…)`);
    }
  }
});

test('SIGTERM: /readyz answers 503 at once, then every service exits 0 within the grace period', async () => {
  const stopping = procs.map(async (p) => {
    const exit = p.stop('SIGTERM');
    // The signal arrives asynchronously: poll until readiness changes. During SHUTDOWN_DRAIN_MS the
    // service still answers, but not ready, so load balancers move away before it stops listening.
    let readyz = 200;
    for (const until = Date.now() + DRAIN_MS; readyz === 200 && Date.now() < until;) {
      const res = await fetch(`${p.url}/readyz`);
      await res.arrayBuffer();
      readyz = res.status;
    }
    return { p, readyz, exit: await exit };
  });
  for (const { p, readyz, exit } of await Promise.all(stopping)) {
    assert.equal(readyz, 503, `${p.name}: /readyz during shutdown`);
    assert.deepEqual([exit.code, exit.signal], [0, null], `${p.name} exit:\n${p.stdout.slice(-5).join('\n')}\n${p.stderr.join('\n')}`);
    assert.ok(exit.ms < GRACE_MS, `${p.name} exited after ${exit.ms} ms (grace ${GRACE_MS})`);
    const msgs = p.stdout.map((l) => parseJson(l)?.msg);
    assert.ok(msgs.includes('shut down cleanly'), `${p.name} logged its clean shutdown`);
  }
});
