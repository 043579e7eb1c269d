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
// SIGTERM (libs/service-kit lifecycle.ts): /readyz answers 503 at once; app.close() stops accepting
// and lets in-flight requests finish; then the pool closes. Registered before listening, so a signal
// during start-up stops gracefully too. Exit 0, or 1 when SHUTDOWN_GRACE_MS runs out.
onShutdown(async () => {
  await app.close();
  await db.close();
}, { app });
await listen(app, config.port, config.host);
