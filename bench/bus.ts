// Throughput of the embedded event bus on PGlite with a data folder on disk, as `npm start` runs it,
// and on Postgres when DATABASE_URL is set (a fresh database, dropped afterwards):
//
// 1. publish (durably committed) and end to end (publish → handler → done);
// 2. draining a backlog: N messages already pending over K keys when the consumer starts, as after
//    a burst of webhooks. Prints what one claim costs there (the claim must not grow with the
//    backlog), messages/s, and the CPU per message of this process and of the Postgres backends
//    (read from /proc, so the figure holds while other work loads the machine).
//
//   npm run bench:bus -- [messages=3000] [keys=100] [concurrency=16]
//       [--backlog 10000,20000] [--backlog-keys 1,20] [--key-concurrency 1] [--seconds 20] [--only-backlog]
//       [--db both|pglite|postgres]
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createTestDatabase, openDatabase, type Database } from '@flowdesk/db';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    backlog: { type: 'string', default: '10000,20000' },
    'backlog-keys': { type: 'string', default: '1,20' },
    'key-concurrency': { type: 'string', default: '1' },
    seconds: { type: 'string', default: '20' },
    'only-backlog': { type: 'boolean', default: false },
    db: { type: 'string', default: 'both' },
  },
});
const total = Number(positionals[0] ?? 3000);
const keys = Number(positionals[1] ?? 100);
const concurrency = Number(positionals[2] ?? 16);
const list = (s: string) =>
  s
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
const backlogs = list(flags.backlog);
const backlogKeys = list(flags['backlog-keys']);
const keyConcurrency = Number(flags['key-concurrency']);
const maxSeconds = Number(flags.seconds);

const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString('en')}/s`;
const payload = (i: number) => ({ eventId: `e${i}`, workflowId: `wf-${i % keys}`, payload: { customer: { name: 'Ada' }, i } });

/** `publishers` callers publishing one message each, as webhook-ingest does per request. */
async function publishSingles(bus: EventBus, topic: string, n: number, publishers: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: publishers }, async () => {
      while (next < n) {
        const i = next++;
        await bus.publish(topic, [{ key: `wf-${i % keys}`, value: payload(i) }]);
      }
    }),
  );
  return performance.now() - t0;
}

async function publishBatches(bus: EventBus, topic: string, n: number, size: number, keyOf: (i: number) => string = (i) => `wf-${i % keys}`): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i += size) {
    await bus.publish(
      topic,
      Array.from({ length: Math.min(size, n - i) }, (_, j) => ({ key: keyOf(i + j), value: payload(i + j) })),
    );
  }
  return performance.now() - t0;
}

/** From the first publish to the last message done, with a subscriber already waiting. */
async function endToEnd(bus: EventBus, topic: string, n: number): Promise<number> {
  let handled = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const sub = await bus.subscribe({
    topic,
    groupId: 'bench',
    concurrency,
    handler: () => {
      if (++handled === n) resolveDone();
    },
  });
  const t0 = performance.now();
  await publishSingles(bus, topic, n, concurrency);
  await done;
  const ms = performance.now() - t0;
  await sub.close();
  return ms;
}

/** The bus's statements, timed by kind: the claim is the one that leases (`locked_by = `). */
interface Timings {
  claims: number[];
  statements: number;
}
function timed(db: Database, t: Timings): Database {
  const wrap =
    (exec: Database['exec']): Database['exec'] =>
    async (sql, params) => {
      const t0 = performance.now();
      const res = await exec(sql, params);
      t.statements++;
      if (sql.includes('/* bus claim */') || sql.includes('locked_by = $4')) t.claims.push(performance.now() - t0);
      return res;
    };
  return { ...db, exec: wrap(db.exec), session: (fn) => db.session((exec) => fn(wrap(exec))) };
}

const TICKS = 100; // USER_HZ on Linux
/** CPU seconds (user + system) per server process serving this database, from /proc; undefined if not on this machine. */
async function backendTicks(db: Database): Promise<Map<number, number> | undefined> {
  const { rows } = await db.exec('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
  const out = new Map<number, number>();
  for (const r of rows) {
    try {
      const fields = readFileSync(`/proc/${Number(r.pid)}/stat`, 'utf8')
        .split(') ')[1]!
        .split(' ');
      out.set(Number(r.pid), Number(fields[11]) + Number(fields[12])); // utime, stime (fields 14 and 15 of stat)
    } catch {
      if (out.size === 0) return undefined; // the server is not on this machine
    }
  }
  return out;
}

/**
 * The CPU the Postgres backends of this database spend between start() and stop(). The pool opens
 * and closes connections meanwhile, so backends are sampled every 200 ms: one that appears counts
 * from zero, one that ends counts up to its last sample.
 */
function backendCpu(db: Database): { stop(): Promise<number | undefined> } | undefined {
  if (db.kind !== 'postgres') return undefined;
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let onMachine = true;
  let started = false;
  const sample = async () => {
    const now = await backendTicks(db).catch(() => undefined);
    if (!now) {
      onMachine = false;
      return;
    }
    for (const [pid, ticks] of now) {
      if (!first.has(pid)) first.set(pid, started ? 0 : ticks);
      last.set(pid, ticks);
    }
    started = true;
  };
  const ready = sample();
  const timer = setInterval(() => void sample(), 200);
  return {
    async stop() {
      await ready;
      clearInterval(timer);
      await sample();
      if (!onMachine) return undefined;
      let ticks = 0;
      for (const [pid, t] of last) ticks += t - (first.get(pid) ?? 0);
      return ticks / TICKS;
    },
  };
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 0)} ms`;

