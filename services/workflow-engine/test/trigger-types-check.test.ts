// The trigger registry (libs/contracts TRIGGER_TYPE_NAMES) is the list of trigger types; the engine's
// run table's CHECK constraint on trigger_type (its migrations) must allow exactly it. A type added
// to the registry without the migration that widens the constraint fails here by name (its runs
// would fail to insert).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from '@flowdesk/db';
import { TRIGGER_TYPE_NAMES } from '@flowdesk/contracts';
import { migrateEngine } from '../src/adapters/run-store.ts';

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
before(async () => {
  testDb = await createTestDatabase();
  await migrateEngine(testDb.db);
});
after(() => testDb.close());

test('the run table’s trigger_type CHECK allows every registry type, and no other', async () => {
  const { rows } = await testDb.db.exec(
    `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
       JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = 'engine' AND t.relname = 'run' AND c.conname = 'run_trigger_type_check'`,
  );
  assert.equal(rows.length, 1, 'engine.run has run_trigger_type_check');
  const allowed = [...String(rows[0]!.def).matchAll(/'([^']+)'/g)].map((m) => m[1]!);
  assert.deepEqual(allowed.sort(), [...TRIGGER_TYPE_NAMES].sort());
});
