// Row-level security, proven at the database through Prisma: whatever a request does while it acts as
// user A, user B's rows in every workspace table do not exist for it, cannot be changed, and cannot
// be created, pointed at or planted. Runs on PGlite (no DATABASE_URL) and on Postgres.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Prisma } from '../src/generated/prisma/client.ts';
import { asUser, type Tx } from '../src/adapters/db.ts';
import { openTestWorkspace, type TestWorkspace } from './helpers/db.ts';

type Row = { id: string; ownerId: string } & Record<string, unknown>;

/** The part of a Prisma model delegate these tests use, the same for every model. */
interface Delegate {
  findMany(args?: object): Promise<Row[]>;
  findUnique(args: object): Promise<Row | null>;
  findFirst(args?: object): Promise<Row | null>;
  count(args?: object): Promise<number>;
  create(args: object): Promise<Row>;
  createMany(args: object): Promise<{ count: number }>;
  update(args: object): Promise<Row>;
  updateMany(args: object): Promise<{ count: number }>;
  delete(args: object): Promise<Row>;
  deleteMany(args?: object): Promise<{ count: number }>;
}

/** One user's seeded rows, one per table; the ids their children point at. */
interface Seed {
  project: Row;
  task: Row;
  calendar_entry: Row;
  note: Row;
  workflow: Row;
  comment: Row;
  workflow_version: Row;
}

type Table = keyof Seed;

interface TableSpec {
  table: Table;
  model(tx: Tx): Delegate;
  /** Data for a new row owned by `ownerId`, its references (if any) pointing at `refs`. */
  data(ownerId: string, refs: Seed): Record<string, unknown>;
  /** A change any owner may make to their own row. */
  change: Record<string, unknown>;
}

const d = (m: unknown) => m as Delegate;

const TABLES: TableSpec[] = [
  {
    table: 'project',
    model: (tx) => d(tx.project),
    data: (ownerId) => ({ ownerId, name: `project of ${ownerId}` }),
    change: { name: 'renamed' },
  },
  {
    table: 'task',
    model: (tx) => d(tx.task),
    data: (ownerId, refs) => ({ ownerId, projectId: refs.project.id, title: 'task', tags: ['x'] }),
    change: { title: 'renamed', status: 'done' },
  },
  {
    table: 'calendar_entry',
    model: (tx) => d(tx.calendarEntry),
    data: (ownerId, refs) => ({
      ownerId,
      projectId: refs.project.id,
      title: 'meeting',
      startsAt: new Date('2026-03-01T09:00:00Z'),
      endsAt: new Date('2026-03-01T10:00:00Z'),
    }),
    change: { title: 'moved', location: 'elsewhere' },
  },
  {
    table: 'note',
    model: (tx) => d(tx.note),
    data: (ownerId, refs) => ({ ownerId, projectId: refs.project.id, title: 'note', content: 'secret content' }),
    change: { content: 'overwritten', pinned: true },
  },
  {
    table: 'workflow',
    model: (tx) => d(tx.workflow),
    data: (ownerId) => ({ ownerId, name: 'flow', triggerType: 'webhook', webhookSecretCipher: 'cipher' }),
    change: { active: true, name: 'renamed' },
  },
  {
    table: 'comment',
    model: (tx) => d(tx.comment),
    data: (ownerId, refs) => ({ ownerId, targetType: 'task', taskId: refs.task.id, body: 'secret comment' }),
    change: { body: 'overwritten' },
  },
  {
    table: 'workflow_version',
    model: (tx) => d(tx.workflowVersion),
    // Numbers are unique per workflow: each new row takes the next.
    data: (ownerId, refs) => ({ ownerId, workflowId: refs.workflow.id, number: ++versionNumber, definition: { name: 'flow' }, authorUserId: ownerId }),
    change: { message: 'overwritten' },
  },
];
let versionNumber = 0;

/** Tables with at most one row per user: outside the generic per-row suites, tested on their own below. */
const ONE_PER_USER = ['user_profile'];

/** Thrown to roll a transaction back while handing a value out of it. */
class RollBack extends Error {
  constructor(readonly value: unknown) {
    super('roll back');
  }
}

const spec = (table: Table) => TABLES.find((t) => t.table === table)!;

