// bench:tenants (issue 36): can one owner's workflows slow another's? `npm start` (the embedded
// stack: all six services in one process, PGlite, or Postgres with DATABASE_URL, the embedded bus, or
// Kafka with --bus kafka) runs in a child process; this process is the outside world. Owner B (the
// demo account) sends webhooks to a "webhook → Create Task" workflow at a steady rate (--rate, default
// 2/s) for --seconds per phase, first alone, then while owner A (the installation's owner account)
// runs one hostile load per phase:
//   loop     a Code step `while (true) {}`, 20 webhooks/s
//   hash     a Code step hashing an 8 MB string 150 times (flowdesk.hash, a host helper), one webhook per 2 s
//   regex    `{{= $match(trigger.s, /^(a+)+$/) }}` fed 30 × "a" + "!" by the payload, one webhook per 2 s
//   foreach  For each over 40 items of an infinite-loop Code step (on error: continue), one webhook per 10 s
//   fanout   For each over [1..5] of Run workflow (itself, without waiting), one webhook
// Each phase prints B's intake (webhook answered) and completion (run finished − sent) p50/p99, B's
// runs succeeded and throughput, /healthz p50/p99 (probed every 100 ms), what A's runs ended with,
// and the CPU of the Flowdesk process (and of its Postgres backends) per B run; then A's workflow is
// deleted and the phase drains (at most --drain s). The targets (issue 36) are checked in the same run.
//
//   npm run bench:tenants -- [--seconds 20] [--rate 2] [--only loop,regex] [--bus kafka]   (each hostile phase: a fresh owner A)
//   node scripts/with-fresh-database.mjs npm run bench:tenants   (Postgres)
import { parseArgs } from 'node:util';
import { startLocalKafka, type LocalKafka } from '@flowdesk/bus/testing';
import { ownerApiKey, pct, startFlowdeskChild } from './flowdesk-child.ts';
import { postgresCpu, procCpuMs, sleep } from './stack.ts';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    rate: { type: 'string', default: '2' },
    only: { type: 'string' },
    bus: { type: 'string', default: 'embedded' },
    drain: { type: 'string', default: '90' },
  },
});
const SECONDS = Number(args.seconds);
const RATE = Number(args.rate);
const DRAIN_MS = Number(args.drain) * 1000;
if (args.bus !== 'embedded' && args.bus !== 'kafka') throw new Error('--bus must be embedded or kafka');
const ms = (x: number) => (Number.isFinite(x) ? `${Math.round(x)} ms` : '–');

// ---- Flowdesk as `npm start` runs it, in a child process.
let kafka: LocalKafka | undefined;
if (args.bus === 'kafka') kafka = await startLocalKafka({ heap: '768m' });
const flowdesk = await startFlowdeskChild({
  env: {
    // Each hostile phase gets an owner of its own (signed up), so its A is not hidden behind an earlier A's backlog.
    SIGNUP_MODE: 'open',
    // One broker: topics with one replica (the default of 3 is production's).
    ...(kafka ? { KAFKA_BROKERS: kafka.brokers.join(','), KAFKA_REPLICATION_FACTOR: '1' } : {}),
  },
});
const { base, child } = flowdesk;
const close = async () => {
  const t0 = Date.now();
  const running = !flowdesk.exited();
  await flowdesk.close();
  // Runs waiting for an owner's sandbox budget park instead of holding the shutdown (its grace is 25 s).
  if (running) console.log(`Flowdesk stopped ${((Date.now() - t0) / 1000).toFixed(1)} s after SIGTERM`);
  await kafka?.stop();
};
process.once('SIGINT', () => void close().then(() => process.exit(130)));
const database = process.env.DATABASE_URL ? decodeURIComponent(new URL(process.env.DATABASE_URL).pathname.slice(1)) : undefined;

// ---- The owners: B is the demo account (its key in dev.json); each hostile phase's A is a fresh
// account (the first made by setup as the installation's owner, the others by open sign-up), so a
// phase's A never waits behind an earlier phase's A's backlog (fairness would rightly keep it there).
const keyB = flowdesk.demoKey;
let owners = 0;
const newOwner = async (): Promise<string> => {
  const n = ++owners;
  const account = { name: `Owner A${n}`, email: `a${n}@bench.test`, password: 'bench-password-1234' };
  return ownerApiKey(base, account, n === 1 ? 'setup' : 'signup');
};

