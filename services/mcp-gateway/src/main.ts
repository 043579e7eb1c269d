import { openDatabase } from '@flowdesk/db';
import { listen, onShutdown } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateGateway } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// The service's own process (its container's entrypoint): configuration from the environment.
const config = loadConfig(process.env);
const db = await openDatabase(config.database);
if (config.migrateOnStart) await migrateGateway(db);
const app = await buildApp({
  db,
  publicBaseUrl: config.publicBaseUrl,
  authUrl: config.authUrl,
  serviceClientSecret: config.serviceClientSecret,
  workspaceApiUrl: config.workspaceApiUrl,
  allowedOrigins: config.allowedOrigins,
  introspectionCacheMs: config.introspectionCacheMs,
  logLevel: config.logLevel,
});
await listen(app, config.port, config.host);
onShutdown(async () => {
  await app.close();
  await db.close();
});