/** Creates one row per table for `owner`, parents first, as that owner. */
async function seed(ws: TestWorkspace, owner: string): Promise<Seed> {
  return asUser(ws.prisma, owner, async (tx) => {
    const rows = {} as Seed;
    for (const t of TABLES) rows[t.table] = await t.model(tx).create({ data: t.data(owner, rows) });
    return rows;
  });
}

/** Everything `user` can see in `table`, in a stable order. */
function visible(ws: TestWorkspace, user: string, table: Table): Promise<Row[]> {
  return asUser(ws.prisma, user, (tx) =>
    spec(table)
      .model(tx)
      .findMany({ orderBy: { id: 'asc' } }),
  );
}

/** The Prisma error code of a rejected request (fails the test if it did not reject). */
async function prismaCode(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof Prisma.PrismaClientKnownRequestError, `expected a Prisma known request error, got ${String(e)}`);
    // The last line is Prisma's description; the lines before it quote the calling source.
    return { code: e.code, message: e.message.trim().split('\n').at(-1)! };
  }
  assert.fail('expected the request to be refused');
}

const userA = randomUUID();
const userB = randomUUID();
let ws: TestWorkspace;
let a: Seed;
let b: Seed;

before(async () => {
  ws = await openTestWorkspace();
  a = await seed(ws, userA);
  b = await seed(ws, userB);
  // A second row per table for B, so "nothing of B's" is not just "the one row was missed".
  await seed(ws, userB);
});

after(async () => {
  await ws?.close();
});

for (const t of TABLES) {
  describe(`${t.table}: as user A, user B's rows`, () => {
    test('are not returned by findMany, findFirst, findUnique or count, while A sees exactly their own', async () => {
      const bAll = await visible(ws, userB, t.table);
      assert.equal(bAll.length, 2, 'B sees both of their own rows');

      const seen = await asUser(ws.prisma, userA, async (tx) => {
        const m = t.model(tx);
        return {
          all: await m.findMany(),
          byOwner: await m.findMany({ where: { ownerId: userB } }),
          byId: await m.findUnique({ where: { id: b[t.table].id } }),
          first: await m.findFirst({ where: { id: { in: bAll.map((r) => r.id) } } }),
          count: await m.count(),
        };
      });
      assert.deepEqual(
        seen.all.map((r) => r.id),
        [a[t.table].id],
        'A sees their own row and nothing else',
      );
      assert.deepEqual(seen.byOwner, [], "filtering on B's owner id finds nothing");
      assert.equal(seen.byId, null, "B's row by id does not exist for A");
      assert.equal(seen.first, null);
      assert.equal(seen.count, 1, 'count only counts A’s row');
    });

    test('cannot be changed or deleted: update/delete by id throw P2025, updateMany/deleteMany reach none of them, and B still has them unchanged', async () => {
      const before = await visible(ws, userB, t.table);
      const target = b[t.table].id;

      const upd = await prismaCode(asUser(ws.prisma, userA, (tx) => t.model(tx).update({ where: { id: target }, data: t.change })));
      assert.equal(upd.code, 'P2025', `update by id: ${upd.message}`);
      const del = await prismaCode(asUser(ws.prisma, userA, (tx) => t.model(tx).delete({ where: { id: target } })));
      assert.equal(del.code, 'P2025', `delete by id: ${del.message}`);

      const counts = await asUser(ws.prisma, userA, async (tx) => {
        const m = t.model(tx);
        return [
          (await m.updateMany({ where: { id: target }, data: t.change })).count,
          (await m.updateMany({ where: { ownerId: userB }, data: t.change })).count,
          (await m.deleteMany({ where: { id: target } })).count,
          (await m.deleteMany({ where: { ownerId: userB } })).count,
        ];
      });
      assert.deepEqual(counts, [0, 0, 0, 0], 'updateMany/deleteMany on B’s rows affect nothing');

      // Unfiltered, as in "mark all mine" or "delete all mine": only A's one row; rolled back after.
      const unfiltered = await asUser(ws.prisma, userA, async (tx) => {
        const m = t.model(tx);
        throw new RollBack([(await m.updateMany({ data: t.change })).count, (await m.deleteMany()).count]);
      }).catch((e: unknown) => {
        if (e instanceof RollBack) return e.value;
        throw e;
      });
      assert.deepEqual(unfiltered, [1, 1], 'updateMany/deleteMany without a filter reach A’s row only');

      assert.deepEqual(await visible(ws, userB, t.table), before, 'B’s rows are exactly as before');
    });

    test('cannot be planted: creating a row owned by B, or handing A’s row to B, is refused', async () => {
      const bBefore = await visible(ws, userB, t.table);
      const aBefore = await visible(ws, userA, t.table);

      // References point at B's parents so that only row-level security can be what refuses it.
      const create = await prismaCode(asUser(ws.prisma, userA, (tx) => t.model(tx).create({ data: t.data(userB, b) })));
      assert.match(create.message, /row-level security/, `create with B's owner id: ${create.code} ${create.message}`);

      // Also without RETURNING (createMany), where only the policy's WITH CHECK stands in the way.
      const createMany = await prismaCode(asUser(ws.prisma, userA, (tx) => t.model(tx).createMany({ data: [t.data(userB, b)] })));
      assert.match(createMany.message, /row-level security/, `createMany with B's owner id: ${createMany.code} ${createMany.message}`);

      const give = await prismaCode(asUser(ws.prisma, userA, (tx) => t.model(tx).update({ where: { id: a[t.table].id }, data: { ownerId: userB } })));
      assert.match(give.message, /row-level security/, `update owner to B: ${give.code} ${give.message}`);
      const giveMany = await prismaCode(asUser(ws.prisma, userA, (tx) => t.model(tx).updateMany({ where: { id: a[t.table].id }, data: { ownerId: userB } })));
      assert.match(giveMany.message, /row-level security/, `updateMany owner to B: ${giveMany.code} ${giveMany.message}`);

      assert.deepEqual(await visible(ws, userB, t.table), bBefore, 'B got no new or changed row');
      assert.deepEqual(await visible(ws, userA, t.table), aBefore, 'A still owns their row, unchanged');
    });
  });
}

