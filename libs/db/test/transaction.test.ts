// db.transaction: one transaction on one connection, and on PGlite (a single connection shared by
// every caller) no statement of another caller may land inside it. Runs on PGlite by default and on
// Postgres with DATABASE_URL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '../src/index.ts';

let database: TestDatabase;
before(async () => {
  database = await createTestDatabase();
  await database.db.exec('CREATE TABLE IF NOT EXISTS tx_probe (n int)');
});
after(() => database?.close());

test("another caller's statement issued while a transaction is open runs outside it, not inside", async () => {
  const { db } = database;
  let issued!: Promise<{ rows: Record<string, unknown>[] }>;
  await db.transaction(async (exec) => {
    await exec(`SELECT set_config('app.probe', 'inside', true)`);
    // Another caller (a request, the bus) queries while this transaction is open.
    issued = db.exec(`SELECT coalesce(current_setting('app.probe', true), '') AS probe`);
    // Give it every chance to run now: several round trips inside the transaction.
    for (let i = 0; i < 5; i++) await exec('SELECT 1');
  });
  const { rows } = await issued;
  assert.equal(rows[0]!.probe, '', 'the concurrent statement saw the transaction-local setting: it ran inside the transaction');
});

test('a transaction that throws is rolled back and the error reaches the caller; one that resolves is committed', async () => {
  const { db } = database;
  await db.exec('DELETE FROM tx_probe');
  await assert.rejects(
    db.transaction(async (exec) => {
      await exec('INSERT INTO tx_probe VALUES (1)');
      throw new Error('changed my mind');
    }),
    /changed my mind/,
  );
  const value = await db.transaction(async (exec) => {
    await exec('INSERT INTO tx_probe VALUES (2)');
    return 'done';
  });
  assert.equal(value, 'done');
  const { rows } = await db.exec('SELECT n FROM tx_probe ORDER BY n');
  assert.deepEqual(
    rows.map((r) => r.n),
    [2],
  );
});
