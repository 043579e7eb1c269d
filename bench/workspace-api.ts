// workspace-api against a plain-pg floor of the same queries, each server in its own process, the load
// generator (autocannon) in a third. Every request goes through row-level security.
//   npm run bench:api                       (DATABASE_URL=postgres://... for Postgres; default PGlite)
// BENCH_SECONDS per measurement (5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (16),
// BENCH_OLD_APP=<path to another workspace-api's src/index.ts> to measure an older build beside the
// current one, e.g. `git worktree add ../old cf470bc && (cd ../old && npm ci && npm run generate)`,
// then BENCH_OLD_APP=$PWD/../old/services/workspace-api/src/index.ts (the README's "before").
//
// The floor is the least a server can do for the same work: a bare fastify route, a cached token
// verification, and the same SQL statement through the same one-round-trip executor (libs/db
// queryAsUser over one pg pool), rows sent as they come. The ratio workspace-api / floor is what the
// service's own layers cost (validation, auth hooks, mapping, response schemas).
//
// Printed per measurement: req/s, p50/p99, and CPU per request of the server's process (from
// /proc/<pid>/stat) and of the Postgres backends of the bench database (summed from /proc, by the pids
// pg_stat_activity lists) — CPU per request holds on a loaded machine where req/s does not. Servers
// are measured alternately, round after round; ratios are medians of the per-round ratios.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const role = process.argv[2];
const SELF = fileURLToPath(import.meta.url);
const USERS = 8;
const TASKS_PER_USER = 100;

type Message = Record<string, unknown>;
const send = (m: Message) => process.send!(m);

/** Each user's tasks, so that GET /tasks reads a full page. */
async function seed(db: import('@flowdesk/db').Database, users: string[]) {
  for (const u of users) {
    await db.queryAsUser(
      u,
      `INSERT INTO workspace.task (id, owner_id, title, tags, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'task ' || g, ARRAY['bench'], now() - g * interval '1 second', now() FROM generate_series(1, ${TASKS_PER_USER}) g`,
      [u],
    );
  }
}

/** The database a server child uses: the bench's Postgres database, or its own seeded PGlite. */
async function childDatabase(migrate: (db: import('@flowdesk/db').Database) => Promise<unknown>) {
  const { openDatabase } = await import('@flowdesk/db');
  const url = process.env.BENCH_DB_URL;
  if (url) return openDatabase({ kind: 'postgres', url });
  const db = await openDatabase({ kind: 'pglite' });
  await migrate(db);
  await seed(db, JSON.parse(process.env.BENCH_USERS!) as string[]);
  return db;
}

