import { openBus } from '@flowdesk/bus';
import { openDatabase, type Database } from '@flowdesk/db';
import { listen, onShutdown, requiredEnv, userTokenSource } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { createGuardedHttpClient } from './adapters/guarded-http.ts';
import { workspaceClient } from './adapters/workspace-client.ts';
import { SsrfPolicy } from './domain/ssrf.ts';

// The service's own process (its container's entrypoint): configuration from the environment
// (docs/configuration.md). Kafka when KAFKA_BROKERS is set, else the embedded bus on DATABASE_URL.
const required = (name: string) => requiredEnv(process.env, name);

let db: Database | undefined;
const bus = await openBus('workflow-engine', async () => (db = await openDatabase({ kind: 'postgres', url: required('DATABASE_URL') })));
const http = createGuardedHttpClient({ policy: SsrfPolicy.fromEnv(process.env) });
const userToken = userTokenSource({
  authUrl: required('AUTH_URL'),
  clientId: 'workflow-engine',
  clientSecret: required('WORKFLOW_ENGINE_CLIENT_SECRET'),
  audience: 'workspace-api',
});
const app = await buildApp({
  bus,
  http,
  workspace: workspaceClient({ workspaceApiUrl: required('WORKSPACE_API_URL'), userToken }),
  concurrency: Number(process.env.ENGINE_CONCURRENCY || 8),
  logLevel: process.env.LOG_LEVEL,
});
// SIGTERM (libs/service-kit lifecycle.ts): /readyz answers 503 at once; app.close() stops accepting,
// and its onClose hook closes the subscription, which waits for the runs in flight and records them
// done (Kafka: commits their offsets); then the bus, the HTTP client and the pool close. Registered
// before listening, so a signal during start-up stops gracefully too. Exit 0, or 1 when
// SHUTDOWN_GRACE_MS runs out.
onShutdown(async () => {
  await app.close();
  await bus.close();
  await http.close();
  await db?.close();
}, { app });
await listen(app, Number(process.env.PORT || 3005), process.env.HOST || '0.0.0.0');
