import { withBusMigrations } from '@flowdesk/bus';
import { openDatabase } from '@flowdesk/db';
import { requiredEnv, runJob } from '@flowdesk/service-kit';
import { migrateAuth } from './adapters/db.ts';

// The migration job's entrypoint (`node services/auth/dist/migrate.js`, e.g. a Kubernetes Job before
// the rollout): applies auth's pending migrations to DATABASE_URL and exits 0, or 1 with the failing
// migration in the log. Without KAFKA_BROKERS, auth publishes revocations on the embedded bus in
// this database, so the `bus` schema is migrated here too (libs/bus/migrations). Safe to run
// concurrently (advisory lock) and again.
await runJob('auth', 'migrate', async () => {
  const db = await openDatabase({ kind: 'postgres', url: requiredEnv(process.env, 'DATABASE_URL') });
  try {
    return await withBusMigrations(db, await migrateAuth(db));
  } finally {
    await db.close();
  }
});
