import { openBus } from '@flowdesk/bus';
import { openDatabase } from '@flowdesk/db';
import { exitOnConfigError, readConfig, startTracing, serveService } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateAuth } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// A missing or bad configuration value ends the process with one line naming it (exit 78), not a
// stack trace; removed once the service listens.
const configured = exitOnConfigError('auth');
// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; off otherwise (docs/observability.md).
const tracing = startTracing({ serviceName: 'auth' });

// The service's own process (its container's entrypoint): configuration from the environment.
const config = readConfig(() => loadConfig(process.env));
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
  ssrfAllowlist: config.ssrfAllowlist,
  ...config.oauthLimits,
  logLevel: process.env.LOG_LEVEL,
  events: bus,
});
// serveService (libs/service-kit): /metrics on METRICS_PORT, never the public port. On SIGTERM /readyz
// answers 503 at once; app.close() stops accepting and lets in-flight requests finish (a revocation
// being published is part of its request); then the bus and the pool close. Registered before
// listening, so a signal during start-up stops gracefully too. Exit 0, or 1 when SHUTDOWN_GRACE_MS runs
// out.
await serveService(app, {
  name: 'auth',
  port: config.port,
  host: config.host,
  closeAfter: [() => bus.close(), () => db.close(), () => tracing.shutdown()],
});
configured();
