// A database connection cut while a client is checked out (pg_terminate_backend, as a failover or a
// pooler restart does) fails the statement, never the process: session(), transaction() and
// queryAsUser() each hold a pooled client across statements, and pg-pool removes its own error
// listener from a client while it is checked out. Postgres only (PGlite has no connections to cut).
// Without the pool's per-client listener each test ends in an uncaught `Unhandled 'error' event`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '../src/index.ts';

const skip = process.env.DATABASE_URL ? false : 'needs Postgres (DATABASE_URL): PGlite has no connections to cut';

let database: TestDatabase;
before(async () => {
  if (!skip) database = await createTestDatabase();
});
after(() => database?.close());

const USER = '00000000-0000-4000-8000-000000000001';

/** Terminates a backend from another pooled connection and waits until it is gone. */
async function cut(pid: number): Promise<void> {
  const { db } = database;
  const { rows } = await db.exec('SELECT pg_terminate_backend($1) AS ok', [pid]);
  assert.equal(rows[0]!.ok, true, `backend ${pid} terminated`);
  for (;;) {
    const { rows: left } = await db.exec('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pid]);
    if (left[0]!.n === 0) return;
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * `fn`, again while it fails with a connection error: an idle pooled connection cut a moment ago
 * (its end not yet read) fails the one statement that lands on it, and the pool then discards it,
 * so with a pool of 10 it takes at most 10 such failures. Any other error fails at once.
 */
async function afterStaleConnections<T>(fn: () => Promise<T>): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await fn();
    } catch (err) {
      const e = err as { code?: string; message?: string };
      const connectionError = e.code === '57P01' || /Connection terminated|not queryable/.test(e.message ?? '');
      if (!connectionError || failures >= 10) throw err;
    }
  }
}

/** The pool still serves: fresh connections replace the cut ones. */
async function stillServes(): Promise<void> {
  const { db } = database;
  assert.deepEqual((await afterStaleConnections(() => db.exec('SELECT 1 AS one'))).rows, [{ one: 1 }]);
  assert.deepEqual(await afterStaleConnections(() => db.session((exec) => exec('SELECT 2 AS two').then((r) => r.rows))), [{ two: 2 }]);
  assert.deepEqual(await afterStaleConnections(() => db.transaction((exec) => exec('SELECT 3 AS three').then((r) => r.rows))), [{ three: 3 }]);
}

test('a session whose connection is cut between statements: the next statement fails, the process and the pool go on', { skip }, async () => {
  const { db } = database;
  const failure = await db
    .session(async (exec) => {
      const pid = Number((await exec('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
      await cut(pid);
      // Let the connection's end reach the client while it is idle and checked out.
      await new Promise((r) => setTimeout(r, 50));
      await exec('SELECT 1');
      return 'the statement on a cut connection succeeded';
    })
    .catch((err: Error) => err);
  assert.ok(failure instanceof Error, String(failure));
  await stillServes();
});

test('a transaction whose connection is cut mid-way is rolled back with an error, and the pool goes on', { skip }, async () => {
  const { db } = database;
  await db.exec('CREATE TABLE IF NOT EXISTS cut_probe (n int)');
  const failure = await db
    .transaction(async (exec) => {
      await exec('INSERT INTO cut_probe VALUES (1)');
      const pid = Number((await exec('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
      await cut(pid);
      await exec('INSERT INTO cut_probe VALUES (2)');
    })
    .catch((err: Error) => err);
  assert.ok(failure instanceof Error, String(failure));
  assert.deepEqual((await db.exec('SELECT count(*)::int AS n FROM cut_probe')).rows, [{ n: 0 }], 'nothing of the cut transaction was committed');
  await stillServes();
});

test('statements in flight on every connection when all are cut, repeatedly: each fails or succeeds, the process stays up', { skip }, async () => {
  const { db } = database;
  const name = (await db.exec('SELECT current_database() AS d')).rows[0]!.d as string;
  let ok = 0;
  let failed = 0;
  const load = async (i: number) => {
    const op =
      i % 3 === 0
        ? db.session(async (exec) => {
            await exec('SELECT pg_sleep(0.05)');
            await exec('SELECT 1');
          })
        : i % 3 === 1
          ? db.transaction(async (exec) => {
              await exec('SELECT pg_sleep(0.05)');
              await exec('SELECT 1');
            })
          : db.queryAsUser(USER, 'SELECT pg_sleep(0.05)');
    await op.then(
      () => ok++,
      () => failed++,
    );
  };
  for (let round = 0; round < 5; round++) {
    const inFlight = Array.from({ length: 8 }, (_, i) => load(i + round));
    // Cut once the statements are running on their connections.
    for (;;) {
      const { rows } = await afterStaleConnections(() =>
        db.exec(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()`, [name]),
      );
      if ((rows[0]!.n as number) >= 3) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    await afterStaleConnections(() => db.exec('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]));
    await Promise.all(inFlight);
  }
  assert.ok(failed > 0, `the cuts reached statements in flight (${ok} succeeded, ${failed} failed)`);
  await stillServes();
});

test('a user statement whose connection is cut fails, and its connection is not handed out again: the next statement succeeds at once', { skip }, async () => {
  const { db } = database;
  const name = (await db.exec('SELECT current_database() AS d')).rows[0]!.d as string;
  for (let round = 0; round < 5; round++) {
    // Its outcome is taken at once: the cut may land while this loop still waits on its own statement.
    const cutOne = db.queryAsUser(USER, 'SELECT pg_sleep(5)').then(
      () => ({ code: 'no error' }),
      (err: { code?: string }) => err,
    );
    for (;;) {
      const { rows } = await db.exec(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query = 'SELECT pg_sleep(5)' AND state = 'active'`, [name]);
      if (rows.length > 0) {
        await db.exec('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal((await cutOne).code, '57P01', `round ${round}: the cut statement fails with 57P01`);
    // No retry here: the cut connection must not be the one this statement gets.
    assert.deepEqual(await db.queryAsUser(USER, 'SELECT 1 AS one'), [{ one: 1 }], `round ${round}`);
  }
});
