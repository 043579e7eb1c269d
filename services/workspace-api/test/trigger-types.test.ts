// The trigger registry (libs/contracts TRIGGER_TYPE_NAMES) is the list of trigger types; the
// workflow table's Prisma enum and the database's enum type (its migrations) must hold exactly it.
// A type added to the registry without its migration (`ALTER TYPE ... ADD VALUE`) and the schema's
// enum line fails here by name.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { TRIGGER_TYPE_NAMES } from '@flowdesk/contracts';
import { openTestWorkspace, type TestWorkspace } from './helpers/db.ts';

let ws: TestWorkspace;
before(async () => {
  ws = await openTestWorkspace();
});
after(() => ws.close());

test('the Prisma schema’s TriggerType enum is the registry’s list', async () => {
  const schema = await readFile(new URL('../prisma/schema.prisma', import.meta.url), 'utf8');
  const block = /\benum TriggerType \{([^}]*)\}/.exec(schema)?.[1];
  assert.ok(block, 'schema.prisma has enum TriggerType');
  const values = block
    .split('\n')
    .map((l) => l.replace(/\/\/.*$/, '').trim())
    .filter((l) => l && !l.startsWith('@@'));
  assert.deepEqual([...values].sort(), [...TRIGGER_TYPE_NAMES].sort());
});

test('the migrated database’s "workspace"."TriggerType" holds every registry type, and no other', async () => {
  const { rows } = await ws.db.exec(`SELECT unnest(enum_range(NULL::"workspace"."TriggerType"))::text AS value`);
  assert.deepEqual(rows.map((r) => String(r.value)).sort(), [...TRIGGER_TYPE_NAMES].sort());
});
