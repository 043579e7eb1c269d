// Upgrading a database that already has workflows: migration 20270310000000_workflow_versions starts
// each one's history with its current definition as version 1 (docs/workflow-versions.md), and
// 20270320000000_workflow_definition_version keeps that number with the workflow row.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, migrate, type TestDatabase } from '@flowdesk/db';

const MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));
const VERSIONS = '20270310000000_workflow_versions';

let testDb: TestDatabase;
let dir: string;
before(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(tmpdir(), 'flowdesk-versions-migration-'));
});
after(async () => {
  await testDb?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('workflows from before the upgrade get their current definition as version 1', async () => {
  // The migrations before it (and not the later ones, which need its table).
  const before = (src: string) => !/^\d{14}_/.test(path.basename(src)) || path.basename(src) < VERSIONS || path.dirname(src) !== MIGRATIONS;
  await cp(MIGRATIONS, dir, { recursive: true, filter: before });
  await migrate(testDb.db, dir, 'workspace');
  const owner = randomUUID();
  const graph = { nodes: [{ id: 't', type: 'create_task', position: { x: 1, y: 2 }, params: { title: 'x' } }], edges: [{ from: 'trigger', to: 't' }] };
  const id = randomUUID();
  await testDb.db.exec(
    `INSERT INTO "workspace"."workflow" (id, owner_id, name, description, trigger_type, graph, trigger_config, execution_order, retention_runs, updated_at)
     VALUES ($4, $1, 'Old one', 'from before', 'schedule', $2::jsonb, $3::jsonb, 'ordered', 7, now())`,
    [owner, JSON.stringify(graph), JSON.stringify({ cron: '0 * * * *' }), id],
  );
  await cp(MIGRATIONS, dir, { recursive: true });
  await migrate(testDb.db, dir, 'workspace');
  const { rows: versions } = await testDb.db.exec(`SELECT number, definition, author_user_id FROM "workspace"."workflow_version" WHERE workflow_id = $1`, [id]);
  assert.equal(versions.length, 1);
  const v = versions[0]!;
  assert.equal(v.number, 1);
  assert.equal(v.author_user_id, owner);
  const definition = typeof v.definition === 'string' ? JSON.parse(v.definition) : v.definition;
  assert.deepEqual(definition, {
    name: 'Old one',
    description: 'from before',
    triggerType: 'schedule',
    triggerConfig: { cron: '0 * * * *' },
    graph,
    requireWebhookSecret: true,
    executionOrder: 'ordered',
    errorWorkflowId: null,
    retention: { runs: 7 },
  });
  // The row knows its newest version (20270320000000_workflow_definition_version): events carry it to the engine.
  const { rows } = await testDb.db.exec(`SELECT definition_version FROM "workspace"."workflow" WHERE id = $1`, [id]);
  assert.equal(rows[0]!.definition_version, 1);
});
