import { openBus } from '@flowdesk/bus';
import { openDatabase } from '@flowdesk/db';
import { exitOnConfigError, readConfig, startTracing, serveService } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateGateway } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// A missing or bad configuration value ends the process with one line naming it (exit 78), not a
// stack trace; removed once the service listens.
const configured = exitOnConfigError('mcp-gateway');
// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; off otherwise (docs/observability.md).
const tracing = startTracing({ serviceName: 'mcp-gateway' });

// The service's own process (its container's entrypoint): configuration from the environment.
const config = readConfig(() => loadConfig(process.env));
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
  engineUrl: config.engineUrl,
  allowedOrigins: config.allowedOrigins,
  corsOrigins: config.corsOrigins,
  introspectionCacheMs: config.introspectionCacheMs,
  logLevel: config.logLevel,
  bus,
  conformanceMode: config.conformanceMode,
});
// serveService (libs/service-kit): /metrics on METRICS_PORT, never the public port. On SIGTERM /readyz
// answers 503 at once; app.close() stops accepting, lets in-flight requests finish and closes the
// revocation consumer (its onClose hook); then the bus and the pool close. Registered before listening,
// so a signal during start-up stops gracefully too. Exit 0, or 1 when SHUTDOWN_GRACE_MS runs out.
await serveService(app, {
  name: 'mcp-gateway',
  port: config.port,
  host: config.host,
  closeAfter: [() => bus.close(), () => db.close(), () => tracing.shutdown()],
});
configured();
