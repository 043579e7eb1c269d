// Webhook to recorded run, end to end in one process: webhook-ingest, the bus (embedded, or Kafka),
// the workflow engine (its own runs schema) and workspace-api on one database. Each delivery runs
// condition → [HTTP Request to a loopback endpoint] → create task. Then (one workflow, no --http-latency,
// no --rate; --no-rich skips it) the richer workflow line: For each over 10 items → Set → Switch →
// Create Task, 10 tasks per run (target ≥ 500 runs/s on Postgres, 2 cores); --rich-concurrency N sets
// the For each's concurrency (default 1: items one after the other).
//
//   npm run bench:e2e [-- --runs 5000] [--workflows 1] [--http-latency MS] [--rate R] [--connections C] [--bus kafka]
//     --bus kafka       the Kafka bus: on KAFKA_BROKERS (topics must exist), else on a local one-node
//                       broker from tools/kafka (Java + scripts/install-kafka.sh), whose JVM's CPU is
//                       counted per run too (from /proc)
//     --runs N          deliveries in total (default 3000)
//     --workflows N     spread over N workflows of one owner (default 1)
//     --http-latency MS an HTTP Request node to a loopback endpoint answering after MS (default: none)
//     --rate R          send at R deliveries/s (default: as fast as C connections go)
//     --connections C   concurrent senders (default 64)
//     --workspace-transport in-process|http  how the engine calls workspace-api: through its routes in
//                       process, as `npm start` does (default), or over its loopback port, as containers do
//   DATABASE_URL=postgres://... for Postgres (a fresh database), else PGlite in memory.
//
// Prints runs/s (first accept to last run finished), p50/p99 from accepted (the 200) to the run's
// finished_at, CPU per run of this process (all services) and of the Postgres backends serving the
// bench's database (from /proc, so other load on the machine does not count), the load average, and the issue 11 targets. The senders run in a
// child process (as a real sender would be elsewhere); their CPU is printed apart.
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createKafkaBus, ensureKafkaTopics, type EventBus } from '@flowdesk/bus';
import { startLocalKafka, type LocalKafka } from '@flowdesk/bus/testing';
import { TRIGGER_TOPIC, WORKFLOW_CHANGED_TOPIC } from '@flowdesk/contracts';
import { listen } from '@flowdesk/service-kit';
import { buildApp as buildWebhookIngest, workspaceApiDirectory } from '@flowdesk/webhook-ingest';
import { createGuardedHttpClient, SsrfPolicy } from '@flowdesk/workflow-engine';
import { benchDatabaseName, postgresCpu, procCpuMs, startBenchStack } from './stack.ts';
import { richGraph } from './workflows.ts';

interface SendJob {
  url: string;
  deliveries: { path: string; secret: string }[];
  count: number;
  rate?: number;
  connections: number;
}

// The sender child: keep-alive undici Pool, C concurrent senders, answers the epoch ms of each 200.
if (process.argv[2] === 'sender') {
  const { Pool } = await import('undici');
  process.once('message', async (job: SendJob) => {
    const pool = new Pool(job.url, { connections: job.connections, pipelining: 1, keepAliveTimeout: 30_000 });
    const acceptedAt: number[] = new Array(job.count);
    const retries: Record<number, number> = {};
    const startedEpoch = Date.now();
    const cpu0 = process.cpuUsage();
    let next = 0;
    let error: string | undefined;
    await Promise.all(
      Array.from({ length: job.connections }, async () => {
        while (next < job.count && !error) {
          const n = next++;
          if (job.rate) {
            const wait = startedEpoch + (n * 1000) / job.rate - Date.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
          const d = job.deliveries[n % job.deliveries.length]!;
          // As a real sender: a 429 or 5xx is retried after its Retry-After (at most 10 times).
          for (let attempt = 1; ; attempt++) {
            const res = await pool.request({
              method: 'POST',
              path: d.path,
              headers: { 'content-type': 'application/json', 'x-webhook-secret': d.secret },
              body: JSON.stringify({ n }),
            });
            const text = await res.body.text();
            if (res.statusCode === 200) break;
            if ((res.statusCode !== 429 && res.statusCode < 500) || attempt >= 10) {
              error = `delivery ${n}: ${res.statusCode} ${text}`;
              break;
            }
            retries[res.statusCode] = (retries[res.statusCode] ?? 0) + 1;
            await new Promise((r) => setTimeout(r, Math.min(5_000, 1000 * Number(res.headers['retry-after'] ?? 1))));
          }
          acceptedAt[n] = Date.now();
        }
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    await pool.close();
    process.send!({ acceptedAt, error, retries, cpuMs: (cpu.user + cpu.system) / 1000 }, () => process.exit(0));
  });
  process.send!({ ready: true });
  await new Promise(() => {});
}

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string' },
    workflows: { type: 'string', default: '1' },
    'http-latency': { type: 'string' },
    rate: { type: 'string' },
    connections: { type: 'string', default: '64' },
    'engine-concurrency': { type: 'string', default: '256' },
    'workflow-concurrency': { type: 'string', default: '128' },
    bus: { type: 'string', default: 'embedded' },
    'no-rich': { type: 'boolean', default: false },
    'rich-concurrency': { type: 'string', default: '1' },
    'workspace-transport': { type: 'string', default: 'in-process' },
  },
});
if (args.bus !== 'embedded' && args.bus !== 'kafka') throw new Error('--bus must be embedded or kafka');
const TRANSPORT = args['workspace-transport'];
if (TRANSPORT !== 'in-process' && TRANSPORT !== 'http') throw new Error('--workspace-transport must be in-process or http');
const N = Number(args.runs ?? positionals[0] ?? 3000);
const WORKFLOWS = Number(args.workflows);
const LATENCY = args['http-latency'] === undefined ? undefined : Number(args['http-latency']);
const RATE = args.rate === undefined ? undefined : Number(args.rate);
const CONNECTIONS = Number(args.connections);

const owner = randomUUID();

// The slow endpoint of the HTTP Request node.
let endpoint: http.Server | undefined;
let endpointUrl = '';
if (LATENCY !== undefined) {
  endpoint = http.createServer((req, res) => {
    req.resume();
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), LATENCY);
  });
  endpoint.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => endpoint!.listen(0, '127.0.0.1', r));
  endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
}