const api = async (key: string, method: string, p: string, body?: unknown): Promise<any> => {
  const res = await fetch(`${base}/api/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
};
type Workflow = { id: string; webhookSecret: string };
const createWorkflow = (key: string, name: string, graph: unknown): Promise<Workflow> =>
  api(key, 'POST', '/workflows', { name, triggerType: 'webhook', active: true, graph });
const deliver = async (wf: Workflow, payload: unknown): Promise<{ status: number; eventId?: string; ms: number }> => {
  const t0 = performance.now();
  try {
    const res = await fetch(`${base}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(600_000),
    });
    const body = (await res.json().catch(() => ({}))) as { eventId?: string };
    return { status: res.status, eventId: body.eventId, ms: performance.now() - t0 };
  } catch {
    return { status: 0, ms: performance.now() - t0 };
  }
};
type Run = { eventId: string; status: string; error: string | null; finishedAt: string | null; steps: { error?: string | null }[] };
const runsOf = async (key: string, wf: Workflow): Promise<Run[]> => {
  const all: Run[] = [];
  let cursor: string | undefined;
  do {
    const page = (await api(key, 'GET', `/workflows/${wf.id}/runs?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)) as {
      items: Run[];
      nextCursor?: string | null;
    };
    all.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return all;
};

// ---- Owner B's workflow, and owner A's hostile ones.
const workflowB = await createWorkflow(keyB, 'B: webhook → task', {
  nodes: [{ id: 'task_1', type: 'create_task', params: { title: 'b {{trigger.n}}' } }],
  edges: [{ from: 'trigger', to: 'task_1' }],
});
const code = (id: string, source: string, extra: Record<string, unknown> = {}) => ({ id, type: 'code', ...extra, params: { code: source } });
interface Scenario {
  name: string;
  what: string;
  graph: (self: () => string) => unknown;
  /** A's webhooks per second (or one at the start when 0). */
  rate: number;
  payload: unknown;
}
const SCENARIOS: Scenario[] = [
  {
    name: 'loop',
    what: 'Code `while (true) {}` at 20 webhooks/s',
    rate: 20,
    payload: {},
    graph: () => ({ nodes: [code('code_1', 'while (true) {}')], edges: [{ from: 'trigger', to: 'code_1' }] }),
  },
  {
    name: 'hash',
    what: 'Code: flowdesk.hash × 150 on an 8 MB string, a webhook per 2 s',
    rate: 0.5,
    payload: {},
    graph: () => ({
      nodes: [code('code_1', "const s = 'x'.repeat(8 * 1024 * 1024); let h = ''; for (let i = 0; i < 150; i++) h = flowdesk.hash('sha256', s); return h;")],
      edges: [{ from: 'trigger', to: 'code_1' }],
    }),
  },
  {
    name: 'regex',
    what: '`$match(trigger.s, /^(a+)+$/)` fed 30 × "a" + "!", a webhook per 2 s',
    rate: 0.5,
    payload: { s: `${'a'.repeat(30)}!` },
    graph: () => ({
      nodes: [{ id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'm', value: '{{= $match(trigger.s, /^(a+)+$/) }}' }] } }],
      edges: [{ from: 'trigger', to: 'set_1' }],
    }),
  },
  {
    name: 'foreach',
    what: 'For each over 40 items of an infinite-loop Code step (on error: continue), a webhook per 10 s',
    rate: 0.1,
    payload: {},
    graph: () => ({
      nodes: [{ id: 'loop_1', type: 'for_each', params: { items: '{{= [1..40] }}' } }, code('code_1', 'while (true) {}', { onError: 'continue' })],
      edges: [
        { from: 'trigger', to: 'loop_1' },
        { from: 'loop_1', to: 'code_1', branch: 'each' },
      ],
    }),
  },
  {
    name: 'fanout',
    what: 'For each over [1..5] of Run workflow (itself, no wait), one webhook',
    rate: 0,
    payload: {},
    graph: (self) => ({
      nodes: [
        { id: 'loop_1', type: 'for_each', params: { items: '{{= [1..5] }}' } },
        { id: 'run_1', type: 'run_workflow', params: { workflowId: self(), wait: false } },
      ],
      edges: [
        { from: 'trigger', to: 'loop_1' },
        { from: 'loop_1', to: 'run_1', branch: 'each' },
      ],
    }),
  },
];
const only = args.only?.split(',');
const scenarios = only ? SCENARIOS.filter((s) => only.includes(s.name)) : SCENARIOS;

// ---- One phase: B at RATE for SECONDS, /healthz probed, A's load beside it.
interface Phase {
  name: string;
  sent: number;
  succeeded: number;
  unfinished: number;
  failed: string[];
  intake: number[];
  completion: number[];
  health: number[];
  healthFailures: number;
  /** B's runs succeeded per second, from the first webhook sent to the last run finished. */
  throughput: number;
  cpuPerRunMs: number;
  pgCpuPerRunMs: number;
  a?: { deliveries: number; refused: Record<number, number>; runs: number; statuses: Record<string, number>; errors: string[] };
}
let nBase = 0;
async function phase(name: string, scenario?: Scenario): Promise<Phase> {
  const cpu0 = procCpuMs(child.pid!);
  const pg = postgresCpu(database);
  pg.start();
  let running = true;
  // /healthz every 100 ms.
  const health: number[] = [];
  let healthFailures = 0;
  const prober = (async () => {
    while (running) {
      const t0 = performance.now();
      const ok = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(60_000) }).then(
        (r) => r.ok,
        () => false,
      );
      health.push(performance.now() - t0);
      if (!ok) healthFailures++;
      await sleep(100);
    }
  })();
  // A's load.
  let wfA: Workflow | undefined;
  const keyA = scenario ? await newOwner() : '';
  const aDeliveries: Promise<{ status: number }>[] = [];
  let aLoad: Promise<void> = Promise.resolve();
  if (scenario) {
    let id = '';
    wfA = await createWorkflow(keyA, `A: ${scenario.name}`, { nodes: [], edges: [] });
    id = wfA.id;
    await api(keyA, 'PATCH', `/workflows/${id}`, { graph: scenario.graph(() => id) });
    aLoad = (async () => {
      const t0 = Date.now();
      for (let i = 0; running && (scenario.rate > 0 || i === 0); i++) {
        const wait = t0 + (scenario.rate > 0 ? (i * 1000) / scenario.rate : 0) - Date.now();
        if (wait > 0) await sleep(wait);
        if (!running) break;
        aDeliveries.push(deliver(wfA, scenario.payload));
      }
    })();
  }
  // B's steady webhooks.
  const sent = new Map<string, number>();
  const intake: number[] = [];
  const refusedB: string[] = [];
  const bDeliveries: Promise<void>[] = [];
  const t0 = Date.now();
  const total = Math.round(SECONDS * RATE);
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / RATE - Date.now();
    if (wait > 0) await sleep(wait);
    const n = ++nBase;
    const at = Date.now();
    bDeliveries.push(
      deliver(workflowB, { n }).then((r) => {
        intake.push(r.ms);
        if (r.status === 200 && r.eventId) sent.set(r.eventId, at);
        else refusedB.push(`delivery ${n}: ${r.status}`);
      }),
    );
  }
  running = false;
  await aLoad;
  await Promise.all(bDeliveries);
  // Drain: every accepted B delivery has a finished run, at most DRAIN_MS.
  const drainUntil = Date.now() + DRAIN_MS;
  let runsB: Run[];
  for (;;) {
    runsB = (await runsOf(keyB, workflowB)).filter((r) => sent.has(r.eventId));
    if (runsB.filter((r) => r.finishedAt).length >= sent.size || Date.now() > drainUntil) break;
    await sleep(250);
  }
  await prober;
  const cpu = procCpuMs(child.pid!) - cpu0;
  const pgCpu = pg.stop();
  const completion = runsB.filter((r) => r.finishedAt).map((r) => Date.parse(r.finishedAt!) - sent.get(r.eventId)!);
  const succeeded = runsB.filter((r) => r.status === 'succeeded').length;
  const firstSent = Math.min(...sent.values());
  const lastFinished = Math.max(...runsB.filter((r) => r.finishedAt).map((r) => Date.parse(r.finishedAt!)));
  const throughput = succeeded / Math.max(0.001, (lastFinished - firstSent) / 1000);
  const failed = [...refusedB, ...runsB.filter((r) => r.finishedAt && r.status !== 'succeeded').map((r) => `${r.status}: ${r.error ?? ''}`.slice(0, 160))];
  const result: Phase = {
    name,
    sent: total,
    succeeded,
    unfinished: sent.size - runsB.filter((r) => r.finishedAt).length,
    failed,
    intake,
    completion,
    health,
    healthFailures,
    throughput,
    cpuPerRunMs: cpu / Math.max(1, succeeded),
    pgCpuPerRunMs: pgCpu / Math.max(1, succeeded),
  };
  if (wfA) {
    const answered = await Promise.all(aDeliveries);
    const refused: Record<number, number> = {};
    for (const d of answered) if (d.status !== 200 && d.status !== 202) refused[d.status] = (refused[d.status] ?? 0) + 1;
    // A's runs may outlast the phase (For each: 40 items × a 1 s limit): wait, within the drain, until
    // one of them has ended (so its errors are recorded) or all have.
    const aUntil = Date.now() + DRAIN_MS;
    let runsA: Run[];
    for (;;) {
      runsA = await runsOf(keyA, wfA).catch(() => [] as Run[]);
      if (runsA.some((r) => r.finishedAt) || Date.now() > aUntil) break;
      await sleep(250);
    }
    const statuses: Record<string, number> = {};
    const errors = new Map<string, number>();
    for (const r of runsA) {
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      for (const e of [r.error, ...r.steps.map((s) => s.error)]) if (e) errors.set(e.slice(0, 140), (errors.get(e.slice(0, 140)) ?? 0) + 1);
    }
    result.a = {
      deliveries: answered.length,
      refused,
      runs: runsA.length,
      statuses,
      errors: [...errors]
        .sort((x, y) => y[1] - x[1])
        .slice(0, 3)
        .map(([e, n]) => `${n} × ${e}`),
    };
    // A stops: its workflow deleted (its queued work goes with it), then a quiet moment.
    await api(keyA, 'DELETE', `/workflows/${wfA.id}`).catch(() => undefined);
  }
  return result;
}

const report = (p: Phase) => {
  console.log(`  ${p.name}`);
  console.log(
    `    B: ${p.succeeded}/${p.sent} succeeded${p.unfinished ? `, ${p.unfinished} unfinished after the drain` : ''}; intake p50 ${ms(pct(p.intake, 50))} p99 ${ms(pct(p.intake, 99))}; completion p50 ${ms(pct(p.completion, 50))} p99 ${ms(pct(p.completion, 99))}`,
  );
  console.log(`    B throughput ${p.throughput.toFixed(2)} runs/s${p === alone ? '' : ` (${Math.round((100 * p.throughput) / alone.throughput)} % of alone)`}`);
  console.log(`    /healthz p50 ${ms(pct(p.health, 50))} p99 ${ms(pct(p.health, 99))} (${p.health.length} probes, ${p.healthFailures} not 200)`);
  console.log(
    `    CPU per B run: Flowdesk ${p.cpuPerRunMs.toFixed(1)} ms${database ? ` + Postgres ${p.pgCpuPerRunMs.toFixed(1)} ms` : ''} (all of A's work included)`,
  );
  if (p.failed.length) console.log(`    B not succeeded: ${p.failed.slice(0, 3).join(' | ')}`);
  if (p.a)
    console.log(
      `    A: ${p.a.deliveries} webhooks (${
        Object.entries(p.a.refused)
          .map(([s, n]) => `${n} × ${s}`)
          .join(', ') || 'all accepted'
      }), ${p.a.runs} runs ${JSON.stringify(p.a.statuses)}; ${p.a.errors.join(' | ') || 'no errors'}`,
    );
};

console.log(
  `bench:tenants on ${database ? 'Postgres' : 'PGlite'} + ${kafka ? 'Kafka' : 'embedded bus'}: owner B's webhook → Create Task at ${RATE}/s for ${SECONDS} s per phase (npm start in a child process, 2 cores shared)`,
);
// Warm-up (caches, connections): not measured.
await deliver(workflowB, { n: 0 });
const alone = await phase('alone');
report(alone);
const verdicts: string[] = [];
for (const s of scenarios) {
  if (flowdesk.exited()) break;
  const p = await phase(`${s.name}: ${s.what}`, s);
  report(p);
  const checks: [string, boolean][] = [
    ['every B run succeeds', p.succeeded === p.sent],
    [`B completion p99 ≤ 2 × alone + 250 ms (${ms(2 * pct(alone.completion, 99) + 250)})`, pct(p.completion, 99) <= 2 * pct(alone.completion, 99) + 250],
    ['B throughput ≥ 90 % of alone', p.succeeded >= 0.9 * alone.succeeded && p.throughput >= 0.9 * alone.throughput],
    ['/healthz p99 ≤ 250 ms', pct(p.health, 99) <= 250],
    ['intake p99 ≤ 250 ms', pct(p.intake, 99) <= 250],
    [
      "A's runs end with errors naming the limit",
      !!p.a &&
        /limit|quota|at most|more than/i.test(p.a.errors.join(' ')) && // fanout's first runs succeed (the quotas stop later ones); foreach's step continues on error, so
        // its run may succeed with every item's error naming the limit.
        (s.name === 'fanout' || s.name === 'foreach' || !p.a.statuses.succeeded),
    ],
  ];
  const missed = checks.filter(([, ok]) => !ok).map(([what]) => what);
  verdicts.push(`  ${s.name}: ${missed.length === 0 ? 'all targets met' : `NOT met: ${missed.join('; ')}`}`);
}
console.log('targets (issue 36):');
for (const v of verdicts) console.log(v);
await close();
