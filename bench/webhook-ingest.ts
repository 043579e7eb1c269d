// Webhook endpoint throughput against a bare fastify route, in one run, over loopback, with the
// durable hand-over on (the embedded bus commits every event before the 200).
//   npm run bench:webhook            (DATABASE_URL=postgres://... for Postgres; default PGlite)
import autocannon from 'autocannon';
import { randomBytes, randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { createEmbeddedBus } from '@flowdesk/bus';
import { createTestDatabase } from '@flowdesk/db';
import { listen } from '@flowdesk/service-kit';
import { buildApp as buildWebhookIngest } from '@flowdesk/webhook-ingest';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

const db = await createTestDatabase();
const bus = await createEmbeddedBus(db.db);
const workflowId = randomUUID();
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const ingest = await buildWebhookIngest({
  bus,
  directory: { lookup: async (id) => (id === workflowId ? { workflowId, ownerId: randomUUID(), active: true, requireSecret: true, signature: 'none', secret } : null) },
  rateLimit: { perSecond: 1e9, burst: 1e9 },
  logLevel: 'silent',
});
const ingestUrl = await listen(ingest, 0);
const bare = Fastify();
bare.post('/ok', async () => ({ ok: true }));
await bare.listen({ port: 0, host: '127.0.0.1' });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;

const body = JSON.stringify({ event: 'order.created', customer: { name: 'Ada', email: 'ada@example.com' }, items: [{ sku: 'A-1', qty: 2 }] });
async function load(url: string) {
  const r = await autocannon({ url, method: 'POST', connections, duration: seconds, body, headers: { 'content-type': 'application/json', 'x-webhook-secret': secret } });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

const baseline = await load(`${bareUrl}/ok`);
const webhook = await load(`${ingestUrl}/functions/v1/webhook-trigger/${workflowId}`);
console.log(`webhook-ingest on ${db.db.kind}, ${connections} connections, ${seconds} s each`);
console.log(`bare fastify route   ${baseline.rps.toFixed(0).padStart(7)} req/s   p50 ${baseline.p50} ms   p99 ${baseline.p99} ms`);
console.log(`webhook endpoint     ${webhook.rps.toFixed(0).padStart(7)} req/s   p50 ${webhook.p50} ms   p99 ${webhook.p99} ms`);
console.log(`ratio ${(webhook.rps / baseline.rps).toFixed(2)} (target >= 0.5)`);
await ingest.close();
await bare.close();
await bus.close();
await db.close();