describe('composite foreign keys: A cannot attach rows to B’s project or workflow', () => {
  /**
   * A's attempt to point at B's parent must fail exactly like pointing at an id that does not exist,
   * create nothing, and leave B's parent and children untouched.
   */
  async function refusedLikeMissing(table: Table, attempt: (tx: Tx, parentId: string) => Promise<unknown>, parentOfB: string): Promise<void> {
    const parentTable: Table = 'project';
    const aBefore = await visible(ws, userA, table);
    const bBefore = await visible(ws, userB, table);
    const bParent = await visible(ws, userB, parentTable);

    const onB = await prismaCode(asUser(ws.prisma, userA, (tx) => attempt(tx, parentOfB)));
    const onMissing = await prismaCode(asUser(ws.prisma, userA, (tx) => attempt(tx, randomUUID())));
    assert.equal(onB.code, 'P2003', `refused as a foreign key violation: ${onB.code} ${onB.message}`);
    assert.deepEqual(onB, onMissing, 'B’s id is indistinguishable from an id that does not exist');

    assert.deepEqual(await visible(ws, userA, table), aBefore, 'A got no new or changed row');
    assert.deepEqual(await visible(ws, userB, table), bBefore, 'B’s rows are unchanged');
    assert.deepEqual(await visible(ws, userB, parentTable), bParent, 'B’s parent rows are unchanged');
  }

  for (const table of ['task', 'calendar_entry', 'note'] as const) {
    test(`${table}: create or move into B’s project is refused and reveals nothing`, async () => {
      const t = spec(table);
      await refusedLikeMissing(table, (tx, projectId) => t.model(tx).create({ data: { ...t.data(userA, a), projectId } }), b.project.id);
      await refusedLikeMissing(table, (tx, projectId) => t.model(tx).update({ where: { id: a[table].id }, data: { projectId } }), b.project.id);
      await refusedLikeMissing(table, (tx, projectId) => t.model(tx).updateMany({ where: { ownerId: userA }, data: { projectId } }), b.project.id);
    });
  }
});

test('inside a transaction as the app role with no user set, no table has any row', async () => {
  for (const setup of [
    `SELECT set_config('role', 'flowdesk_app', true)`,
    `SELECT set_config('role', 'flowdesk_app', true), set_config('app.user_id', '', true)`,
  ]) {
    const seen = await ws.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(setup);
      const who = await tx.$queryRaw<{ role: string }[]>`SELECT current_user AS role`;
      assert.equal(who[0]?.role, 'flowdesk_app', 'the transaction does run as the app role');
      const out: Record<string, number> = {};
      for (const t of TABLES) out[t.table] = (await t.model(tx).findMany()).length;
      return out;
    });
    assert.deepEqual(seen, { project: 0, task: 0, calendar_entry: 0, note: 0, workflow: 0, comment: 0, workflow_version: 0 }, setup);
  }
  // The rows are there: as B, B's projects are visible.
  assert.ok((await visible(ws, userB, 'project')).length >= 2);
});

