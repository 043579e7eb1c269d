// bench:idle — what `npm start` costs when there is nothing to do (issue 40: ≤ 5 ms/s). Starts the
// embedded start (bench/flowdesk-child.ts) on a fresh Postgres database on the DATABASE_URL server
// (default postgres://postgres@127.0.0.1:5432/postgres), waits until it answers and printed its
// banner, lets it settle, then measures --seconds (default 60) of CPU: the process tree (utime +
// stime from /proc/<pid>/stat) plus the database's Postgres backends (the pids pg_stat_activity lists
// for that datname, looked up once a second from another database, and the backends whose process
// title names it). Prints ms of CPU per second of wall time and the statements the database ran.
//
//   npm run bench:idle -- [--seconds 60] [--settle 5]
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startFlowdeskChild } from './flowdesk-child.ts';
import { postgresCpu, processTreeCpu, sleep } from './stack.ts';

const TARGET_MS_PER_S = 5;
const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    settle: { type: 'string', default: '5' },
  },
});
const SECONDS = Number(args.seconds);
const SETTLE = Number(args.settle);
if (!(SECONDS > 0) || !(SETTLE >= 0)) throw new Error('--seconds must be > 0 and --settle ≥ 0');
const SERVER = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const database = `bench_idle_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const dbUrl = (() => {
  const u = new URL(SERVER);
  u.pathname = `/${database}`;
  return u.toString();
})();
// The bench's own connection is to the server's database, not the measured one (not counted).
const admin = new pg.Client({ connectionString: SERVER });
await admin.connect();
await admin.query(`CREATE DATABASE "${database}"`);

const cleanups: (() => Promise<unknown>)[] = [];
const cleanup = async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch((err) => console.error(`cleanup: ${(err as Error).message}`));
  await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
  await admin.end().catch(() => undefined);
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

try {
  const startedAt = Date.now();
  const fd = await startFlowdeskChild({ env: { DATABASE_URL: dbUrl } });
  cleanups.push(() => fd.close());
  const upS = (Date.now() - startedAt) / 1000;
  const bannerTime = /Started in ([\d.]+ s)/.exec(fd.output())?.[1];
  console.log(
    `bench:idle: npm start on Postgres (fresh database ${database}); up in ${upS.toFixed(1)} s${bannerTime ? ` (banner: ${bannerTime})` : ''}; ` +
      `settle ${SETTLE} s, measure ${SECONDS} s; load average ${loadavg()[0]!.toFixed(2)} (${availableParallelism()} cores)`,
  );
  await sleep(SETTLE * 1000);

  let backends = new Set<number>();
  const lookUp = async () => {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
    backends = new Set(rows.map((r) => r.pid));
  };
  const statements = async () => {
    const { rows } = await admin.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [database]);
    return Number(rows[0]?.n ?? 0);
  };
  await lookUp();
  const lookUps = setInterval(() => void lookUp().catch(() => undefined), 1_000);
  const tree = processTreeCpu(fd.child.pid!);
  const pgCpu = postgresCpu(database, () => backends);
  const tx0 = await statements();
  const t0 = performance.now();
  tree.start();
  pgCpu.start();
  await sleep(SECONDS * 1000);
  const treeMs = tree.stop();
  const pgMs = pgCpu.stop();
  const wall = (performance.now() - t0) / 1000;
  clearInterval(lookUps);
  // pg_stat_database is updated when a backend's transaction ends (with a short delay): a close look.
  const tx = (await statements()) - tx0;
  if (fd.exited()) throw new Error(`Flowdesk exited during the measurement: ${fd.output()}`);
  const total = (treeMs + pgMs) / wall;
  console.log(
    `idle ${wall.toFixed(1)} s: process tree ${(treeMs / wall).toFixed(1)} ms/s + Postgres ${(pgMs / wall).toFixed(1)} ms/s ` +
      `(${backends.size} backends) = ${total.toFixed(1)} ms/s; ${(tx / wall).toFixed(1)} transactions/s`,
  );
  console.log(`  target ≤ ${TARGET_MS_PER_S} ms/s: ${total <= TARGET_MS_PER_S ? 'met' : 'NOT met'}`);
} finally {
  await cleanup();
}
