import { openBus } from '@flowdesk/bus';
import { openDatabase } from '@flowdesk/db';
import { exitOnConfigError, readConfig, startTracing, serveService } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateWorkspace } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// A missing or bad configuration value ends the process with one line naming it (exit 78), not a
// stack trace; removed once the service listens.
const configured = exitOnConfigError('workspace-api');
// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; off otherwise (docs/observability.md).
const tracing = startTracing({ serviceName: 'workspace-api' });

// The service's own process (its container's entrypoint): configuration from the environment.
const config = readConfig(() => loadConfig(process.env));
const db = await openDatabase(config.database);
if (config.migrateOnStart) await migrateWorkspace(db);
// workflow.changed events leave through the outbox relay onto the bus (Kafka, or the embedded bus here).
const bus = await openBus('workspace-api', async () => db);
const app = await buildApp({
  db,
  jwtPublicKeyPem: config.jwtPublicKeyPem,
  webhookSecretKey: config.webhookSecretKey,
  publicBaseUrl: config.publicBaseUrl,
  versionsKeep: config.versionsKeep,
  events: bus,
});
// serveService (libs/service-kit): /metrics on METRICS_PORT, never the public port. On SIGTERM /readyz
// answers 503 at once; app.close() stops accepting and lets in-flight requests finish; then the bus
// and the pool close. Registered before listening, so a signal during start-up stops gracefully too. Exit 0, or 1
// when SHUTDOWN_GRACE_MS runs out.
await serveService(app, {
  name: 'workspace-api',
  port: config.port,
  host: config.host,
  closeAfter: [() => bus.close(), () => db.close(), () => tracing.shutdown()],
});
configured();