describe('database catalog', () => {
  test('the role flowdesk_app is neither superuser nor BYPASSRLS, and cannot log in', async () => {
    const { rows } = await ws.db.exec(`SELECT rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = 'flowdesk_app'`);
    assert.deepEqual(rows, [{ rolsuper: false, rolbypassrls: false, rolcanlogin: false }]);
  });

  test('every workspace table has row-level security enabled and forced, with the single owner_only policy for everyone', async () => {
    const { rows } = await ws.db.exec(
      `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
              (SELECT array_agg(format('%s %s USING %s WITH CHECK %s TO %s', p.polname, p.polcmd,
                        pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid),
                        (SELECT coalesce(string_agg(r.rolname, ','), 'public') FROM pg_roles r WHERE r.oid = ANY (p.polroles)))
                      ORDER BY p.polname)
                 FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'workspace' AND c.relkind IN ('r', 'p') AND c.relname NOT IN ('_prisma_migrations', 'outbox')
        ORDER BY c.relname`,
    );
    // The outbox is service bookkeeping, not user data: requests may append to it, never read it.
    await assert.rejects(
      asUser(ws.prisma, randomUUID(), (tx) => tx.$queryRawUnsafe('SELECT value FROM "workspace"."outbox"')),
      /permission denied/,
      'the app role cannot read the outbox',
    );
    assert.deepEqual(
      rows.map((r) => r.relname),
      [...TABLES.map((t) => t.table), ...ONE_PER_USER].sort(),
      'the tables under test are all the tables of the schema',
    );
    for (const r of rows) {
      assert.equal(r.relrowsecurity, true, `${String(r.relname)}: ENABLE ROW LEVEL SECURITY`);
      assert.equal(r.relforcerowsecurity, true, `${String(r.relname)}: FORCE ROW LEVEL SECURITY`);
      assert.deepEqual(
        r.policies,
        [
          'owner_only * USING (owner_id = workspace.current_user_id()) WITH CHECK (owner_id = workspace.current_user_id()) TO public',
          // The one exception: the trigger-reader role (no other grants) may SELECT workflows, for
          // webhook-ingest's lookup by id; column grants limit it to the trigger's columns.
          // Likewise the definition reader (the engine's and ingest's cold start), on the definition's columns.
          ...(r.relname === 'workflow'
            ? ['trigger_lookup r USING true WITH CHECK  TO flowdesk_trigger_reader', 'definition_reader r USING true WITH CHECK  TO flowdesk_definition_reader']
            : []),
        ].sort(),
        `${String(r.relname)}: one policy, for all commands, reading and writing only the current user's rows`,
      );
    }
  });

  test('the app role cannot read the migrations table', async () => {
    const { rows } = await ws.db.exec(`SELECT has_table_privilege('flowdesk_app', 'workspace._prisma_migrations', 'SELECT') AS can_read`);
    assert.deepEqual(rows, [{ can_read: false }]);
  });
});

test("user_profile: A can neither see, change nor plant B's profile, nor point theirs at B's project", async () => {
  const ws = await openTestWorkspace();
  try {
    const [a, b] = [randomUUID(), randomUUID()];
    const bProject = await asUser(ws.prisma, b, (tx) => tx.project.create({ data: { ownerId: b, name: 'B' } }));
    await asUser(ws.prisma, b, (tx) => tx.userProfile.create({ data: { ownerId: b, displayName: 'secret name' } }));
    assert.equal(await asUser(ws.prisma, a, (tx) => tx.userProfile.count()), 0);
    assert.equal(await asUser(ws.prisma, a, (tx) => tx.userProfile.findUnique({ where: { ownerId: b } })), null);
    const changed = await asUser(ws.prisma, a, (tx) => tx.userProfile.updateMany({ where: { ownerId: b }, data: { displayName: 'x' } }));
    assert.equal(changed.count, 0);
    await assert.rejects(asUser(ws.prisma, a, (tx) => tx.userProfile.create({ data: { ownerId: b, displayName: 'planted' } })));
    await assert.rejects(asUser(ws.prisma, a, (tx) => tx.userProfile.create({ data: { ownerId: a, defaultProjectId: bProject.id } })));
    const mine = await asUser(ws.prisma, b, (tx) => tx.userProfile.findUnique({ where: { ownerId: b } }));
    assert.equal(mine?.displayName, 'secret name');
  } finally {
    await ws.close();
  }
});

