import { migrateServiceDatabase } from '@flowdesk/bus';
import { requiredEnv, runJob } from '@flowdesk/service-kit';
import { migrateEngine } from './adapters/run-store.ts';

// The migration job's entrypoint (`node services/workflow-engine/dist/migrate.js`, e.g. a Kubernetes
// Job before the rollout): applies the engine's pending migrations (its `engine` schema: runs and
// their steps) to DATABASE_URL and exits 0, or 1 with the failing migration in the log. Without
// KAFKA_BROKERS the engine consumes the embedded bus in this database, so the `bus` schema is migrated
// here too. Safe to run concurrently (advisory lock) and again.
await runJob('workflow-engine', 'migrate', () => migrateServiceDatabase(requiredEnv(process.env, 'DATABASE_URL'), migrateEngine));
