import { openDatabase } from '@flowdesk/db';
import { listen, onShutdown } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateWorkspace } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// The service's own process (its container's entrypoint): configuration from the environment.
const config = loadConfig(process.env);
const db = await openDatabase(config.database);
if (config.migrateOnStart) await migrateWorkspace(db);
const app = await buildApp({ db, jwtPublicKeyPem: config.jwtPublicKeyPem, webhookSecretKey: config.webhookSecretKey, publicBaseUrl: config.publicBaseUrl });
await listen(app, config.port, config.host);
onShutdown(async () => {
  await app.close();
  await db.close();
});