if (role === 'server') {
  // workspace-api as it runs in production: buildApp on a pg pool, silent logs.
  const { listen } = await import('@flowdesk/service-kit');
  const mod = (await import(process.env.BENCH_APP ?? '@flowdesk/workspace-api')) as typeof import('@flowdesk/workspace-api');
  const db = await childDatabase(mod.migrateWorkspace);
  const app = await mod.buildApp({
    db,
    jwtPublicKeyPem: process.env.BENCH_PUBLIC_KEY!,
    webhookSecretKey: randomBytes(32),
    publicBaseUrl: 'http://bench',
    logLevel: 'silent',
  });
  send({ url: await listen(app, 0, '127.0.0.1') });
} else if (role === 'floor') {
  const Fastify = (await import('fastify')).default;
  const { createVerifier } = await import('fast-jwt');
  const { migrateWorkspace } = await import('@flowdesk/workspace-api');
  const { TaskStore } = await import('../services/workspace-api/src/adapters/sql.ts');
  const db = await childDatabase(migrateWorkspace);
  const tasks = new TaskStore(db.queryAsUser);
  const verify = createVerifier({ key: process.env.BENCH_PUBLIC_KEY!, algorithms: ['EdDSA'], allowedAud: 'workspace-api', cache: true });
  const app = Fastify();
  const userOf = (auth: string | undefined) => (verify(String(auth).slice(7)) as { sub: string }).sub;
  app.get('/api/v1/tasks', async (req) => {
    const rows = await tasks.list(userOf(req.headers.authorization), {}, new Date(), { sort: 'created_desc', take: 26 });
    return { items: rows.slice(0, 25), nextCursor: null };
  });
  app.post('/api/v1/tasks', async (req, reply) => {
    const body = req.body as { title: string; tags?: string[] };
    return reply.code(201).send(await tasks.create(userOf(req.headers.authorization), { title: body.title, tags: body.tags }, new Date()));
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  send({ url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` });
} else if (role === 'load') {
  const autocannon = (await import('autocannon')).default;
  process.on('message', async (job: { url: string; requests: import('autocannon').Request[]; connections: number; duration: number }) => {
    const r = await autocannon({ url: job.url, requests: job.requests, connections: job.connections, duration: job.duration });
    send({ rps: r.requests.average, total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, bad: r.non2xx + r.errors });
  });
  send({ ready: true });
} else {
  await orchestrate();
}

async function orchestrate() {
  const pg = (await import('pg')).default;
  const { createTestDatabase } = await import('@flowdesk/db');
  const { generateSigningKeys, signInternalToken } = await import('@flowdesk/service-kit');
  const { migrateWorkspace } = await import('@flowdesk/workspace-api');
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);

  const keys = generateSigningKeys();
  const users = Array.from({ length: USERS }, () => randomUUID());
  const tokens = users.map((sub) => signInternalToken(keys, { sub, aud: 'workspace-api', scope: 'mcp:read mcp:write' }, { ttlSeconds: 3600 }));

  // Postgres: one database for all servers (seeded here); PGlite: each server seeds its own.
  const test = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  if (test) {
    await migrateWorkspace(test.db);
    await seed(test.db, users);
  }
  const admin = test ? new pg.Client({ connectionString: test.url }) : undefined;
  await admin?.connect();

  const children: ChildProcess[] = [];
  const start = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ child: ChildProcess; first: Message }>((resolve, reject) => {
      const child = fork(SELF, args, {
        execArgv: ['--conditions=source', '--import', 'tsx'],
        env: { ...process.env, BENCH_PUBLIC_KEY: keys.publicKeyPem, BENCH_USERS: JSON.stringify(users), ...(test ? { BENCH_DB_URL: test.url! } : {}), ...env },
      });
      children.push(child);
      child.once('message', (first: Message) => resolve({ child, first }));
      child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
    });
  const stopAll = () => children.forEach((c) => c.kill());
  process.on('exit', stopAll);

  interface Server {
    label: string;
    url: string;
    pid: number;
  }
  const servers: Server[] = [];
  const boot = async (label: string, args: string[], env?: Record<string, string>) => {
    const { child, first } = await start(args, env);
    servers.push({ label, url: String(first.url), pid: child.pid! });
  };
  await boot('workspace-api', ['server']);
  if (process.env.BENCH_OLD_APP) await boot('workspace-api (old)', ['server'], { BENCH_APP: process.env.BENCH_OLD_APP });
  const FLOOR = test ? 'floor (plain pg)' : 'floor (PGlite)';
  await boot(FLOOR, ['floor']);
  const { child: loader } = await start(['load']);

  const ticks = (pid: number) => {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  /** CPU ticks of the bench database's backends, by pid (a backend that exits takes its ticks along). */
  const backends = async (): Promise<Map<number, number>> => {
    const out = new Map<number, number>();
    if (!admin) return out;
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    for (const { pid } of rows) {
      try {
        out.set(pid, ticks(pid));
      } catch {
        // gone meanwhile
      }
    }
    return out;
  };

  interface Endpoint {
    label: string;
    requests: (server: Server) => { method: string; path: string; headers: Record<string, string>; body?: string }[];
  }
  const endpoints: Endpoint[] = [
    { label: 'GET /tasks', requests: () => tokens.map((t) => ({ method: 'GET', path: '/api/v1/tasks?limit=25', headers: { authorization: `Bearer ${t}` } })) },
    {
      label: 'POST /tasks',
      requests: () =>
        tokens.map((t, i) => ({
          method: 'POST',
          path: '/api/v1/tasks',
          headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' },
          body: JSON.stringify({ title: `bench task of user ${i}`, tags: ['bench'] }),
        })),
    },
  ];

  interface Result {
    rps: number;
    p50: number;
    p99: number;
    serverUs: number;
    pgUs: number;
  }
  const load = async (server: Server, endpoint: Endpoint, duration: number): Promise<Result> => {
    const t0 = ticks(server.pid);
    const b0 = await backends();
    const done = new Promise<Message>((resolve) => loader.once('message', resolve));
    loader.send({ url: server.url, requests: endpoint.requests(server), connections, duration });
    const r = (await done) as { rps: number; total: number; p50: number; p99: number; bad: number };
    const b1 = await backends();
    if (r.bad > 0) throw new Error(`${server.label} ${endpoint.label}: ${r.bad} failed requests`);
    let pgTicks = 0;
    for (const [pid, t] of b1) pgTicks += t - (b0.get(pid) ?? 0);
    // A tick is 10 ms (USER_HZ 100): µs per request = ticks × 10,000 / requests.
    return { rps: r.rps, p50: r.p50, p99: r.p99, serverUs: ((ticks(server.pid) - t0) * 10_000) / r.total, pgUs: (pgTicks * 10_000) / r.total };
  };
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const fmt = (r: Result) =>
    `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${String(r.p50).padStart(3)} ms  p99 ${String(r.p99).padStart(3)} ms  server ${r.serverUs.toFixed(0).padStart(5)} µs/req` +
    (admin ? `  postgres ${r.pgUs.toFixed(0).padStart(4)} µs/req` : '');

  console.log(
    `workspace-api vs plain-pg floor on ${test ? 'Postgres' : 'PGlite (one per server process; no Postgres CPU)'}, ${connections} connections, ` +
      `${rounds} alternating rounds of ${seconds} s, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  const summary: string[] = [];
  for (const endpoint of endpoints) {
    for (const s of servers) await load(s, endpoint, 2); // warm-up: JIT, pool, prepared statements
    const results = new Map<string, Result[]>(servers.map((s) => [s.label, []]));
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 ? servers : [...servers].reverse();
      for (const s of order) {
        const r = await load(s, endpoint, seconds);
        results.get(s.label)!.push(r);
        console.log(`  ${endpoint.label.padEnd(12)} round ${round}  ${s.label.padEnd(20)} ${fmt(r)}`);
      }
    }
    const floor = results.get(FLOOR)!;
    for (const s of servers) {
      const rs = results.get(s.label)!;
      const med: Result = {
        rps: median(rs.map((r) => r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
        serverUs: median(rs.map((r) => r.serverUs)),
        pgUs: median(rs.map((r) => r.pgUs)),
      };
      // req/s ratio (the target), and the same from CPU per request (server + Postgres), which a
      // loaded machine disturbs less: floor CPU / server CPU.
      const cpu = (r: Result) => r.serverUs + r.pgUs;
      const ratio =
        s.label === FLOOR
          ? ''
          : `  ratio to floor ${median(rs.map((r, i) => r.rps / floor[i]!.rps)).toFixed(2)} (by CPU ${median(rs.map((r, i) => cpu(floor[i]!) / cpu(r))).toFixed(2)})`;
      summary.push(`${endpoint.label.padEnd(12)} ${s.label.padEnd(20)} ${fmt(med)}${ratio}`);
    }
  }
  console.log('medians:');
  for (const line of summary) console.log(`  ${line}`);

  stopAll();
  await admin?.end();
  await test?.close();
}