let kafka: LocalKafka | undefined;
let brokersLabel = '';
/** The bus: Kafka (--bus kafka) or the embedded bus on the stack's database. */
const kafkaBus = async (): Promise<EventBus> => {
  let brokers = process.env.KAFKA_BROKERS?.split(',').filter(Boolean);
  if (!brokers?.length) {
    // One broker with the full JIT (as bench:webhook), the topics as the init job makes them.
    kafka = await startLocalKafka({ heap: '768m', quickStart: false });
    brokers = kafka.brokers;
    await ensureKafkaTopics(
      { brokers },
      [TRIGGER_TOPIC, WORKFLOW_CHANGED_TOPIC].map((topic) => ({ topic, numPartitions: 12, replicationFactor: 1 })),
    );
  }
  brokersLabel = kafka ? `Kafka (local broker ${brokers[0]})` : `Kafka (${brokers.join(',')})`;
  return createKafkaBus({ brokers, clientId: 'bench-e2e' });
};
/** CPU of the local broker's JVM(s), from /proc (0 for brokers this process did not start). */
const brokerCpuMs = () => (kafka?.nodes ?? []).reduce((a, n) => a + (n.pid ? procCpuMs(n.pid) : 0), 0);
const stack = await startBenchStack({
  ...(args.bus === 'kafka' ? { bus: kafkaBus } : {}),
  http: createGuardedHttpClient(LATENCY === undefined ? {} : { policy: SsrfPolicy.fromEnv({ SSRF_ALLOWLIST: new URL(endpointUrl).host }) }),
  engine: { concurrency: Number(args['engine-concurrency']), workflowConcurrency: Number(args['workflow-concurrency']) },
  workspaceTransport: TRANSPORT,
});
const { db, bus, apiUrl, token } = stack;
const pgCpu = postgresCpu(benchDatabaseName(db));
const ingest = await buildWebhookIngest({
  bus,
  directory: workspaceApiDirectory({ workspaceApiUrl: apiUrl, token: async () => token('svc:webhook-ingest', 'webhook-ingest', 'internal') }),
  rateLimit: { perSecond: 1e9, burst: 1e9 },
  logLevel: process.env.BENCH_LOG_LEVEL ?? 'silent',
  // As in production (main.ts): triggers cached until a workflow.changed event evicts them.
  definitionEvents: { groupId: 'webhook-ingest.definitions.bench' },
});
const ingestUrl = await listen(ingest, 0);

const asOwner = (method: string, path: string, body?: unknown) => stack.asUser(owner, method, path, body);
const nodes: unknown[] = [{ id: 'c', type: 'condition', params: { left: '{{trigger.n}}', operator: 'exists' } }];
const edges: unknown[] = [{ from: 'trigger', to: 'c' }];
if (LATENCY !== undefined) {
  nodes.push({ id: 'h', type: 'http_request', params: { method: 'POST', url: `${endpointUrl}/hook`, body: { n: '{{trigger.n}}' } } });
  edges.push({ from: 'c', to: 'h', branch: 'true' }, { from: 'h', to: 't' });
} else {
  edges.push({ from: 'c', to: 't', branch: 'true' });
}
nodes.push({ id: 't', type: 'create_task', params: { title: 'order {{trigger.n}}' } });
const workflows: { id: string; webhookSecret: string }[] = [];
for (let i = 0; i < WORKFLOWS; i++)
  workflows.push(await asOwner('POST', '/api/v1/workflows', { name: `bench ${i}`, triggerType: 'webhook', active: true, graph: { nodes, edges } }));

