// Webhook endpoint throughput against a bare fastify route, in one run, over loopback, with the
// durable hand-over on (the embedded bus commits every event before the 200).
//   npm run bench:webhook            (DATABASE_URL=postgres://... for Postgres; default PGlite)
//   npm run bench:webhook -- --bus kafka   (a real local broker from tools/kafka: every 200 after
//                                          acks=all; needs Java and scripts/install-kafka.sh)
// BENCH_SECONDS per measurement (5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (32), BENCH_WARMUP_SECONDS
// (1, or 20 on Kafka: see the warm-up below), BENCH_LOG_LEVEL
// (silent; e.g. info to include the service's per-request log lines, written to /dev/null).
//
// A third measurement splits the webhook's cost in two: the same service on a bus that acknowledges
// every publish at once ("route alone": routing, checks, the event built and its 200, no hand-over),
// so the difference to the webhook line is what the durable hand-over costs (the database's commit
// round trip, or the Kafka client's produce and its round trip to the broker).
//
// The three are measured alternately, round after round (the order rotates), and the ratio is the
// median of the per-round ratios: on a shared machine the load from other processes drifts, and long
// measurements one after the other would compare different machines.
import autocannon from 'autocannon';
import { randomBytes, randomUUID } from 'node:crypto';
import { openSync, writeSync } from 'node:fs';
import Fastify from 'fastify';
import { parseArgs } from 'node:util';
import { createEmbeddedBus, createKafkaBus, ensureKafkaTopics, type EventBus } from '@flowdesk/bus';
import { startLocalKafka, type LocalKafka } from '@flowdesk/bus/testing';
import { TRIGGER_TOPIC } from '@flowdesk/contracts';
import { createTestDatabase } from '@flowdesk/db';
import { listen } from '@flowdesk/service-kit';
import { buildApp as buildWebhookIngest } from '@flowdesk/webhook-ingest';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const logLevel = process.env.BENCH_LOG_LEVEL ?? 'silent';

const devNull = openSync('/dev/null', 'w');
const { values: args } = parseArgs({ options: { bus: { type: 'string', default: 'embedded' } } });
if (args.bus !== 'embedded' && args.bus !== 'kafka') throw new Error('--bus must be embedded or kafka');
// The embedded bus lives in a database; the Kafka run has none (an idle PGlite in this process
// slowed its measurements, the bare route's included).
const db = args.bus === 'embedded' ? await createTestDatabase() : undefined;
let kafka: LocalKafka | undefined;
let bus: EventBus;
if (args.bus === 'kafka') {
  // One broker with the full JIT; the trigger topic as the init job makes it (12 partitions).
  kafka = await startLocalKafka({ heap: '768m', quickStart: false });
  await ensureKafkaTopics({ brokers: kafka.brokers }, [{ topic: TRIGGER_TOPIC, numPartitions: 12, replicationFactor: 1 }]);
  bus = await createKafkaBus({ brokers: kafka.brokers, clientId: 'bench' });
} else {
  bus = await createEmbeddedBus(db!.db);
}
const workflowId = randomUUID();
const secret = `whsec_${randomBytes(32).toString('base64')}`;
/** The webhook service for this run's one workflow, on `onBus`. */
const webhookService = (onBus: EventBus) =>
  buildWebhookIngest({
    bus: onBus,
    directory: {
      lookup: async (id) => (id === workflowId ? { workflowId, ownerId: randomUUID(), active: true, requireSecret: true, signature: 'none', secret } : null),
    },
    rateLimit: { perSecond: 1e9, burst: 1e9 },
    logLevel,
    // Synchronous writes to /dev/null: one system call per line, as pino's default stdout destination.
    logStream: { write: (line: string) => void writeSync(devNull, line) },
  });
const ingest = await webhookService(bus);
const ingestUrl = await listen(ingest, 0);
// The route alone: the same service and workflow on a bus whose publish resolves at once.
const routeAlone = await webhookService({
  publish: () => Promise.resolve(),
  subscribe: () => Promise.reject(new Error('the route-alone bus has no subscribers')),
  close: () => Promise.resolve(),
});
const routeAloneUrl = await listen(routeAlone, 0);
// The baseline stays bare: a plain fastify route answering 200, nothing else.
const bare = Fastify();
bare.post('/ok', async () => ({ ok: true }));
await bare.listen({ port: 0, host: '127.0.0.1' });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;

