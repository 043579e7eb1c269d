import { openBus } from '@flowdesk/bus';
import { openDatabase } from '@flowdesk/db';
import { listen, onShutdown, listenMetrics, startTracing } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateAuth } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; off otherwise (docs/observability.md).
const tracing = startTracing({ serviceName: 'auth' });

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
  signupMode: config.signupMode,
  sessionPolicy: config.sessionPolicy,
  corsOrigins: config.corsOrigins,
  logLevel: process.env.LOG_LEVEL,
  events: bus,
});
// /metrics (and /healthz, /readyz) on METRICS_PORT (9464), never on the public port.
const metrics = await listenMetrics({ apps: [{ name: 'auth', app }] });
// SIGTERM (libs/service-kit lifecycle.ts): /readyz answers 503 at once; app.close() stops accepting
// and lets in-flight requests finish (a revocation being published is part of its request); then the
// bus and the pool close. Registered before listening, so a signal during start-up stops gracefully
// too. Exit 0, or 1 when SHUTDOWN_GRACE_MS runs out.
onShutdown(
  async () => {
    await app.close();
    await metrics.close();
    await bus.close();
    await db.close();
    await tracing.shutdown();
  },
  { app },
);
await listen(app, config.port, config.host);
