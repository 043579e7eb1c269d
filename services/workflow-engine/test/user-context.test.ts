// The engine's own user-scoped transactions (run-store, wait-store) run with libs/db's one context
// statement: the app role, the user and the 10 s statement timeout (docs/data-and-rls.md).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createTestDatabase, USER_STATEMENT_TIMEOUT, type Database, type TestDatabase } from '@flowdesk/db';
import { migrateEngine, RunStore } from '../src/adapters/run-store.ts';
import { WaitStore } from '../src/adapters/wait-store.ts';

let testDb: TestDatabase;
before(async () => {
  testDb = await createTestDatabase();
  await migrateEngine(testDb.db);
});
after(() => testDb.close());

/** The database, with each transaction's settings read at its end, inside it (what its statements ran under). */
function observed(db: Database) {
  const seen: { role: string; user: string; timeout: string }[] = [];
  const wrapped: Database = {
    ...db,
    exec: db.exec,
    queryAsUser: db.queryAsUser,
    session: (fn) => db.session(fn),
    close: () => db.close(),
    transaction: (fn) =>
      db.transaction(async (exec) => {
        const result = await fn(exec);
        const { rows } = await exec(
          `SELECT current_user AS role, current_setting('app.user_id', true) AS "user", current_setting('statement_timeout') AS timeout`,
        );
        seen.push(rows[0] as (typeof seen)[number]);
        return result;
      }),
  };
  return { db: wrapped, seen };
}

test("the engine's run and wait queries run as the user with the statement timeout", async () => {
  const { db, seen } = observed(testDb.db);
  const user = randomUUID();
  await new RunStore(db).list(user, {});
  await new RunStore(db).get(user, randomUUID());
  await new WaitStore(db).resumeByOwner(user, randomUUID(), 'approve', undefined, new Date());
  assert.equal(seen.length, 3);
  for (const s of seen) {
    assert.equal(s.role, 'flowdesk_app');
    assert.equal(s.user, user);
    assert.equal(s.timeout, USER_STATEMENT_TIMEOUT, 'a user query of the engine must not run without the statement timeout');
  }
});