const body = JSON.stringify({ event: 'order.created', customer: { name: 'Ada', email: 'ada@example.com' }, items: [{ sku: 'A-1', qty: 2 }] });
interface Result {
  rps: number;
  p50: number;
  p99: number;
  cpuUs: number;
}
async function load(url: string, duration: number): Promise<Result> {
  // CPU time of this process per request (server and the load generator, which runs here too): less
  // sensitive to other processes on the machine than req/s, though the database's CPU is not in it.
  const cpu0 = process.cpuUsage();
  const r = await autocannon({ url, method: 'POST', connections, duration, body, headers: { 'content-type': 'application/json', 'x-webhook-secret': secret } });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  const cpu = process.cpuUsage(cpu0);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, cpuUs: (cpu.user + cpu.system) / r.requests.total };
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const bareTarget = `${bareUrl}/ok`;
const webhookOf = (serviceUrl: string) => `${serviceUrl}/functions/v1/webhook-trigger/${workflowId}`;
const webhookTarget = webhookOf(ingestUrl);
const routeAloneTarget = webhookOf(routeAloneUrl);
// Warm-up (JIT, connection pool, first pages of the tables), not counted. The broker is a JVM whose
// C2 compiler reaches the produce path over its first seconds of load: on this machine the Kafka
// webhook's req/s went 10.5k → 13.6k → 14.0k → 14.8k → 15.7k over five 5 s rounds after a 1 s
// warm-up, then stayed; BENCH_WARMUP_SECONDS (default 1, 20 with --bus kafka) sets how long.
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? (kafka ? 20 : 1));
await load(bareTarget, 1);
await load(routeAloneTarget, 1);
await load(webhookTarget, warmup);

const targets = { bare: bareTarget, webhook: webhookTarget, routeAlone: routeAloneTarget } as const;
type Kind = keyof typeof targets;
const results: Record<Kind, Result[]> = { bare: [], webhook: [], routeAlone: [] };
const order = Object.keys(targets) as Kind[];
console.log(
  `webhook-ingest on ${kafka ? `Kafka (local broker ${kafka.brokers[0]})` : db!.db.kind}, ${connections} connections, ${rounds} rounds of ${seconds} s each, log level ${logLevel}`,
);
for (let round = 1; round <= rounds; round++) {
  // Each round starts with the next of the three, so none is always measured first or last.
  for (let i = 0; i < order.length; i++) {
    const kind = order[(round - 1 + i) % order.length]!;
    results[kind].push(await load(targets[kind], seconds));
  }
  const [b, w, r] = [results.bare.at(-1)!, results.webhook.at(-1)!, results.routeAlone.at(-1)!];
  console.log(
    `  round ${round}: bare ${b.rps.toFixed(0)} req/s, webhook ${w.rps.toFixed(0)} req/s (p99 ${w.p99} ms), ratio ${(w.rps / b.rps).toFixed(2)}; route alone ${r.rps.toFixed(0)} req/s, ratio ${(r.rps / b.rps).toFixed(2)}`,
  );
}
/** Median over the rounds of one of a kind's figures. */
const medianOf = (kind: Kind, figure: (r: Result) => number) => median(results[kind].map(figure));
const cpuOf = (kind: Kind) => medianOf(kind, (r) => r.cpuUs);
const line = (label: string, kind: Kind) => {
  const rps = medianOf(kind, (r) => r.rps)
    .toFixed(0)
    .padStart(7);
  return `${label} ${rps} req/s   p50 ${medianOf(kind, (r) => r.p50)} ms   p99 ${medianOf(kind, (r) => r.p99)} ms   ${cpuOf(kind).toFixed(0)} µs CPU/req   (medians)`;
};
const ratioOf = (kind: Kind) => median(results.bare.map((b, i) => results[kind][i]!.rps / b.rps));
console.log(line('bare fastify route  ', 'bare'));
console.log(line('route alone         ', 'routeAlone'));
console.log(line('webhook endpoint    ', 'webhook'));
console.log(
  `route alone (a bus that acknowledges at once): ratio ${ratioOf('routeAlone').toFixed(2)}; the durable hand-over (${kafka ? 'Kafka produce, acks=all' : `${db!.db.kind} commit`}) adds ${(cpuOf('webhook') - cpuOf('routeAlone')).toFixed(0)} µs CPU/req`,
);
console.log(`ratio ${ratioOf('webhook').toFixed(2)} (median of the rounds; target >= 0.5)`);
await ingest.close();
await routeAlone.close();
await bare.close();
await bus.close();
await kafka?.stop();
await db?.close();
