// Throughput and latency of workspace-api over loopback HTTP, every request through row-level
// security (one transaction per request). PGlite by default; DATABASE_URL=postgres://... for Postgres.
//   node --conditions=source --import tsx bench/workspace-api.ts [requests=2000] [concurrency=16]
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createTestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, signInternalToken } from '@flowdesk/service-kit';
import { buildApp, migrateWorkspace } from '@flowdesk/workspace-api';

const total = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 16);

const test = await createTestDatabase();
await migrateWorkspace(test.db);
const keys = generateSigningKeys();
const app = await buildApp({ db: test.db, jwtPublicKeyPem: keys.publicKeyPem, webhookSecretKey: randomBytes(32), publicBaseUrl: 'http://bench', logLevel: 'silent' });
const base = await listen(app, 0);
const users = Array.from({ length: 8 }, () => crypto.randomUUID());
const tokenOf = new Map(users.map((u) => [u, signInternalToken(keys, { sub: u, aud: 'workspace-api', scope: 'mcp:write' }, { ttlSeconds: 3600 })]));

async function run(label: string, make: (i: number) => { method: string; path: string; body?: unknown; user: string }) {
  const latencies: number[] = [];
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const r = make(next++);
        const t0 = performance.now();
        const res = await fetch(`${base}/api/v1${r.path}`, {
          method: r.method,
          headers: { authorization: `Bearer ${tokenOf.get(r.user)}`, ...(r.body ? { 'content-type': 'application/json' } : {}) },
          body: r.body ? JSON.stringify(r.body) : undefined,
        });
        await res.arrayBuffer();
        if (res.status >= 400) failed++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
  console.log(`${label.padEnd(28)} ${(total / seconds).toFixed(0).padStart(6)} req/s  p50 ${p(0.5)} ms  p99 ${p(0.99)} ms  errors ${failed}`);
}

console.log(`workspace-api on ${test.db.kind}, ${total} requests, concurrency ${concurrency}`);
await run('POST /tasks', (i) => ({ method: 'POST', path: '/tasks', body: { title: `task ${i}`, tags: ['bench'] }, user: users[i % users.length]! }));
await run('GET /tasks?limit=25', (i) => ({ method: 'GET', path: '/tasks?limit=25', user: users[i % users.length]! }));
await run('GET /search?q=task', (i) => ({ method: 'GET', path: '/search?q=task%201', user: users[i % users.length]! }));
await app.close();
await test.close();
