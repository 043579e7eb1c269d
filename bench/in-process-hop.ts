// The engine's hop to workspace-api, over each transport (docs/performance.md, "In-process hops"):
// loopback HTTP through a keep-alive undici Pool (what separate containers do, and `npm start` did)
// beside fastify's inject (callInProcess, what `npm start` does now), on the same workspace-api app
// in this process. Three routes: GET /healthz (the hop alone), GET /api/v1/tasks/:id (token check,
// params validation, one read under row-level security) and POST /internal/v1/tasks/batch with 10
// tasks (the engine's Create Task batch). Rounds alternate (http, in-process, …); each prints calls/s
// and CPU per call of this process (and of the bench database's Postgres backends, with DATABASE_URL).
//
//   npm run bench:hop [-- --calls 4000] [--rounds 3] [--concurrency 16]
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { createEmbeddedBus } from '@flowdesk/bus';
import { createTestDatabase } from '@flowdesk/db';
import { callInProcess, generateSigningKeys, listen, type InternalAnswer, type InternalCall } from '@flowdesk/service-kit';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';
import { benchDatabaseName, postgresCpu, tokenSigner } from './stack.ts';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
  },
});
const CALLS = Number(args.calls);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);

const keys = generateSigningKeys();
const token = tokenSigner(keys);
const db = await createTestDatabase();
await migrateWorkspace(db.db);
const bus = await createEmbeddedBus(db.db, { pollIntervalMs: 1000 });
const api = await buildWorkspaceApi({
  db: db.db,
  jwtPublicKeyPem: keys.publicKeyPem,
  webhookSecretKey: randomBytes(32),
  publicBaseUrl: 'http://bench',
  logLevel: 'silent',
  events: bus,
});
const apiUrl = await listen(api, 0);
const pool = new Pool(apiUrl, { connections: 32, keepAliveTimeout: 30_000 });
const pgCpu = postgresCpu(benchDatabaseName(db));

type Transport = (call: InternalCall) => Promise<InternalAnswer>;
const transports: Record<'http' | 'in-process', Transport> = {
  http: async (c) => {
    const res = await pool.request({ method: c.method, path: c.path, headers: c.headers, body: c.body, signal: AbortSignal.timeout(c.timeoutMs) });
    return { status: res.statusCode, text: await res.body.text() };
  },
  'in-process': (c) => callInProcess(api, c),
};

const owner = randomUUID();
const auth = { authorization: `Bearer ${token(owner, 'workflow-engine')}` };
const json = { ...auth, 'content-type': 'application/json' };
const created = await transports.http({ method: 'POST', path: '/api/v1/tasks', headers: json, body: JSON.stringify({ title: 'read me' }), timeoutMs: 10_000 });
const taskId = (JSON.parse(created.text) as { id: string }).id;
const batch = JSON.stringify({ tasks: Array.from({ length: 10 }, (_, i) => ({ title: `hop ${i}` })), origins: Array.from({ length: 10 }, () => null) });

const routes: { name: string; call: InternalCall; expect: number }[] = [
  { name: 'GET /healthz', call: { method: 'GET', path: '/healthz', headers: {}, timeoutMs: 10_000 }, expect: 200 },
  { name: 'GET /api/v1/tasks/:id', call: { method: 'GET', path: `/api/v1/tasks/${taskId}`, headers: auth, timeoutMs: 10_000 }, expect: 200 },
  {
    name: 'POST /internal/v1/tasks/batch (10 tasks)',
    call: { method: 'POST', path: '/internal/v1/tasks/batch', headers: json, body: batch, timeoutMs: 10_000 },
    expect: 200,
  },
];

async function round(transport: Transport, call: InternalCall, expect: number, n: number) {
  let next = 0;
  const cpu0 = process.cpuUsage();
  pgCpu.start();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next++;
        const answer = await transport(call);
        if (answer.status !== expect) throw new Error(`${call.path}: ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const pg = pgCpu.stop();
  return { perSecond: (n / ms) * 1000, cpuUs: ((cpu.user + cpu.system) / n) | 0, pgUs: db.url ? ((pg * 1000) / n) | 0 : undefined };
}

console.log(
  `bench:hop on ${db.db.kind}: ${CALLS} calls a round (batch route: ${CALLS / 10}), ${CONCURRENCY} concurrent, ${ROUNDS} rounds of each transport, alternating`,
);
for (const route of routes) {
  const n = route.name.startsWith('POST') ? Math.max(100, CALLS / 10) : CALLS;
  // Warm-up of both (JIT, connections, the token cache).
  for (const t of Object.values(transports)) await round(t, route.call, route.expect, Math.min(n, 500));
  const results: Record<string, { perSecond: number; cpuUs: number; pgUs?: number }[]> = { http: [], 'in-process': [] };
  for (let r = 0; r < ROUNDS; r++) for (const [name, t] of Object.entries(transports)) results[name]!.push(await round(t, route.call, route.expect, n));
  console.log(`  ${route.name}`);
  for (const [name, rs] of Object.entries(results)) {
    const cpus = rs.map((x) => x.cpuUs).sort((a, b) => a - b);
    console.log(
      `    ${name.padEnd(10)} CPU per call ${rs.map((x) => `${x.cpuUs}`).join(' / ')} µs (median ${cpus[cpus.length >> 1]})` +
        `${db.url ? `, Postgres ${rs.map((x) => x.pgUs).join(' / ')} µs` : ''}; ${rs.map((x) => x.perSecond.toFixed(0)).join(' / ')} calls/s`,
    );
  }
}

await pool.close();
await api.close();
await bus.close();
await db.close();
