import { migrateServiceDatabase } from '@flowdesk/bus';
import { requiredEnv, runJob } from '@flowdesk/service-kit';
import { migrateWorkspace } from './adapters/db.ts';

// The migration job's entrypoint (`node services/workspace-api/dist/migrate.js`, e.g. a Kubernetes
// Job before the rollout): applies workspace-api's pending migrations to DATABASE_URL and exits 0,
// or 1 with the failing migration in the log. Without KAFKA_BROKERS its outbox relay publishes on the
// embedded bus in this database, so the `bus` schema is migrated here too. Safe to run concurrently (advisory lock) and again.
await runJob('workspace-api', 'migrate', () => migrateServiceDatabase(requiredEnv(process.env, 'DATABASE_URL'), migrateWorkspace));
