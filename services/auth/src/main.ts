import { openBus } from '@flowdesk/bus';
import { openDatabase } from '@flowdesk/db';
import { listen, onShutdown } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateAuth } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// The service's own process (its container's entrypoint): configuration from the environment.
const config = loadConfig(process.env);
const db = await openDatabase(config.database);
if (config.migrateOnStart) await migrateAuth(db);
// Revocation events (docs/auth.md): Kafka when KAFKA_BROKERS is set, else the embedded bus on this
// database, which reaches gateways on the same database only.
const bus = await openBus('auth', async () => db);
const app = await buildApp({
  db,
  signingKeys: config.signingKeys,
  serviceClients: config.serviceClients,
  userIdExchangeClients: config.userIdExchangeClients,
  publicBaseUrl: config.publicBaseUrl,
  logLevel: process.env.LOG_LEVEL,
  events: bus,
});
await listen(app, config.port, config.host);
onShutdown(async () => {
  await app.close();
  await bus.close();
  await db.close();
});
