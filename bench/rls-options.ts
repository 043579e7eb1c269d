// How to run one user's statement under row-level security, measured at the driver (no HTTP): the
// options weighed for libs/db's executor (docs/data-and-rls.md). Postgres only (DATABASE_URL).
//   DATABASE_URL=postgres://... npm run bench:rls -- [queries=4000] [concurrency=16]
// Per option: queries/s, this process's CPU per query and the Postgres backends' CPU per query (both
// from /proc, so the figures hold on a loaded machine).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { CONTEXT_SQL, createTestDatabase, withUser } from '@flowdesk/db';
import { createPrismaClient, migrateWorkspace } from '@flowdesk/workspace-api';

const total = Number(process.argv[2] ?? 4000);
const concurrency = Number(process.argv[3] ?? 16);
if (!process.env.DATABASE_URL) throw new Error('bench/rls-options.ts needs DATABASE_URL (Postgres)');

const test = await createTestDatabase();
await migrateWorkspace(test.db);
const prisma = createPrismaClient(test.db);
const users = Array.from({ length: 8 }, () => randomUUID());
const now = new Date();
for (const u of users) {
  await test.db.queryAsUser(
    u,
    `INSERT INTO workspace.task (id, owner_id, title, tags, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'task ' || g, ARRAY['bench'], $2::timestamptz - g * interval '1 second', $2 FROM generate_series(1, 50) g`,
    [u, now],
  );
}

const COLUMNS = `id, owner_id, project_id, title, notes, status, priority, due_date::text AS due_date, tags, completed_at, created_at, updated_at`;
const LIST = `SELECT ${COLUMNS} FROM workspace.task ORDER BY created_at DESC, id DESC LIMIT $1`;
const INSERT = `INSERT INTO workspace.task (id, owner_id, title, tags, created_at, updated_at) VALUES ($1, $2, $3, $4::text[], $5, $5) RETURNING ${COLUMNS}`;
const lit = pg.escapeLiteral;
const simpleContext = (u: string) => CONTEXT_SQL.replace('$1', lit(u));

const pipelinePool = new pg.Pool({ connectionString: test.url, max: 10, pipeline: true });
pipelinePool.on('error', () => {});
async function pipelined(u: string, text: string, values: unknown[]) {
  const c = await pipelinePool.connect();
  try {
    const [, , r] = await Promise.all([c.query('BEGIN'), c.query(CONTEXT_SQL, [u]), c.query(text, values), c.query('COMMIT')]);
    return r.rows;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}
const simplePool = new pg.Pool({ connectionString: test.url, max: 10 });
simplePool.on('error', () => {});
async function simple(text: string) {
  const r = (await simplePool.query(text)) as unknown as pg.QueryResult[];
  return r[r.length - 1]!.rows;
}

const ticks = (pid: number | 'self') => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const admin = new pg.Client({ connectionString: test.url });
await admin.connect();
/** CPU ticks of this database's backends by pid (a backend that exits takes its ticks along). */
async function backendTicks(): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  const out = new Map<number, number>();
  for (const r of rows) {
    try {
      out.set(r.pid, ticks(r.pid));
    } catch {
      // gone
    }
  }
  return out;
}
const ticksSince = (before: Map<number, number>, after: Map<number, number>) => {
  let sum = 0;
  for (const [pid, t] of after) sum += t - (before.get(pid) ?? 0);
  return sum;
};

type Op = (i: number) => Promise<unknown>;
async function measure(label: string, op: Op) {
  for (let i = 0; i < 200; i++) await op(i); // warm: connections, prepared statements, JIT
  const pg0 = await backendTicks();
  const self0 = ticks('self');
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await op(next++);
    }),
  );
  const s = (performance.now() - t0) / 1000;
  const self = ((ticks('self') - self0) * 10_000) / total; // ticks of 10 ms → µs per query
  const pgCpu = (ticksSince(pg0, await backendTicks()) * 10_000) / total;
  console.log(
    `${label.padEnd(48)} ${(total / s).toFixed(0).padStart(6)} q/s  client ${self.toFixed(0).padStart(4)} µs/q  postgres ${pgCpu.toFixed(0).padStart(4)} µs/q`,
  );
}

const u = (i: number) => users[i % users.length]!;
const newTask = (i: number) => [randomUUID(), u(i), `task ${i}`, ['bench'], new Date()];
console.log(`Postgres, ${total} queries per option, concurrency ${concurrency}, pool 10`);
await measure('list: Prisma interactive transaction', (i) =>
  withUser(prisma as never, u(i), (tx: any) => tx.task.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 26 })),
);
await measure('list: executor (extended, 1 round trip, prepared)', (i) => test.db.queryAsUser(u(i), LIST, [26]));
await measure('list: simple protocol, literals (1 round trip)', (i) => simple(`${simpleContext(u(i))}; ${LIST.replace('$1', '26')}`));
await measure('list: pg pipeline BEGIN/ctx/stmt/COMMIT', (i) => pipelined(u(i), LIST, [26]));
await measure('insert: Prisma interactive transaction', (i) =>
  withUser(prisma as never, u(i), (tx: any) => tx.task.create({ data: { ownerId: u(i), title: `task ${i}`, tags: ['bench'] } })),
);
await measure('insert: executor (extended, 1 round trip, prepared)', (i) => test.db.queryAsUser(u(i), INSERT, newTask(i)));
await measure('insert: simple protocol, literals (1 round trip)', (i) => {
  const [id, owner, title, , at] = newTask(i) as [string, string, string, string[], Date];
  return simple(
    `${simpleContext(owner)}; ${INSERT.replace('$1', lit(id))
      .replace('$2', lit(owner))
      .replace('$3', lit(title))
      .replace('$4', `ARRAY[${lit('bench')}]`)
      .replaceAll('$5', lit(at.toISOString()))}`,
  );
});
await measure('insert: pg pipeline BEGIN/ctx/stmt/COMMIT', (i) => pipelined(u(i), INSERT, newTask(i)));

await admin.end();
await pipelinePool.end();
await simplePool.end();
await prisma.$disconnect();
await test.close();
