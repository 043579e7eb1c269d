import { openBus } from '@flowdesk/bus';
import { openDatabase, type Database } from '@flowdesk/db';
import { listen, onShutdown, requiredEnv, serviceTokenSource } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { workspaceApiDirectory } from './adapters/workspace-directory.ts';

// The service's own process (its container's entrypoint): configuration from the environment
// (docs/configuration.md). Kafka when KAFKA_BROKERS is set, else the embedded bus on DATABASE_URL.
const required = (name: string) => requiredEnv(process.env, name);

let db: Database | undefined;
const bus = await openBus('webhook-ingest', async () => (db = await openDatabase({ kind: 'postgres', url: required('DATABASE_URL') })));
const token = serviceTokenSource({
  authUrl: required('AUTH_URL'),
  clientId: 'webhook-ingest',
  clientSecret: required('WEBHOOK_INGEST_CLIENT_SECRET'),
  audience: 'workspace-api',
});
const app = await buildApp({
  bus,
  directory: workspaceApiDirectory({ workspaceApiUrl: required('WORKSPACE_API_URL'), token }),
  logLevel: process.env.LOG_LEVEL,
});
// SIGTERM (libs/service-kit lifecycle.ts): /readyz answers 503 at once; app.close() stops accepting
// and lets in-flight requests finish — each answers 200 only once its event is durable on the bus,
// so nothing acknowledged is lost; then the bus (producer) and the pool close. Registered before
// listening, so a signal during start-up stops gracefully too. Exit 0, or 1 when SHUTDOWN_GRACE_MS
// runs out.
onShutdown(async () => {
  await app.close();
  await bus.close();
  await db?.close();
}, { app });
await listen(app, Number(process.env.PORT || 3004), process.env.HOST || '0.0.0.0');
