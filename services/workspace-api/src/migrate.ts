import { openDatabase } from '@flowdesk/db';
import { requiredEnv, runJob } from '@flowdesk/service-kit';
import { migrateWorkspace } from './adapters/db.ts';

// The migration job's entrypoint (`node services/workspace-api/dist/migrate.js`, e.g. a Kubernetes
// Job before the rollout): applies workspace-api's pending migrations to DATABASE_URL and exits 0,
// or 1 with the failing migration in the log. Safe to run concurrently (advisory lock) and again.
await runJob('workspace-api', 'migrate', async () => {
  const db = await openDatabase({ kind: 'postgres', url: requiredEnv(process.env, 'DATABASE_URL') });
  try {
    const { applied, skipped } = await migrateWorkspace(db);
    return { applied, alreadyApplied: skipped.length };
  } finally {
    await db.close();
  }
});
