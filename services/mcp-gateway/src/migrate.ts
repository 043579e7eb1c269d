import { migrateServiceDatabase } from '@flowdesk/bus';
import { requiredEnv, runJob } from '@flowdesk/service-kit';
import { migrateGateway } from './adapters/db.ts';

// The migration job's entrypoint (`node services/mcp-gateway/dist/migrate.js`, e.g. a Kubernetes Job
// before the rollout): applies the gateway's pending migrations (its sessions) to DATABASE_URL and
// exits 0, or 1 with the failing migration in the log. Without KAFKA_BROKERS the gateway receives
// revocations on the embedded bus in this database, so the `bus` schema is migrated here too
// (libs/bus/migrations). Safe to run concurrently (advisory lock) and again.
await runJob('mcp-gateway', 'migrate', () => migrateServiceDatabase(requiredEnv(process.env, 'DATABASE_URL'), migrateGateway));
