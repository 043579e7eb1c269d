import { openDatabase } from '@flowdesk/db';
import { listen, onShutdown } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateAuth } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// The service's own process (its container's entrypoint): configuration from the environment.
const config = loadConfig(process.env);
const db = await openDatabase(config.database);
if (config.migrateOnStart) await migrateAuth(db);
const app = await buildApp({
  db,
  signingKeys: config.signingKeys,
  serviceClients: config.serviceClients,
  userIdExchangeClients: config.userIdExchangeClients,
  publicBaseUrl: config.publicBaseUrl,
  logLevel: process.env.LOG_LEVEL,
});
await listen(app, config.port, config.host);
onShutdown(async () => {
  await app.close();
  await db.close();
});
