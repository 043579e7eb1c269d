// The migration runner, on the migrations of a temporary folder: what it applies and records, what it
// skips, what it refuses, what it leaves behind when a migration fails, and what happens when two
// runners start at once. Runs on PGlite (no DATABASE_URL) and on a fresh Postgres database.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, migrate, openDatabase, type Database, type TestDatabase } from '../src/index.ts';

const FIRST = '20260101000000_create_alpha';
const SECOND = '20260102000000_create_beta';

/** Two small migrations for `schema`; the second needs the first (foreign key, seed row). */
function migrations(schema: string): Record<string, string> {
  return {
    [FIRST]: `CREATE TABLE "${schema}".alpha (id INT PRIMARY KEY, label TEXT NOT NULL);\n`,
    [SECOND]:
      `CREATE TABLE "${schema}".beta (id INT PRIMARY KEY, alpha_id INT NOT NULL REFERENCES "${schema}".alpha(id));\n` +
      `INSERT INTO "${schema}".alpha VALUES (1, 'seed');\n` +
      `INSERT INTO "${schema}".beta VALUES (1, 1);\n` +
      `-- a trailing comment without a newline`,
  };
}

let tdb: TestDatabase;
let root: string;
let folders = 0;

/** A fresh migrations folder holding `files` (name -> SQL); written in reverse so order comes from names. */
async function folder(files: Record<string, string>): Promise<string> {
  const dir = path.join(root, `m${folders++}`);
  await mkdir(dir);
  for (const [name, sql] of Object.entries(files).reverse()) await addMigration(dir, name, sql);
  return dir;
}