/**
 * N messages pending over `k` keys before the consumer starts; then it drains them (or for at most
 * maxSeconds). The Postgres backends are those of this database only (pool connections stay open,
 * so the same processes are read before and after).
 */
async function drainBacklog(label: string, raw: Database, n: number, k: number): Promise<void> {
  const timings: Timings = { claims: [], statements: 0 };
  const db = timed(raw, timings);
  const bus = await createEmbeddedBus(db, { onError: (e) => console.error(e) });
  const topic = `bench.backlog.${n}.${k}.${Date.now()}`;
  // Register the group first, so every message gets a pending delivery for it.
  await (await bus.subscribe({ topic, groupId: 'bench', handler: () => {} })).close();
  await publishBatches(bus, topic, n, 500, (i) => `wf-${i % k}`);
  timings.claims.length = 0;
  timings.statements = 0;
  let handled = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const cpu0 = process.cpuUsage();
  const pgCpu = backendCpu(raw);
  const t0 = performance.now();
  const sub = await bus.subscribe({
    topic,
    groupId: 'bench',
    concurrency,
    keyConcurrency,
    handler: () => {
      if (++handled === n) resolveDone();
    },
  });
  const timer = setTimeout(resolveDone, maxSeconds * 1000);
  await done;
  clearTimeout(timer);
  const elapsed = performance.now() - t0;
  await sub.close();
  const cpu = process.cpuUsage(cpu0);
  const pgSeconds = await pgCpu?.stop();
  await bus.close();
  const first = timings.claims.slice(0, 50);
  const nodeUs = (cpu.user + cpu.system) / handled;
  const pgUs = pgSeconds !== undefined ? (pgSeconds * 1e6) / handled : undefined;
  console.log(
    `  ${label}: ${n.toLocaleString('en')} pending over ${k} key${k === 1 ? '' : 's'} (concurrency ${concurrency}, keyConcurrency ${keyConcurrency}): ` +
      `${handled.toLocaleString('en')} handled in ${(elapsed / 1000).toFixed(1)} s = ${rate(handled, elapsed)}${handled < n ? ' (stopped at the time limit)' : ''}\n` +
      `    claim: first 50 p50 ${ms(pct(first, 50))}, all ${timings.claims.length} p50 ${ms(pct(timings.claims, 50))} p99 ${ms(pct(timings.claims, 99))}; ` +
      `${(timings.statements / Math.max(1, handled)).toFixed(2)} statements/message; ` +
      `CPU/message: this process ${Math.round(nodeUs)} µs${pgUs !== undefined ? `, Postgres ${Math.round(pgUs)} µs` : db.kind === 'pglite' ? ' (PGlite included)' : ''}`,
  );
}

async function run(label: string, db: Database): Promise<void> {
  if (!flags['only-backlog']) {
    const bus = await createEmbeddedBus(db, { onError: (e) => console.error(e) });
    const singles = await publishSingles(bus, 'bench.singles', total, concurrency);
    const batches = await publishBatches(bus, 'bench.batches', total, 100);
    const e2e = await endToEnd(bus, 'bench.e2e', total);
    await bus.close();
    console.log(`${label}: ${total} messages, ${keys} keys, concurrency ${concurrency}`);
    console.log(`  publish, 1 per call, ${concurrency} callers: ${rate(total, singles)}`);
    console.log(`  publish, batches of 100:          ${rate(total, batches)}`);
    console.log(`  end to end (publish → handled):   ${rate(total, e2e)}`);
  } else {
    console.log(`${label}:`);
  }
  for (const n of backlogs) for (const k of backlogKeys) await drainBacklog('backlog', db, n, k);
}

if (flags.db !== 'postgres') {
  const dir = await mkdtemp(path.join(tmpdir(), 'flowdesk-bus-bench-'));
  const lite = await openDatabase({ kind: 'pglite', dataDir: dir });
  await run('PGlite (data folder on disk)', lite);
  await lite.close();
  await rm(dir, { recursive: true, force: true });
}

if (flags.db === 'pglite') {
  // PGlite only
} else if (process.env.DATABASE_URL) {
  const pgdb = await createTestDatabase();
  await run('Postgres', pgdb.db);
  await pgdb.close();
} else {
  console.log('Postgres: skipped (set DATABASE_URL=postgres://... to include it)');
}
