import { openBus } from '@flowdesk/bus';
import { openDatabase } from '@flowdesk/db';
import { listen, onShutdown } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateGateway } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// The service's own process (its container's entrypoint): configuration from the environment.
const config = loadConfig(process.env);
const db = await openDatabase(config.database);
if (config.migrateOnStart) await migrateGateway(db);
// Revocation events from auth (docs/mcp-gateway.md): Kafka when KAFKA_BROKERS is set, else the
// embedded bus on this database (it reaches an auth service on the same database only).
const bus = await openBus('mcp-gateway', async () => db);
const app = await buildApp({
  db,
  publicBaseUrl: config.publicBaseUrl,
  authUrl: config.authUrl,
  serviceClientSecret: config.serviceClientSecret,
  workspaceApiUrl: config.workspaceApiUrl,
  allowedOrigins: config.allowedOrigins,
  introspectionCacheMs: config.introspectionCacheMs,
  logLevel: config.logLevel,
  bus,
  conformanceMode: config.conformanceMode,
});
// SIGTERM (libs/service-kit lifecycle.ts): /readyz answers 503 at once; app.close() stops accepting,
// lets in-flight requests finish and closes the revocation consumer (its onClose hook); then the bus
// and the pool close. Registered before listening, so a signal during start-up stops gracefully too.
// Exit 0, or 1 when SHUTDOWN_GRACE_MS runs out.
onShutdown(async () => {
  await app.close();
  await bus.close();
  await db.close();
}, { app });
await listen(app, config.port, config.host);
