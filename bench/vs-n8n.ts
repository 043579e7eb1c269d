// bench:vs-n8n (issue 40): Flowdesk beside n8n 2.8.4 on the same machine, the same Postgres server,
// the same workflows and the same load, back to back. n8n is installed (npm, install scripts off, no
// binaries) into a cache folder outside the repository (~/.cache/flowdesk-bench/n8n-2.8.4, reused);
// it is never a dependency and not in CI. Each side gets its own fresh database; Flowdesk runs as
// `npm start` does (bench/flowdesk-child.ts), n8n as `n8n start` (regular mode, its defaults).
// Lines (--lines, comma separated; default all):
//   simple1   webhook → condition → action, 1 workflow
//   simple20  the same, load spread over 20 workflows
//   rich      webhook → 10 items → Set → Switch → insert (Flowdesk: For each [0..9] → Set → Switch → Create Task;
//             n8n: Set [0..9] → Split Out → Set → Switch → Postgres insert)
//   idle      --idle s with no work, both sides measured over the same seconds
// The action: Flowdesk's Create Task (a row in workspace-api's tasks); n8n's Postgres node inserting a
// row into a table of its own database (the closest cheap equivalent: one row written per run).
// For each load line: autocannon (--connections, --seconds, --rate) on one side, drain (every
// accepted webhook has a finished run/execution in the database, at most --drain s), then the other
// side. Runs/s = finished runs in the database ÷ (load start → last run's finish). CPU per run = the
// process tree's CPU + its database's Postgres backends' CPU over load and drain ÷ finished runs.
//
//   npm run bench:vs-n8n -- [--seconds 20] [--connections 32] [--lines simple1,rich,idle] [--idle 60] [--rate R] [--sides flowdesk]
// --sides flowdesk measures Flowdesk alone (no n8n installed or started, no ratios); with
// BENCH_FLOWDESK_REPO=<another checkout> it measures that tree's `npm start` (old beside new).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort, pct, startFlowdeskChild } from './flowdesk-child.ts';
import { postgresCpu, processTreeCpu, sleep } from './stack.ts';
import { richGraph } from './workflows.ts';

const N8N_VERSION = '2.8.4';
const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '32' },
    rate: { type: 'string' },
    lines: { type: 'string', default: 'simple1,simple20,rich,idle' },
    idle: { type: 'string', default: '60' },
    drain: { type: 'string', default: '120' },
    sides: { type: 'string', default: 'flowdesk,n8n' },
    'n8n-dir': { type: 'string', default: path.join(homedir(), '.cache', 'flowdesk-bench', `n8n-${N8N_VERSION}`) },
  },
});
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
const RATE = args.rate === undefined ? undefined : Number(args.rate);
const LINES = args.lines.split(',');
for (const l of LINES) if (!['simple1', 'simple20', 'rich', 'idle'].includes(l)) throw new Error(`--lines: unknown line ${l}`);
const SIDES = args.sides.split(',');
for (const s of SIDES) if (!['flowdesk', 'n8n'].includes(s)) throw new Error(`--sides: unknown side ${s}`);
if (!SIDES.includes('flowdesk')) throw new Error('--sides: flowdesk is always measured');
const WITH_N8N = SIDES.includes('n8n');
/** The payload's n of the next webhook (both sides, all lines). */
let nextN = 0;
const SERVER = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';

// ---- n8n in the cache folder (installed once; npm's install scripts off, so nothing downloads binaries).
const n8nDir = args['n8n-dir'];
const n8nBin = path.join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n');
if (WITH_N8N && !existsSync(n8nBin)) {
  console.log(`installing n8n@${N8N_VERSION} into ${n8nDir} (once; a few minutes)`);
  await mkdir(n8nDir, { recursive: true });
  // xlsx is fetched by n8n-nodes-base from cdn.sheetjs.com, not the registry: the registry's last xlsx
  // stands in (only the spreadsheet nodes use it; the bench's workflows do not).
  await writeFile(path.join(n8nDir, 'package.json'), JSON.stringify({ name: 'flowdesk-bench-n8n', private: true, overrides: { xlsx: '0.18.5' } }));
  const npm = spawn('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--omit=dev', `n8n@${N8N_VERSION}`], { cwd: n8nDir, stdio: 'inherit' });
  const code = await new Promise((r) => npm.once('exit', r));
  if (code !== 0 || !existsSync(n8nBin)) throw new Error(`npm install n8n@${N8N_VERSION} failed (${String(code)})`);
}