async function addMigration(dir: string, name: string, sql: string): Promise<void> {
  await mkdir(path.join(dir, name));
  await writeFile(path.join(dir, name, 'migration.sql'), sql);
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

interface Record_ {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: unknown;
  started_at: unknown;
  rolled_back_at: unknown;
  applied_steps_count: number;
}

async function recorded(db: Database, schema: string): Promise<Record_[]> {
  const { rows } = await db.exec(`SELECT * FROM "${schema}"."_prisma_migrations" ORDER BY migration_name, started_at`);
  return rows as unknown as Record_[];
}

async function tables(db: Database, schema: string): Promise<string[]> {
  const { rows } = await db.exec(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname`,
    [schema],
  );
  return rows.map((r) => String(r.relname));
}

before(async () => {
  tdb = await createTestDatabase();
  root = await mkdtemp(path.join(tmpdir(), 'flowdesk-migrate-test-'));
});

after(async () => {
  await tdb?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

test('applies the pending migrations in name order and records them as prisma migrate deploy does', async () => {
  const files = migrations('m_apply');
  const dir = await folder(files);

  const result = await migrate(tdb.db, dir, 'm_apply');

  assert.deepEqual(result, { applied: [FIRST, SECOND], skipped: [] });
  assert.deepEqual(await tables(tdb.db, 'm_apply'), ['_prisma_migrations', 'alpha', 'beta']);
  const { rows } = await tdb.db.exec(`SELECT a.label, b.id FROM m_apply.beta b JOIN m_apply.alpha a ON a.id = b.alpha_id`);
  assert.deepEqual(rows, [{ label: 'seed', id: 1 }], 'the second migration ran after the first');

  const recs = await recorded(tdb.db, 'm_apply');
  assert.deepEqual(
    recs.map((r) => r.migration_name),
    [FIRST, SECOND],
  );
  for (const r of recs) {
    assert.equal(r.checksum, sha256(files[r.migration_name]!), `${r.migration_name}: checksum is the SHA-256 of migration.sql`);
    assert.match(r.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.ok(r.finished_at instanceof Date, `${r.migration_name}: finished_at is set`);
    assert.ok(r.finished_at.getTime() >= (r.started_at as Date).getTime());
    assert.equal(r.rolled_back_at, null);
    assert.equal(r.applied_steps_count, 1);
  }
});

test('a second run applies nothing and changes nothing', async () => {
  const dir = await folder(migrations('m_again'));
  await migrate(tdb.db, dir, 'm_again');
  const recsBefore = await recorded(tdb.db, 'm_again');

  const result = await migrate(tdb.db, dir, 'm_again');

  assert.deepEqual(result, { applied: [], skipped: [FIRST, SECOND] });
  assert.deepEqual(await recorded(tdb.db, 'm_again'), recsBefore, 'no new or changed record');
  const { rows } = await tdb.db.exec(`SELECT count(*)::int AS n FROM m_again.alpha`);
  assert.deepEqual(rows, [{ n: 1 }], 'the seed row was not inserted twice');

  // A migration added later is applied on the next run, the others still skipped.
  await addMigration(dir, '20260103000000_add_gamma', `CREATE TABLE m_again.gamma (id INT);`);
  assert.deepEqual(await migrate(tdb.db, dir, 'm_again'), { applied: ['20260103000000_add_gamma'], skipped: [FIRST, SECOND] });
});

test('refuses a migration whose file changed after it was applied, naming it, and applies nothing after it', async () => {
  const dir = await folder(migrations('m_changed'));
  await migrate(tdb.db, dir, 'm_changed');
  const recsBefore = await recorded(tdb.db, 'm_changed');

  await appendFile(path.join(dir, FIRST, 'migration.sql'), `ALTER TABLE m_changed.alpha ADD COLUMN extra TEXT;\n`);
  await addMigration(dir, '20260103000000_add_gamma', `CREATE TABLE m_changed.gamma (id INT);`);

  await assert.rejects(migrate(tdb.db, dir, 'm_changed'), (e: Error) => {
    assert.ok(e.message.includes(FIRST), `the error names the migration: ${e.message}`);
    assert.match(e.message, /modified|changed/);
    return true;
  });
  assert.deepEqual(await tables(tdb.db, 'm_changed'), ['_prisma_migrations', 'alpha', 'beta'], 'neither the change nor the new migration ran');
  assert.deepEqual(await recorded(tdb.db, 'm_changed'), recsBefore);
});

test('a failing migration is rolled back completely, not recorded, named in the error, and can be fixed', async () => {
  const dir = await folder(migrations('m_fail'));
  await migrate(tdb.db, dir, 'm_fail');
  const BAD = '20260103000000_half_done';
  await addMigration(
    dir,
    BAD,
    `CREATE TABLE m_fail.gamma (id INT PRIMARY KEY);\n` +
      `INSERT INTO m_fail.gamma VALUES (1);\n` +
      `UPDATE m_fail.alpha SET label = 'changed by the failing migration';\n` +
      `INSERT INTO m_fail.no_such_table VALUES (1);\n`,
  );
  const LATER = '20260104000000_after_the_bad_one';
  await addMigration(dir, LATER, `CREATE TABLE m_fail.delta (id INT);`);

  await assert.rejects(migrate(tdb.db, dir, 'm_fail'), (e: Error) => {
    assert.ok(e.message.includes(BAD), `the error names the migration: ${e.message}`);
    assert.match(e.message, /no_such_table/, 'and says what went wrong');
    return true;
  });

  assert.deepEqual(await tables(tdb.db, 'm_fail'), ['_prisma_migrations', 'alpha', 'beta'], 'gamma was rolled back, delta never ran');
  assert.deepEqual((await tdb.db.exec(`SELECT label FROM m_fail.alpha`)).rows, [{ label: 'seed' }], 'its update was rolled back');
  assert.deepEqual(
    (await recorded(tdb.db, 'm_fail')).map((r) => r.migration_name),
    [FIRST, SECOND],
    'the failed migration is not recorded',
  );

  // The database is usable and the migration, once fixed, applies.
  await writeFile(path.join(dir, BAD, 'migration.sql'), `CREATE TABLE m_fail.gamma (id INT PRIMARY KEY);\n`);
  assert.deepEqual(await migrate(tdb.db, dir, 'm_fail'), { applied: [BAD, LATER], skipped: [FIRST, SECOND] });
  assert.deepEqual(await tables(tdb.db, 'm_fail'), ['_prisma_migrations', 'alpha', 'beta', 'delta', 'gamma']);
});

describe('two runners started at once', () => {
  /** Slow, non-repeatable migrations: running one twice fails (CREATE TABLE) or doubles rows. */
  function racy(schema: string): Record<string, string> {
    return {
      '20260101000000_one': `CREATE TABLE "${schema}".one (id INT); SELECT pg_sleep(0.2); INSERT INTO "${schema}".one VALUES (1);`,
      '20260102000000_two': `CREATE TABLE "${schema}".two (id INT); SELECT pg_sleep(0.2); INSERT INTO "${schema}".two VALUES (2);`,
      '20260103000000_three': `INSERT INTO "${schema}".one VALUES (3);`,
    };
  }

  async function assertAppliedOnce(schema: string, files: Record<string, string>, results: { applied: string[]; skipped: string[] }[]) {
    const names = Object.keys(files).sort();
    const applied = results.flatMap((r) => r.applied).sort();
    assert.deepEqual(applied, names, 'each migration was applied by exactly one runner');
    for (const r of results) assert.deepEqual([...r.applied, ...r.skipped].sort(), names, 'each runner accounts for every migration');
    assert.deepEqual(
      (await recorded(tdb.db, schema)).map((r) => r.migration_name),
      names,
      'each migration is recorded once',
    );
    const { rows } = await tdb.db.exec(
      `SELECT (SELECT array_agg(id ORDER BY id) FROM "${schema}".one) AS one, (SELECT count(*)::int FROM "${schema}".two) AS two`,
    );
    assert.deepEqual(rows, [{ one: [1, 3], two: 1 }], 'no statement ran twice');
  }

  test(
    'two processes (separate pools) on one database',
    { skip: process.env.DATABASE_URL ? false : 'needs Postgres (DATABASE_URL): a PGlite database belongs to one process' },
    async () => {
      const files = racy('m_race');
      const dir = await folder(files);
      const dbs = await Promise.all([0, 1].map(() => openDatabase({ kind: 'postgres', url: tdb.url! })));
      try {
        const results = await Promise.all(dbs.map((db) => migrate(db, dir, 'm_race')));
        await assertAppliedOnce('m_race', files, results);
      } finally {
        await Promise.all(dbs.map((db) => db.close()));
      }
    },
  );

  test('one process starting the runner twice on the same database (pool or PGlite)', async () => {
    const files = racy('m_race_same');
    const dir = await folder(files);
    const results = await Promise.all([migrate(tdb.db, dir, 'm_race_same'), migrate(tdb.db, dir, 'm_race_same')]);
    await assertAppliedOnce('m_race_same', files, results);
  });
});
