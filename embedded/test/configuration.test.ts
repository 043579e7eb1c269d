// `npm start` honours the services' own variables (docs/configuration.md), as their containers do:
// SIGNUP_MODE, SESSION_IDLE_TTL / SESSION_ABSOLUTE_TTL, CONSOLE_ALLOWED_ORIGINS, the webhook rate
// limit and OAUTH_AUTHORIZE_RATE_LIMIT seen through the one base URL; the engine's and the caches' variables through the
// configuration the services are built from. And Run now through the public API with one
// Idempotency-Key, ten times at once, starts one run. On PGlite, and on Postgres with DATABASE_URL.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { callJson, until } from '@flowdesk/service-kit/testing';
import { loadConfig } from '../src/config.ts';
import { startEmbedded, type Embedded } from '../src/start.ts';

const ADMIN_ORIGIN = 'https://admin.example.test';
const ENV = {
  SIGNUP_MODE: 'open',
  SESSION_IDLE_TTL: '30m',
  SESSION_ABSOLUTE_TTL: '2h',
  CONSOLE_ALLOWED_ORIGINS: ADMIN_ORIGIN,
  WEBHOOK_RATE_LIMIT_PER_SECOND: '1',
  WEBHOOK_RATE_LIMIT_BURST: '1',
  OAUTH_AUTHORIZE_RATE_LIMIT: '2/10m',
};

let home: string;
let database: TestDatabase | undefined;
let flowdesk: Embedded;
let token: string;

const api = (method: string, p: string, body?: unknown) => callJson(`${flowdesk.localUrl}${p}`, token, method, body);
const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${flowdesk.localUrl}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'flowdesk-configuration-'));
  database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  flowdesk = await startEmbedded({ ...loadConfig({ FLOWDESK_HOME: home, PORT: '0', LOG_LEVEL: 'silent', ...ENV }), databaseUrl: database?.url });
  token = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')).writeKey;
});

after(async () => {
  await flowdesk?.close();
  await database?.close();
  await rm(home, { recursive: true, force: true });
});

test('OAUTH_AUTHORIZE_RATE_LIMIT=2/10m: the third sign-in page opened from one address in 10 minutes is refused (429, Retry-After)', async () => {
  // Counted before the request is read (the client is unknown here): the limit alone decides the 429.
  const open = () => fetch(`${flowdesk.localUrl}/oauth/authorize?response_type=code&client_id=nobody`, { redirect: 'manual' });
  for (let i = 0; i < 2; i++) assert.notEqual((await open()).status, 429, `page ${i + 1}`);
  const refused = await open();
  assert.equal(refused.status, 429);
  assert.ok(Number(refused.headers.get('retry-after')) > 0);
});

