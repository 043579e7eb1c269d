// A pooled connection must not remember who used it last: after user A's request (committed or
// failed), the very same connection acts as nobody until the next request says who it is. On Postgres
// the pool is cut to one connection so every step below provably runs on the connection A used; PGlite
// has a single connection by nature. Also: concurrent requests of different users stay apart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase, withUser, USER_STATEMENT_TIMEOUT, type Database } from '@flowdesk/db';
import { asUser, createPrismaClient, type PrismaClient, type Tx } from '../src/adapters/db.ts';
import { openTestWorkspace, type TestWorkspace } from './helpers/db.ts';

const userA = randomUUID();
const userB = randomUUID();

let ws: TestWorkspace;
/** The one-connection database and a client on it (on PGlite: the workspace's own). */
let single: Database;
let prisma1: PrismaClient;
let ownSingle = false;

interface Owned {
  projects: string[];
  tasks: string[];
  notes: string[];
}
const owned: Record<string, Owned> = {};

async function seed(prisma: PrismaClient, owner: string, n: number): Promise<Owned> {
  return asUser(prisma, owner, async (tx) => {
    const out: Owned = { projects: [], tasks: [], notes: [] };
    for (let i = 0; i < n; i++) {
      const p = await tx.project.create({ data: { ownerId: owner, name: `p${i}` } });
      out.projects.push(p.id);
      out.tasks.push((await tx.task.create({ data: { ownerId: owner, projectId: p.id, title: `t${i}` } })).id);
      out.notes.push((await tx.note.create({ data: { ownerId: owner, projectId: p.id, title: `n${i}` } })).id);
    }
    for (const list of Object.values(out) as string[][]) list.sort();
    return out;
  });
}

/** What a transaction can see, by id, in the tables seeded above. */
async function snapshot(tx: Tx): Promise<Owned> {
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();
  return {
    projects: ids(await tx.project.findMany({ select: { id: true } })),
    tasks: ids(await tx.task.findMany({ select: { id: true } })),
    notes: ids(await tx.note.findMany({ select: { id: true } })),
  };
}

const NOTHING: Owned = { projects: [], tasks: [], notes: [] };

async function backendPid(tx: Tx): Promise<number> {
  const rows = await tx.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  return Number(rows[0]!.pid);
}

/** The state of the (only) connection, outside any transaction. */
async function connectionState(): Promise<{ pid: number; userId: string | null; role: string }> {
  const { rows } = await single.exec(`SELECT pg_backend_pid() AS pid, current_setting('app.user_id', true) AS user_id, current_user AS role`);
  const r = rows[0]!;
  return { pid: Number(r.pid), userId: (r.user_id as string | null) ?? null, role: String(r.role) };
}

/** The connection acts as nobody: no user id, not the app role, and it is the connection A used. */
async function assertActsAsNobody(pidOfA: number): Promise<void> {
  const state = await connectionState();
  assert.equal(state.pid, pidOfA, 'the check runs on the connection A used');
  assert.ok(state.userId === null || state.userId === '', `app.user_id is gone, got ${String(state.userId)}`);
  assert.notEqual(state.role, 'flowdesk_app', 'the connection is back to its login role');

  // B on the same connection sees only B's rows.
  const asB = await asUser(prisma1, userB, async (tx) => ({ pid: await backendPid(tx), seen: await snapshot(tx) }));
  assert.equal(asB.pid, pidOfA, 'B is served by the connection A used');
  assert.deepEqual(asB.seen, owned[userB], 'B sees exactly their own rows, none of A’s');

  // A transaction as the app role that names no user sees nothing at all.
  const anonymous = await prisma1.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(`SELECT set_config('role', 'flowdesk_app', true)`);
    return {
      pid: await backendPid(tx),
      seen: await snapshot(tx),
      userId: await tx.$queryRaw<{ u: string | null }[]>`SELECT current_setting('app.user_id', true) AS u`,
    };
  });
  assert.equal(anonymous.pid, pidOfA);
  assert.deepEqual(anonymous.seen, NOTHING, 'no user set: no rows');
  assert.ok(!anonymous.userId[0]?.u, 'no user id leaked into the next transaction');
}

before(async () => {
  ws = await openTestWorkspace();
  if (ws.url) {
    single = await openDatabase({ kind: 'postgres', url: ws.url, poolMax: 1 });
    prisma1 = createPrismaClient(single);
    ownSingle = true;
  } else {
    single = ws.db;
    prisma1 = ws.prisma;
  }
  owned[userA] = await seed(ws.prisma, userA, 3);
  owned[userB] = await seed(ws.prisma, userB, 2);
});

after(async () => {
  if (ownSingle) {
    await prisma1.$disconnect().catch(() => {});
    await single.close();
  }
  await ws?.close();
});