// ---- Two fresh databases on the one server.
const admin = async (sql: string) => {
  const c = new pg.Client({ connectionString: SERVER });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
};
const suffix = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const dbName = { flowdesk: `vsn8n_flowdesk_${suffix}`, n8n: `vsn8n_n8n_${suffix}` };
const dbUrl = (name: string) => {
  const u = new URL(SERVER);
  u.pathname = `/${name}`;
  return u.toString();
};
await admin(`CREATE DATABASE "${dbName.flowdesk}"`);
if (WITH_N8N) await admin(`CREATE DATABASE "${dbName.n8n}"`);
const cleanups: (() => Promise<unknown>)[] = [];
const cleanup = async () => {
  for (const c of cleanups.reverse()) await c().catch((err) => console.error(`cleanup: ${(err as Error).message}`));
  for (const name of Object.values(dbName)) await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

try {
  await main();
} finally {
  await cleanup();
}

interface Target {
  path: string;
  headers: Record<string, string>;
}
interface Side {
  name: 'Flowdesk' | 'n8n';
  base: string;
  pid: number;
  database: string;
  /** Finished runs of these workflows, and the last one's finish (epoch ms). */
  finished(ids: string[]): Promise<{ n: number; last: number }>;
  /** accept → finished latencies (ms) of the runs finished since `since`. */
  latencies(ids: string[], since: number, acceptedAt: Map<number, number>): Promise<number[]>;
  simple: { ids: string[]; targets: Target[] };
  rich: { ids: string[]; targets: Target[] };
}

async function main() {
  console.log(
    `bench:vs-n8n: Flowdesk (npm start${process.env.BENCH_FLOWDESK_REPO ? ` of ${process.env.BENCH_FLOWDESK_REPO}` : ''}, Postgres) ${WITH_N8N ? `beside n8n ${N8N_VERSION} (n8n start, Postgres, regular mode)` : 'alone'}; ${SECONDS} s per line, ${CONNECTIONS} connections${RATE ? `, ${RATE} req/s` : ''}; load average ${loadavg()[0]!.toFixed(2)} (2 cores)`,
  );
  const sides = WITH_N8N ? await Promise.all([startFlowdesk(), startN8n()]) : [await startFlowdesk()];
  const results: Record<string, Record<string, LineResult>> = {};
  for (const line of LINES.filter((l) => l !== 'idle')) {
    results[line] = {};
    for (const side of sides) {
      const set =
        line === 'rich'
          ? side.rich
          : { ids: side.simple.ids.slice(0, line === 'simple1' ? 1 : 20), targets: side.simple.targets.slice(0, line === 'simple1' ? 1 : 20) };
      const r = await loadLine(side, set);
      results[line][side.name] = r;
      report(line, side.name, r);
    }
    const f = results[line].Flowdesk!;
    const n = results[line].n8n;
    if (!n) continue;
    console.log(
      `  ${line}: Flowdesk ÷ n8n runs/s ${(f.runsPerSecond / n.runsPerSecond).toFixed(1)}×; n8n's CPU per run ÷ Flowdesk's ${(n.cpuPerRun / f.cpuPerRun).toFixed(1)}×`,
    );
  }
  if (LINES.includes('idle')) {
    const seconds = Number(args.idle);
    const meters = sides.map((s) => ({ s, tree: processTreeCpu(s.pid), pg: postgresCpu(s.database) }));
    for (const m of meters) {
      m.tree.start();
      m.pg.start();
    }
    await sleep(seconds * 1000);
    const idle = meters.map((m) => ({ name: m.s.name, tree: m.tree.stop() / seconds, pg: m.pg.stop() / seconds }));
    for (const i of idle)
      console.log(
        `idle ${seconds} s, ${i.name}: process tree ${i.tree.toFixed(1)} ms/s + Postgres ${i.pg.toFixed(1)} ms/s = ${(i.tree + i.pg).toFixed(1)} ms/s`,
      );
    const [fi, ni] = idle;
    if (ni) console.log(`  idle: Flowdesk ÷ n8n CPU ${((fi!.tree + fi!.pg) / Math.max(0.01, ni.tree + ni.pg)).toFixed(1)}×`);
  }
  if (WITH_N8N) console.log('floors (issue 40; the same minutes, so a busy machine slows both):');
  const floor = (line: string, x: number) => {
    const r = results[line];
    if (!r?.n8n) return;
    const ratio = r.Flowdesk!.runsPerSecond / r.n8n.runsPerSecond;
    console.log(`  ${line}: ≥ ${x}× n8n's runs/s → ${ratio.toFixed(1)}× ${ratio >= x ? 'met' : 'NOT met'}`);
  };
  floor('simple1', 50);
  floor('simple20', 50);
  floor('rich', 25);
  console.log(`load average at the end ${loadavg()[0]!.toFixed(2)}`);
}

interface LineResult {
  sent: number;
  accepted: number;
  refused: number;
  finished: number;
  runsPerSecond: number;
  cpuPerRun: number;
  treeCpuPerRun: number;
  pgCpuPerRun: number;
  answer: { p50: number; p99: number };
  done: { p50: number; p99: number };
  drained: boolean;
}

async function loadLine(side: Side, set: { ids: string[]; targets: Target[] }): Promise<LineResult> {
  // Warm-up: one delivery per workflow, finished, not measured.
  const before = await side.finished(set.ids);
  await Promise.all(set.targets.map((t) => fetch(`${side.base}${t.path}`, { method: 'POST', headers: { ...t.headers }, body: JSON.stringify({ n: -1 }) })));
  const warmUntil = Date.now() + 60_000;
  while ((await side.finished(set.ids)).n < before.n + set.targets.length && Date.now() < warmUntil) await sleep(100);
  const base = await side.finished(set.ids);

  const acceptedAt = new Map<number, number>();
  const tree = processTreeCpu(side.pid);
  const pgc = postgresCpu(side.database);
  tree.start();
  pgc.start();
  const started = Date.now();
  const result = await autocannon({
    url: side.base,
    connections: CONNECTIONS,
    duration: SECONDS,
    timeout: 60,
    ...(RATE ? { overallRate: RATE } : {}),
    requests: [
      {
        setupRequest: (req, context) => {
          const n = nextN++;
          (context as { n: number }).n = n;
          const t = set.targets[n % set.targets.length]!;
          return { ...req, method: 'POST', path: t.path, headers: { ...t.headers }, body: JSON.stringify({ n }) };
        },
        onResponse: (status, _body, context) => {
          if (status === 200) acceptedAt.set((context as { n: number }).n, Date.now());
        },
      },
    ],
  });
  // Drain: every accepted webhook has a finished run.
  const until = Date.now() + Number(args.drain) * 1000;
  let now = await side.finished(set.ids);
  while (now.n - base.n < acceptedAt.size && Date.now() < until) {
    await sleep(100);
    now = await side.finished(set.ids);
  }
  const treeCpu = tree.stop();
  const pgCpu = pgc.stop();
  const finished = now.n - base.n;
  const done = await side.latencies(set.ids, started, acceptedAt);
  return {
    sent: result.requests.sent,
    accepted: acceptedAt.size,
    refused: result.non2xx + result.errors,
    finished,
    runsPerSecond: finished / ((now.last - started) / 1000),
    cpuPerRun: (treeCpu + pgCpu) / Math.max(1, finished),
    treeCpuPerRun: treeCpu / Math.max(1, finished),
    pgCpuPerRun: pgCpu / Math.max(1, finished),
    answer: { p50: result.latency.p50, p99: result.latency.p99 },
    done: { p50: pct(done, 50), p99: pct(done, 99) },
    drained: finished >= acceptedAt.size,
  };
}

function report(line: string, name: string, r: LineResult) {
  console.log(
    `${line.padEnd(8)} ${name.padEnd(8)} ${r.runsPerSecond.toFixed(0).padStart(6)} runs/s (${r.finished} finished of ${r.accepted} accepted${r.refused ? `, ${r.refused} refused/errors` : ''}${r.drained ? '' : `, NOT drained in ${args.drain} s`}); CPU per run ${r.cpuPerRun.toFixed(2)} ms (process tree ${r.treeCpuPerRun.toFixed(2)} + Postgres ${r.pgCpuPerRun.toFixed(2)}); answer p50 ${r.answer.p50} / p99 ${r.answer.p99} ms; accept → finished p50 ${Math.round(r.done.p50)} / p99 ${Math.round(r.done.p99)} ms`,
  );
}

// ---- Flowdesk: npm start on its database; the demo account's workflows.
async function startFlowdesk(): Promise<Side> {
  const fd = await startFlowdeskChild({ env: { DATABASE_URL: dbUrl(dbName.flowdesk) } });
  cleanups.push(() => fd.close());
  const db = new pg.Pool({ connectionString: dbUrl(dbName.flowdesk), max: 2 });
  cleanups.push(() => db.end());
  const api = async (p: string, body: unknown): Promise<any> => {
    const res = await fetch(`${fd.base}/api/v1${p}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fd.demoKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`Flowdesk POST ${p}: ${res.status} ${text}`);
    return JSON.parse(text);
  };
  const create = async (name: string, graph: unknown) => {
    const wf = (await api('/workflows', { name, triggerType: 'webhook', active: true, graph })) as { id: string; webhookSecret: string };
    return {
      id: wf.id,
      target: { path: `/functions/v1/webhook-trigger/${wf.id}`, headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.webhookSecret } },
    };
  };
  const simpleGraph = {
    nodes: [
      { id: 'c', type: 'condition', params: { left: '{{trigger.n}}', operator: 'exists' } },
      { id: 't', type: 'create_task', params: { title: 'order {{trigger.n}}' } },
    ],
    edges: [
      { from: 'trigger', to: 'c' },
      { from: 'c', to: 't', branch: 'true' },
    ],
  };
  const simple = [];
  for (let i = 0; i < 20; i++) simple.push(await create(`vs-n8n simple ${i}`, simpleGraph));
  // The richer line as bench:e2e runs it.
  const rich = await create('vs-n8n rich', richGraph());
  return {
    name: 'Flowdesk',
    base: fd.base,
    pid: fd.child.pid!,
    database: dbName.flowdesk,
    finished: async (ids) => {
      const { rows } = await db.query(
        `SELECT count(*)::int AS n, coalesce(extract(epoch FROM max(finished_at)) * 1000, 0)::float8 AS last FROM "engine"."run" WHERE status IN ('succeeded', 'failed', 'skipped') AND workflow_id = ANY($1::uuid[])`,
        [ids],
      );
      return { n: rows[0].n as number, last: rows[0].last as number };
    },
    latencies: async (ids, since, acceptedAt) => {
      const { rows } = await db.query(
        `SELECT (trigger_payload->>'n')::int AS n, extract(epoch FROM finished_at) * 1000 AS at FROM "engine"."run" WHERE finished_at >= to_timestamp($2 / 1000.0) AND workflow_id = ANY($1::uuid[])`,
        [ids, since],
      );
      return rows.filter((r) => acceptedAt.has(r.n as number)).map((r) => Number(r.at) - acceptedAt.get(r.n as number)!);
    },
    simple: { ids: simple.map((w) => w.id), targets: simple.map((w) => w.target) },
    rich: { ids: [rich.id], targets: [rich.target] },
  };
}

// ---- n8n: `n8n start` on its database; owner set-up, a Postgres credential and the workflows by its REST API.
async function startN8n(): Promise<Side> {
  const folder = await mkdtemp(path.join(tmpdir(), 'flowdesk-bench-n8n-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = new URL(SERVER);
  const child: ChildProcess = spawn(process.execPath, [n8nBin, 'start'], {
    cwd: folder,
    env: {
      PATH: process.env.PATH,
      HOME: folder,
      N8N_USER_FOLDER: folder,
      N8N_ENCRYPTION_KEY: randomBytes(24).toString('hex'),
      N8N_PORT: String(port),
      N8N_LISTEN_ADDRESS: '127.0.0.1',
      N8N_SECURE_COOKIE: 'false',
      N8N_DIAGNOSTICS_ENABLED: 'false',
      N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
      N8N_TEMPLATES_ENABLED: 'false',
      N8N_LOG_LEVEL: 'info',
      DB_TYPE: 'postgresdb',
      DB_POSTGRESDB_HOST: server.hostname,
      DB_POSTGRESDB_PORT: server.port || '5432',
      DB_POSTGRESDB_USER: decodeURIComponent(server.username || 'postgres'),
      DB_POSTGRESDB_PASSWORD: decodeURIComponent(server.password),
      DB_POSTGRESDB_DATABASE: dbName.n8n,
      EXECUTIONS_MODE: 'regular',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  child.once('exit', () => (exited = true));
  cleanups.push(async () => {
    if (!exited) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    await rm(folder, { recursive: true, force: true });
  });
  const t0 = Date.now();
  // Ready once it prints its banner (its REST routes are mounted after /healthz answers).
  while (!/Editor is now accessible/.test(output)) {
    if (exited) throw new Error(`n8n did not start: ${output}`);
    if (Date.now() - t0 > 300_000) throw new Error(`n8n did not start in 300 s: ${output}`);
    await sleep(250);
  }
  const db = new pg.Pool({ connectionString: dbUrl(dbName.n8n), max: 2 });
  cleanups.push(() => db.end());
  await db.query('CREATE TABLE bench_task (id bigserial PRIMARY KEY, title text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');

  // Its internal REST API (as its editor uses it): the auth cookie is bound to a browser-id header.
  let cookie = '';
  const rest = async (method: string, p: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${base}/rest${p}`, {
      method,
      headers: { 'content-type': 'application/json', 'browser-id': 'bench', ...(cookie ? { cookie } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`n8n ${method} /rest${p}: ${res.status} ${text.slice(0, 500)}`);
    const set = res.headers.getSetCookie().find((c) => c.startsWith('n8n-auth='));
    if (set) cookie = set.split(';')[0]!;
    return (JSON.parse(text) as { data: unknown }).data;
  };
  await rest('POST', '/owner/setup', { email: 'owner@bench.test', firstName: 'Bench', lastName: 'Owner', password: 'Bench-password-1234' });
  const credential = (await rest('POST', '/credentials', {
    name: 'bench postgres',
    type: 'postgres',
    data: {
      host: server.hostname,
      port: Number(server.port || 5432),
      database: dbName.n8n,
      user: decodeURIComponent(server.username || 'postgres'),
      password: decodeURIComponent(server.password),
      ssl: 'disable',
      allowUnauthorizedCerts: false,
      maxConnections: 100,
      sshTunnel: false,
    },
  })) as { id: string; name: string };
  const insert = (title: string) => ({
    id: randomUUID(),
    name: 'Insert',
    type: 'n8n-nodes-base.postgres',
    typeVersion: 2.6,
    position: [900, 0],
    parameters: { operation: 'executeQuery', query: 'INSERT INTO bench_task (title) VALUES ($1)', options: { queryReplacement: title } },
    credentials: { postgres: { id: credential.id, name: credential.name } },
  });
  const webhook = (p: string) => ({
    id: randomUUID(),
    name: 'Webhook',
    type: 'n8n-nodes-base.webhook',
    typeVersion: 2.1,
    position: [0, 0],
    webhookId: randomUUID(),
    parameters: { httpMethod: 'POST', path: p, responseMode: 'onReceived', options: {} },
  });
  const condition = (id: string, left: string, type: string, operation: string, right?: unknown) => ({
    options: { caseSensitive: true, leftValue: '', typeValidation: 'loose', version: 2 },
    conditions: [{ id, leftValue: left, rightValue: right ?? '', operator: { type, operation, ...(right === undefined ? { singleValue: true } : {}) } }],
    combinator: 'and',
  });
  const create = async (name: string, p: string, nodes: unknown[], connections: unknown) => {
    const wf = (await rest('POST', '/workflows', { name, nodes, connections, settings: { executionOrder: 'v1' }, active: false })) as {
      id: string;
      versionId: string;
    };
    await rest('POST', `/workflows/${wf.id}/activate`, { versionId: wf.versionId });
    return { id: wf.id, target: { path: `/webhook/${p}`, headers: { 'content-type': 'application/json' } } };
  };
  const simple = [];
  for (let i = 0; i < 20; i++) {
    const p = `vs-simple-${i}`;
    simple.push(
      await create(
        `vs-n8n simple ${i}`,
        p,
        [
          webhook(p),
          {
            id: randomUUID(),
            name: 'If',
            type: 'n8n-nodes-base.if',
            typeVersion: 2.2,
            position: [300, 0],
            parameters: { conditions: condition('c', '={{ $json.body.n }}', 'number', 'exists'), options: {} },
          },
          insert("={{ 'order ' + $('Webhook').item.json.body.n }}"),
        ],
        { Webhook: { main: [[{ node: 'If', type: 'main', index: 0 }]] }, If: { main: [[{ node: 'Insert', type: 'main', index: 0 }], []] } },
      ),
    );
  }
  const to = (node: string) => [{ node, type: 'main', index: 0 }];
  const rich = await create(
    'vs-n8n rich',
    'vs-rich',
    [
      webhook('vs-rich'),
      {
        id: randomUUID(),
        name: 'Items',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [200, 0],
        parameters: {
          mode: 'manual',
          assignments: {
            assignments: [
              { id: 'n', name: 'n', value: '={{ $json.body.n }}', type: 'number' },
              { id: 'items', name: 'items', value: '={{ [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] }}', type: 'array' },
            ],
          },
          options: {},
        },
      },
      {
        id: randomUUID(),
        name: 'Split',
        type: 'n8n-nodes-base.splitOut',
        typeVersion: 1,
        position: [400, 0],
        parameters: { fieldToSplitOut: 'items', include: 'allOtherFields', options: {} },
      },
      {
        id: randomUUID(),
        name: 'Set',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [600, 0],
        parameters: {
          mode: 'manual',
          assignments: {
            assignments: [
              { id: 'sku', name: 'sku', value: '=SKU-{{ $json.n }}-{{ $json.items }}', type: 'string' },
              { id: 'lane', name: 'lane', value: '={{ $json.items % 3 }}', type: 'number' },
              { id: 'n', name: 'n', value: '={{ $json.n }}', type: 'number' },
              { id: 'i', name: 'i', value: '={{ $json.items }}', type: 'number' },
            ],
          },
          options: {},
        },
      },
      {
        id: randomUUID(),
        name: 'Switch',
        type: 'n8n-nodes-base.switch',
        typeVersion: 3.2,
        position: [800, 0],
        parameters: {
          rules: {
            values: [
              { conditions: condition('l0', '={{ $json.lane }}', 'number', 'equals', 0) },
              { conditions: condition('l1', '={{ $json.lane }}', 'number', 'equals', 1) },
            ],
          },
          options: { fallbackOutput: 'extra' },
        },
      },
      insert("={{ 'order ' + $json.n + ' line ' + $json.i + ' ' + $json.sku + ' lane ' + $json.lane }}"),
    ],
    {
      Webhook: { main: [to('Items')] },
      Items: { main: [to('Split')] },
      Split: { main: [to('Set')] },
      Set: { main: [to('Switch')] },
      Switch: { main: [to('Insert'), to('Insert'), to('Insert')] },
    },
  );
  return {
    name: 'n8n',
    base,
    pid: child.pid!,
    database: dbName.n8n,
    finished: async (ids) => {
      const { rows } = await db.query(
        `SELECT count(*)::int AS n, coalesce(extract(epoch FROM max("stoppedAt")) * 1000, 0)::float8 AS last FROM execution_entity WHERE "stoppedAt" IS NOT NULL AND "workflowId" = ANY($1::text[])`,
        [ids],
      );
      return { n: rows[0].n as number, last: rows[0].last as number };
    },
    // n8n writes an execution's row before it answers the webhook: createdAt stands for the accept.
    latencies: async (ids, since) => {
      const { rows } = await db.query(
        `SELECT extract(epoch FROM ("stoppedAt" - "createdAt")) * 1000 AS ms FROM execution_entity WHERE "stoppedAt" IS NOT NULL AND "createdAt" >= to_timestamp($2 / 1000.0) AND "workflowId" = ANY($1::text[])`,
        [ids, since],
      );
      return rows.map((r) => Number(r.ms));
    },
    simple: { ids: simple.map((w) => w.id), targets: simple.map((w) => w.target) },
    rich: { ids: [rich.id], targets: [rich.target] },
  };
}
