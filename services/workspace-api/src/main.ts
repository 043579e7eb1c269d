import { openBus } from '@flowdesk/bus';
import { openDatabase } from '@flowdesk/db';
import { listen, onShutdown, listenMetrics, startTracing } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { migrateWorkspace } from './adapters/db.ts';
import { loadConfig } from './config.ts';

// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; off otherwise (docs/observability.md).
const tracing = startTracing({ serviceName: 'workspace-api' });

// The service's own process (its container's entrypoint): configuration from the environment.
const config = loadConfig(process.env);
const db = await openDatabase(config.database);
if (config.migrateOnStart) await migrateWorkspace(db);
// workflow.changed events leave through the outbox relay onto the bus (Kafka, or the embedded bus here).
const bus = await openBus('workspace-api', async () => db);
const app = await buildApp({
  db,
  jwtPublicKeyPem: config.jwtPublicKeyPem,
  webhookSecretKey: config.webhookSecretKey,
  publicBaseUrl: config.publicBaseUrl,
  events: bus,
});
// /metrics (and /healthz, /readyz) on METRICS_PORT (9464), never on the public port.
const metrics = await listenMetrics({ apps: [{ name: 'workspace-api', app }] });
// SIGTERM (libs/service-kit lifecycle.ts): /readyz answers 503 at once; app.close() stops accepting
// and lets in-flight requests finish; then the pool closes. Registered before listening, so a signal
// during start-up stops gracefully too. Exit 0, or 1 when SHUTDOWN_GRACE_MS runs out.
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