describe('a connection reused after A’s request does not act as A', () => {
  test('after a committed request of A', async () => {
    const done = await asUser(prisma1, userA, async (tx) => {
      const [who] = await tx.$queryRaw<{ u: string; role: string }[]>`SELECT current_setting('app.user_id') AS u, current_user AS role`;
      return { pid: await backendPid(tx), seen: await snapshot(tx), who };
    });
    // The request itself did act as A, so what follows checks that this was undone.
    assert.deepEqual(done.who, { u: userA, role: 'flowdesk_app' });
    assert.deepEqual(done.seen, owned[userA]);
    await assertActsAsNobody(done.pid);
  });

  test('after a request of A that wrote and then threw', async () => {
    let pid = -1;
    const boom = new Error('request failed half way');
    await assert.rejects(
      asUser(prisma1, userA, async (tx) => {
        pid = await backendPid(tx);
        await tx.project.create({ data: { ownerId: userA, name: 'doomed' } });
        throw boom;
      }),
      (e) => e === boom,
      'the caller gets the request’s own error',
    );
    assert.notEqual(pid, -1);
    const asA = await asUser(prisma1, userA, (tx) => tx.project.findMany({ where: { name: 'doomed' } }));
    assert.deepEqual(asA, [], 'the write of the failed request was rolled back');
    await assertActsAsNobody(pid);
  });

  test('after a request of A that the database refused mid-way', async () => {
    let pid = -1;
    await assert.rejects(
      asUser(prisma1, userA, async (tx) => {
        pid = await backendPid(tx);
        await tx.note.create({ data: { ownerId: userA, title: 'doomed' } });
        // Ends before it starts: the CHECK constraint aborts the transaction.
        await tx.calendarEntry.create({
          data: { ownerId: userA, title: 'bad', startsAt: new Date('2026-01-02T00:00:00Z'), endsAt: new Date('2026-01-01T00:00:00Z') },
        });
      }),
      /calendar_entry_ends_after_start|constraint/i,
    );
    assert.notEqual(pid, -1);
    assert.deepEqual(await asUser(prisma1, userA, (tx) => tx.note.findMany({ where: { title: 'doomed' } })), []);
    await assertActsAsNobody(pid);
  });

  test('after a request of A that ran past its time limit', async () => {
    let pid = -1;
    await assert.rejects(
      withUser<Tx, unknown>(
        prisma1,
        userA,
        async (tx) => {
          pid = await backendPid(tx);
          await tx.project.create({ data: { ownerId: userA, name: 'too late' } });
          await sleep(1000);
          return tx.project.findMany();
        },
        { timeoutMs: 500 },
      ),
      (e) => (e as { code?: string }).code === 'P2028',
      'the request fails as an expired transaction',
    );
    assert.notEqual(pid, -1);
    assert.deepEqual(
      await asUser(prisma1, userA, (tx) => tx.project.findMany({ where: { name: 'too late' } })),
      [],
      'the write made before the time ran out was rolled back',
    );
    await assertActsAsNobody(pid);
  });
});

test('20 interleaved requests of A and B each see only their own rows', async () => {
  let open = 0;
  let maxOpen = 0;
  const users = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? userB : userA));
  const results = await Promise.all(
    users.map((user, i) =>
      asUser(ws.prisma, user, async (tx) => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        try {
          const first = await snapshot(tx);
          await sleep((i * 7) % 15); // let the others run in between
          const [who] = await tx.$queryRaw<{ u: string }[]>`SELECT current_setting('app.user_id') AS u`;
          const count = await tx.task.count();
          await sleep((i * 5) % 11);
          const second = await snapshot(tx);
          return { user, first, second, who: who?.u, count };
        } finally {
          open--;
        }
      }),
    ),
  );
  for (const r of results) {
    const mine = owned[r.user]!;
    assert.equal(r.who, r.user, 'each transaction carries its own user id');
    assert.deepEqual(r.first, mine, 'first read: own rows only');
    assert.deepEqual(r.second, mine, 'second read, after others ran: own rows only');
    assert.equal(r.count, mine.tasks.length);
  }
  if (ws.db.kind === 'postgres') assert.ok(maxOpen > 1, `requests really overlapped (at most ${maxOpen} at once)`);
});