// The same guarantees through libs/db's one-round-trip executor (db.queryAsUser), which the hot
// routes use instead of Prisma: plain SQL as user A against the rows seeded above.
describe('through the row-level-security executor (db.queryAsUser), as user A, user B’s rows', () => {
  const q = <R = Record<string, unknown>>(user: string, sql: string, values?: unknown[]) => ws.db.queryAsUser<R>(user, sql, values);
  const ids = (rows: { id: unknown }[]) => rows.map((r) => String(r.id)).sort();

  for (const t of TABLES) {
    test(`${t.table}: invisible, unchangeable, and cannot be planted`, async () => {
      const table = `workspace.${t.table}`;
      const bBefore = await visible(ws, userB, t.table);
      assert.deepEqual(ids(await q<{ id: string }>(userA, `SELECT id FROM ${table}`)), [a[t.table].id], 'A sees their own row only');
      assert.deepEqual(await q(userA, `SELECT id FROM ${table} WHERE owner_id = $1`, [userB]), [], 'filtering on B’s owner id finds nothing');
      assert.deepEqual(await q(userA, `SELECT id FROM ${table} WHERE id = $1`, [b[t.table].id]), [], 'B’s row by id does not exist');
      assert.deepEqual(await q(userA, `SELECT count(*)::int AS n FROM ${table}`), [{ n: 1 }]);

      assert.deepEqual(
        await q(userA, `UPDATE ${table} SET owner_id = owner_id WHERE owner_id = $1 RETURNING id`, [userB]),
        [],
        'update reaches none of B’s rows',
      );
      assert.deepEqual(await q(userA, `DELETE FROM ${table} WHERE id = $1 OR owner_id = $2 RETURNING id`, [b[t.table].id, userB]), [], 'delete reaches none');
      await assert.rejects(
        q(userA, `UPDATE ${table} SET owner_id = $1 WHERE id = $2`, [userB, a[t.table].id]),
        /row-level security/,
        'A’s row cannot be handed to B',
      );
      // A copy of B's row with a new id, still owned by B: only the policy's WITH CHECK refuses it.
      // Every column but generated ones (workflow.uses_raw_body), which take no value.
      const { rows: columns } = await ws.db.exec(
        `SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS list FROM information_schema.columns
          WHERE table_schema = 'workspace' AND table_name = $1 AND is_generated = 'NEVER'`,
        [t.table],
      );
      const list = String(columns[0]!.list);
      await assert.rejects(
        ws.db.queryAsUser(
          userA,
          `INSERT INTO ${table} (${list}) SELECT ${list} FROM jsonb_populate_record(NULL::${table}, (SELECT to_jsonb(x) || jsonb_build_object('id', gen_random_uuid(), 'owner_id', $1::uuid) FROM ${table} x WHERE x.id = $2))`,
          [userB, a[t.table].id],
        ),
        /row-level security/,
        'a row owned by B cannot be created',
      );
      assert.deepEqual(await visible(ws, userB, t.table), bBefore, 'B’s rows are exactly as before');
      assert.deepEqual(ids(await q<{ id: string }>(userA, `SELECT id FROM ${table}`)), [a[t.table].id], 'A still has their row');
    });
  }

  test('each statement runs as the app role with the caller’s id, and values are data, never SQL', async () => {
    const [who] = await q<{ u: string; role: string }>(userA, `SELECT current_setting('app.user_id') AS u, current_user AS role`);
    assert.deepEqual(who, { u: userA, role: 'flowdesk_app' });
    const hostile = `x'); DELETE FROM workspace.task; SELECT ('\\'; --`;
    const [row] = await q<{ title: string }>(userA, `UPDATE workspace.task SET title = $1 WHERE id = $2 RETURNING title`, [hostile, a.task.id]);
    assert.equal(row?.title, hostile, 'the value is stored as given');
    assert.equal((await visible(ws, userB, 'task')).length, 2, 'and ran as nothing else');
    for (const bad of ['', 'alice', `${userA}'; RESET ROLE; --`, ` ${userA}`]) {
      await assert.rejects(q(bad, 'SELECT 1'), TypeError, `user id ${JSON.stringify(bad)} is refused before any SQL`);
    }
  });
});