// Warm-up: one delivery per workflow (definition caches, connections), not measured.
const deliver = async (wf: { id: string; webhookSecret: string }, n: number) => {
  const res = await fetch(`${ingestUrl}/functions/v1/webhook-trigger/${wf.id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret },
    body: JSON.stringify({ n }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`delivery ${n}: ${res.status} ${text}`);
};
const finishedCount = async (wfs: { id: string }[]) =>
  Number(
    (
      await db.db.exec(`SELECT count(*)::int AS n FROM "engine"."run" WHERE status IN ('succeeded', 'failed', 'skipped') AND workflow_id = ANY($1::uuid[])`, [
        wfs.map((w) => w.id),
      ])
    ).rows[0]!.n,
  );
const warmUp = async (wfs: { id: string; webhookSecret: string }[]) => {
  await Promise.all(wfs.map((wf, i) => deliver(wf, -1 - i)));
  while ((await finishedCount(wfs)) < wfs.length) await new Promise((r) => setTimeout(r, 50));
};
await warmUp(workflows);
await measure(workflows, 'simple');

// The richer workflow line (issue 25): For each over 10 items → Set → Switch → Create Task, 10 tasks per run.
if (WORKFLOWS === 1 && LATENCY === undefined && !RATE && !args['no-rich']) {
  const rich = richGraph(args['rich-concurrency']);
  const richWorkflows = [await asOwner('POST', '/api/v1/workflows', { name: 'bench rich', triggerType: 'webhook', active: true, graph: rich })];
  if (!richWorkflows[0].id) throw new Error(`the rich workflow was refused: ${JSON.stringify(richWorkflows[0])}`);
  await warmUp(richWorkflows);
  await measure(richWorkflows, 'rich');
}

async function measure(workflows: { id: string; webhookSecret: string }[], kind: 'simple' | 'rich'): Promise<void> {
  const tasks0 = (await asOwner('GET', '/api/v1/overview')).tasks.open as number;
  const sender = fork(fileURLToPath(import.meta.url), ['sender'], { execArgv: ['--conditions=source', '--import', 'tsx'] });
  await new Promise((r) => sender.once('message', r));
  const load0 = loadavg()[0]!;
  pgCpu.start();
  const cpu0 = { self: process.cpuUsage(), broker: brokerCpuMs() };
  const started = performance.now();
  const sent = new Promise<{ acceptedAt: number[]; error?: string; retries: Record<number, number>; cpuMs: number }>((r) => sender.once('message', r));
  sender.send({
    url: ingestUrl,
    deliveries: workflows.map((wf) => ({ path: `/functions/v1/webhook-trigger/${wf.id}`, secret: wf.webhookSecret })),
    count: N,
    rate: RATE,
    connections: CONNECTIONS,
  } satisfies SendJob);
  const { acceptedAt, error: sendError, retries, cpuMs: senderCpuMs } = await sent;
  if (sendError) throw new Error(sendError);
  const acceptDone = performance.now();
  while ((await finishedCount(workflows)) < N + workflows.length) await new Promise((r) => setTimeout(r, 50));
  const done = performance.now();
  const cpuSelf = process.cpuUsage(cpu0.self);
  const cpuPg = pgCpu.stop();
  const cpuBroker = brokerCpuMs() - cpu0.broker;

  const wfIds = [workflows.map((w) => w.id)];
  const { rows } = await db.db.exec(
    `SELECT (trigger_payload->>'n')::int AS n, status, finished_at FROM "engine"."run" WHERE (trigger_payload->>'n')::int >= 0 AND workflow_id = ANY($1::uuid[])`,
    wfIds,
  );
  const latencies = rows.map((r) => new Date(r.finished_at as string).getTime() - acceptedAt[Number(r.n)]!).sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  const failed = rows.filter((r) => r.status !== 'succeeded').length;
  const errors = await db.db.exec(
    `SELECT error, count(*)::int AS n FROM "engine"."run" WHERE status <> 'succeeded' AND workflow_id = ANY($1::uuid[]) GROUP BY error ORDER BY n DESC LIMIT 3`,
    wfIds,
  );
  const tasks = ((await asOwner('GET', '/api/v1/overview')).tasks.open as number) - tasks0;
  const seconds = (done - started) / 1000;
  const runsPerSecond = N / seconds;

  if (kind === 'rich') {
    console.log(
      `bench:e2e richer workflow (For each over 10 items${args['rich-concurrency'] === '1' ? '' : `, concurrency ${args['rich-concurrency']}`} → Set → Switch → Create Task) on ${db.db.kind}${brokersLabel ? ` + ${brokersLabel}` : ' + embedded bus'}: ${N} deliveries, ${CONNECTIONS} senders; engine → workspace-api ${TRANSPORT}`,
    );
    console.log(`  all runs finished in ${seconds.toFixed(2)} s; ${failed} not succeeded; ${tasks} tasks (${(tasks / N).toFixed(1)} per run)`);
    for (const e of errors.rows) console.log(`  not succeeded: ${String(e.n)} × ${String(e.error).slice(0, 200)}`);
    console.log(
      `  ${runsPerSecond.toFixed(0)} runs/s, ${((tasks / seconds) | 0).toLocaleString('en')} tasks/s; accepted → finished p50 ${pct(50)} ms, p99 ${pct(99)} ms`,
    );
    console.log(
      `  CPU per run: services (this process) ${((cpuSelf.user + cpuSelf.system) / 1000 / N).toFixed(2)} ms, Postgres ${db.db.kind === 'postgres' ? `${(cpuPg / N).toFixed(2)} ms` : 'n/a (PGlite runs in this process)'}; senders (child) ${(senderCpuMs / N).toFixed(2)} ms`,
    );
    console.log(`  load average (1 min) at start ${load0.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)} (2 cores)`);
    console.log(`  target (Postgres, 2 cores): richer workflow ≥ 500 runs/s → ${runsPerSecond >= 500 ? 'met' : 'NOT met'}`);
    return;
  }
  console.log(
    `bench:e2e on ${db.db.kind}${kafka || brokersLabel ? ` + ${brokersLabel}` : ' + embedded bus'}: ${N} deliveries over ${WORKFLOWS} workflow(s)${LATENCY === undefined ? '' : `, HTTP Request node waiting ${LATENCY} ms`}${RATE ? `, sent at ${RATE}/s` : `, ${CONNECTIONS} senders`}; engine → workspace-api ${TRANSPORT}`,
  );
  console.log(
    `  accepted in ${((acceptDone - started) / 1000).toFixed(2)} s; all runs finished in ${seconds.toFixed(2)} s; ${failed} not succeeded; ${tasks} tasks`,
  );
  for (const e of errors.rows) console.log(`  not succeeded: ${String(e.n)} × ${String(e.error).slice(0, 200)}`);
  if (Object.keys(retries).length) console.log(`  deliveries retried by the senders (status: count): ${JSON.stringify(retries)}`);
  console.log(`  ${runsPerSecond.toFixed(0)} runs/s (first accept to last run finished)`);
  console.log(`  accepted → finished: p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${latencies[latencies.length - 1]} ms`);
  console.log(
    `  CPU per run: services (this process) ${((cpuSelf.user + cpuSelf.system) / 1000 / N).toFixed(2)} ms, Postgres ${db.db.kind === 'postgres' ? `${(cpuPg / N).toFixed(2)} ms` : 'n/a (PGlite runs in this process)'}${args.bus === 'kafka' ? `, Kafka broker ${kafka ? `${(cpuBroker / N).toFixed(2)} ms` : 'n/a (brokers not started here)'}` : ''}; senders (child) ${(senderCpuMs / N).toFixed(2)} ms`,
  );
  console.log(`  load average (1 min) at start ${load0.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)} (2 cores)`);
  // A paced run (--rate) measures latency at that rate: its runs/s is the rate, not a throughput figure.
  const targets: string[] = RATE
    ? []
    : LATENCY !== undefined
      ? [
          `one workflow, HTTP node 200 ms: ≥ 500 runs/s → ${runsPerSecond >= 500 ? 'met' : 'NOT met'}${WORKFLOWS === 1 && LATENCY === 200 ? '' : ' (target is for 1 workflow, 200 ms)'}`,
        ]
      : WORKFLOWS === 1
        ? [`one workflow: ≥ 1,000 runs/s → ${runsPerSecond >= 1000 ? 'met' : 'NOT met'}`]
        : [`${WORKFLOWS} workflows: ≥ 2,000 runs/s (target for 100) → ${runsPerSecond >= 2000 ? 'met' : 'NOT met'}`];
  if (RATE) targets.push(`p99 accepted → finished ≤ 250 ms at ${RATE}/s (target at 500/s) → ${pct(99) <= 250 ? 'met' : 'NOT met'}`);
  console.log(`  targets (Postgres, 2 cores): ${targets.join('; ')}`);
}

await ingest.close();
await stack.close();
endpoint?.close();
await kafka?.stop();