// The same for libs/db's one-round-trip executor (db.queryAsUser): its context lives in the implicit
// transaction of one protocol round, so the connection keeps nothing, whatever the statement did.
describe('the row-level-security executor on a one-connection pool', () => {
  const SNAPSHOT = `SELECT pg_backend_pid() AS pid,
    (SELECT coalesce(array_agg(id::text ORDER BY id), '{}') FROM workspace.project) AS projects,
    (SELECT coalesce(array_agg(id::text ORDER BY id), '{}') FROM workspace.task) AS tasks,
    (SELECT coalesce(array_agg(id::text ORDER BY id), '{}') FROM workspace.note) AS notes`;
  const run = async (user: string) => {
    const [r] = await single.queryAsUser<{ pid: number } & Owned>(user, SNAPSHOT);
    return { pid: Number(r!.pid), seen: { projects: r!.projects, tasks: r!.tasks, notes: r!.notes } };
  };
  /** Two statements outside any user: if a transaction were left open they would share its id. */
  async function assertCleanConnection(pid: number) {
    const first = await connectionState();
    assert.equal(first.pid, pid, 'the check runs on the connection the user had');
    assert.ok(first.userId === null || first.userId === '', `app.user_id is gone, got ${String(first.userId)}`);
    assert.notEqual(first.role, 'flowdesk_app', 'back to the login role');
    const [x1, x2] = [await single.exec('SELECT txid_current() AS x'), await single.exec('SELECT txid_current() AS x')];
    assert.notEqual(String(x1.rows[0]!.x), String(x2.rows[0]!.x), 'no transaction was left open');
  }

  test('user A then user B: B never sees A’s rows, and the connection keeps no user', async () => {
    const asA = await run(userA);
    assert.deepEqual(asA.seen, owned[userA]);
    await assertCleanConnection(asA.pid);
    const asB = await run(userB);
    assert.equal(asB.pid, asA.pid, 'B is served by the connection A used');
    assert.deepEqual(asB.seen, owned[userB], 'B sees exactly their own rows, none of A’s');
    await assertCleanConnection(asB.pid);
  });

  test('a failed statement leaves no context, no open transaction and none of its writes', async () => {
    const { pid } = await run(userA);
    const failures: [string, string, unknown[]][] = [
      // writes a row, then the CHECK constraint fails the same statement
      [
        'constraint',
        `WITH p AS (INSERT INTO workspace.project (id, owner_id, name, updated_at) VALUES (gen_random_uuid(), $1, 'doomed', now()) RETURNING id)
         INSERT INTO workspace.calendar_entry (id, owner_id, title, starts_at, ends_at, updated_at)
         SELECT gen_random_uuid(), $1, 'bad', '2026-01-02', '2026-01-01', now() FROM p`,
        [userA],
      ],
      ['row-level security', `INSERT INTO workspace.project (id, owner_id, name, updated_at) VALUES (gen_random_uuid(), $1, 'doomed', now())`, [userB]],
      ['bad value', `SELECT id FROM workspace.task WHERE id = $1::uuid`, ['not-a-uuid']],
      ['syntax', `SELEC id FROM workspace.task`, []],
    ];
    for (const [why, sql, values] of failures) {
      await assert.rejects(single.queryAsUser(userA, sql, values), (e: Error & { severity?: string }) => !!e.severity, why);
      await assertCleanConnection(pid);
    }
    assert.deepEqual(await single.queryAsUser(userA, `SELECT id FROM workspace.project WHERE name = 'doomed'`), [], 'nothing of the failed writes remains');
    const asB = await run(userB);
    assert.equal(asB.pid, pid);
    assert.deepEqual(asB.seen, owned[userB], 'B after A’s failures: only B’s rows');
  });

  test('a value the driver cannot send fails the call, and the next user gets a clean connection', async (t) => {
    if (single.kind !== 'postgres') return t.skip('pg driver path (PGlite maps values itself)');
    const unsendable = {
      toPostgres: () => {
        throw new Error('cannot be sent');
      },
    };
    await assert.rejects(single.queryAsUser(userA, 'SELECT id FROM workspace.task WHERE title = $1', [unsendable]), /cannot be sent/);
    const asB = await run(userB);
    assert.deepEqual(asB.seen, owned[userB], 'B sees exactly their own rows');
    await assertCleanConnection(asB.pid);
  });

  test('each statement has a time limit of its own, gone from the connection afterwards', async () => {
    const [inside] = await single.queryAsUser<{ limit: string; pid: number }>(
      userA,
      `SELECT current_setting('statement_timeout') AS limit, pg_backend_pid() AS pid`,
    );
    assert.equal(inside?.limit, USER_STATEMENT_TIMEOUT);
    const { rows } = await single.exec(`SELECT current_setting('statement_timeout') AS limit`);
    assert.notEqual(rows[0]!.limit, USER_STATEMENT_TIMEOUT, 'the limit was transaction-local');
    await assertCleanConnection(Number(inside.pid));
  });

  test('20 interleaved statements of A and B each see only their own rows', async () => {
    const users = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? userB : userA));
    const results = await Promise.all(users.map(async (user) => ({ user, ...(await ws.db.queryAsUser<Owned>(user, SNAPSHOT))[0]! })));
    for (const r of results) assert.deepEqual({ projects: r.projects, tasks: r.tasks, notes: r.notes }, owned[r.user]);
  });
});