test('SIGNUP_MODE=open, SESSION_IDLE_TTL=30m, SESSION_ABSOLUTE_TTL=2h: anyone signs up, and the session lives 30 min idle / 2 h in all', async () => {
  const setup = (await (await fetch(`${flowdesk.localUrl}/api/v1/setup`)).json()) as any;
  assert.equal(setup.signup, 'open');
  const started = Date.now();
  const res = await post('/api/v1/signup', { email: 'walk-in@example.test', name: 'Walk In', password: 'a walk-in password' }, { origin: flowdesk.baseUrl });
  assert.equal(res.status, 201, await res.clone().text());
  const body = (await res.json()) as any;
  assert.equal(body.user.role, 'member');
  const absolute = Date.parse(body.expiresAt) - started;
  assert.ok(absolute > 2 * 3_600_000 - 60_000 && absolute <= 2 * 3_600_000 + 60_000, `absolute lifetime ${absolute} ms`);
  const cookie = /^(fd_session=[^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!;
  const session = (await (await fetch(`${flowdesk.localUrl}/api/v1/session`, { headers: { cookie } })).json()) as any;
  const idle = Date.parse(session.session.idleExpiresAt) - started;
  assert.ok(idle > 30 * 60_000 - 60_000 && idle <= 30 * 60_000 + 60_000, `idle lifetime ${idle} ms`);

  // CONSOLE_ALLOWED_ORIGINS: a write with the cookie from that origin passes the origin check; another is refused.
  const write = (origin: string) =>
    post('/api/v1/api-keys', { name: `from ${origin}`, scope: 'read' }, { cookie, origin, 'x-csrf-token': session.csrfToken as string });
  assert.equal((await write(ADMIN_ORIGIN)).status, 201);
  assert.equal((await write('https://elsewhere.example.test')).status, 403);
});

test('WEBHOOK_RATE_LIMIT_PER_SECOND=1, WEBHOOK_RATE_LIMIT_BURST=1: a second delivery in the same second gets 429', async () => {
  const created = await api('POST', '/api/v1/workflows', { name: 'Limited', triggerType: 'webhook', graph: { nodes: [], edges: [] } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { id, webhookSecret } = created.body as { id: string; webhookSecret: string };
  assert.equal((await api('PATCH', `/api/v1/workflows/${id}`, { active: true })).status, 200);
  const deliver = () => post(`/functions/v1/webhook-trigger/${id}`, { n: 1 }, { 'x-webhook-secret': webhookSecret });
  // Ingest trusts a lookup for a second: wait until the activation is seen (that delivery takes the one token).
  await until('the active workflow to accept a delivery', async () => (await deliver()).status === 200);
  const next = await Promise.all([deliver(), deliver(), deliver()]);
  const statuses = next.map((r) => r.status);
  assert.ok(statuses.includes(429), `statuses ${JSON.stringify(statuses)}`);
  assert.ok(next.find((r) => r.status === 429)!.headers.get('retry-after'));
});

test('Run now through /api/v1: the same Idempotency-Key twice, then ten times at once, starts one run', async () => {
  const wf = await api('POST', '/api/v1/workflows', { name: 'Once', triggerType: 'manual', graph: { nodes: [], edges: [] } });
  assert.equal(wf.status, 201, JSON.stringify(wf.body));
  const runNow = (key: string) =>
    post(`/api/v1/workflows/${wf.body.id}/runs`, { payload: { key } }, { authorization: `Bearer ${token}`, 'idempotency-key': key }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));
  const twice = [await runNow('double-click'), await runNow('double-click')];
  const parallel = await Promise.all(Array.from({ length: 10 }, () => runNow('ten-at-once')));
  for (const r of [...twice, ...parallel]) assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(new Set(twice.map((r) => r.body.id)).size, 1);
  assert.equal(new Set(parallel.map((r) => r.body.id)).size, 1);
  const runs = await api('GET', `/api/v1/workflows/${wf.body.id}/runs?limit=100`);
  assert.equal(runs.body.items.length, 2, JSON.stringify(runs.body.items));
});

test("the engine's and the caches' variables reach the services' configuration, with the services' own errors", () => {
  const base = { FLOWDESK_HOME: home, PORT: '0' };
  const config = loadConfig({
    ...base,
    ENGINE_CONCURRENCY: '7',
    ENGINE_WORKFLOW_CONCURRENCY: '3',
    SCHEDULER_POLL_MS: '0',
    WAIT_POLL_MS: '100',
    RETRY_PARK_MS: '2000',
    RUN_RETENTION_DAYS: '0',
    RUN_RETENTION_PER_WORKFLOW: '50',
    RUN_RETENTION_INTERVAL_SECONDS: '60',
    ENGINE_SANDBOX_WORKERS: '3',
    ENGINE_SANDBOX_BUDGET_MS_PER_MINUTE: '5000',
    ENGINE_SANDBOX_PARK_AFTER_MS: '400',
    INTROSPECTION_CACHE_MS: '0',
    WEBHOOK_MAX_BACKLOG: '5',
    ENGINE_OWNER_CONCURRENCY: '2',
    ENGINE_OWNER_MAX_BACKLOG: '0',
    MAX_CHILD_RUNS_PER_RUN: '9',
    WORKFLOW_STARTS_PER_MINUTE: '60',
    RUN_WORKFLOW_MAX_DEPTH: '3',
    ENGINE_METRICS_TOP_OWNERS: '4',
    SIGNUP_MODE: 'off',
  });
  const retention = { batchSize: 500, maxBatches: 20 };
  assert.deepEqual(config.engineTuning, {
    concurrency: 7,
    workflowConcurrency: 3,
    scheduler: { pollMs: 0 },
    waits: { pollMs: 100 },
    retryParkMs: 2000,
    limits: { maxLoopItemsPerRun: 1000 },
    retention: { ...retention, maxAgeDays: null, keepPerWorkflow: 50, intervalMs: 60_000 },
    sandbox: { workers: 3, perOwnerWorkers: 2, budgetMsPerMinute: 5000, parkAfterMs: 400, workerHeapMb: 128 },
    metricsTopOwners: 4,
    fairness: { ownerConcurrency: 2, maxBacklog: 0 },
    quotas: { maxDepth: 3, maxChildRunsPerRun: 9, startsPerMinute: 60 },
  });
  assert.equal(config.introspectionCacheMs, 0);
  assert.equal(config.webhookAdmission?.backlog.maxBacklog, 5);
  assert.equal(config.signupMode, 'off');
  const defaults = loadConfig(base);
  assert.deepEqual(defaults.engineTuning, {
    concurrency: 256,
    workflowConcurrency: 128,
    scheduler: { pollMs: 10_000 },
    waits: { pollMs: 10_000 },
    retryParkMs: 5000,
    limits: { maxLoopItemsPerRun: 1000 },
    retention: { ...retention, maxAgeDays: 30, keepPerWorkflow: null, intervalMs: 300_000 },
    sandbox: (({ workers }) => ({ workers, perOwnerWorkers: workers - 1, budgetMsPerMinute: 20_000, parkAfterMs: 250, workerHeapMb: 128 }))({
      workers: Math.min(8, Math.max(2, availableParallelism())),
    }),
    metricsTopOwners: 0,
    fairness: { ownerConcurrency: 128, maxBacklog: 1000 },
    quotas: { maxDepth: 5, maxChildRunsPerRun: 100, startsPerMinute: 1000 },
  });
  assert.deepEqual([defaults.signupMode, defaults.introspectionCacheMs, defaults.consoleAllowedOrigins], ['invite', 30_000, []]);
  for (const [name, value, message] of [
    ['SIGNUP_MODE', 'maybe', /SIGNUP_MODE must be open, invite or off/],
    ['SESSION_IDLE_TTL', '90d', /SESSION_IDLE_TTL must not be longer than SESSION_ABSOLUTE_TTL/],
    ['ENGINE_CONCURRENCY', '-1', /ENGINE_CONCURRENCY must be a positive integer/],
    ['INTROSPECTION_CACHE_MS', '61000', /INTROSPECTION_CACHE_MS must be 0..60000/],
    ['WEBHOOK_RATE_LIMIT_BURST', 'x', /WEBHOOK_RATE_LIMIT_BURST must be a positive number/],
    ['CONSOLE_ALLOWED_ORIGINS', 'https://a.example/path', /CONSOLE_ALLOWED_ORIGINS/],
    ['OAUTH_CLIENT_METADATA_RATE_LIMIT', '20', /OAUTH_CLIENT_METADATA_RATE_LIMIT must be <count>\/<window>/],
  ] as const) {
    assert.throws(() => loadConfig({ ...base, [name]: value }), message, name);
  }
});
