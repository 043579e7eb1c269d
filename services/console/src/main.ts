import { openBus } from '@flowdesk/bus';
import { openDatabase, type Database } from '@flowdesk/db';
import { exitOnConfigError, readConfig, requiredEnv, startTracing, serveService } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';

// A missing or bad configuration value ends the process with one line naming it (exit 78), not a
// stack trace; removed once the service listens.
const configured = exitOnConfigError('console');
// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; off otherwise (docs/observability.md).
const tracing = startTracing({ serviceName: 'console' });

// The service's own process (its container's entrypoint): configuration from the environment.
const config = readConfig(() => loadConfig(process.env));
// Revocation events from auth: Kafka when KAFKA_BROKERS is set, else the embedded bus on DATABASE_URL
// (the console owns no tables; the database is only the bus's).
let db: Database | undefined;
const bus = await openBus('console', async () => (db = await openDatabase({ kind: 'postgres', url: requiredEnv(process.env, 'DATABASE_URL') })));
const app = await buildApp({ ...config, bus });
// serveService (libs/service-kit): /metrics on METRICS_PORT, graceful SIGTERM, then the public port.
await serveService(app, {
  name: 'console',
  port: config.port,
  host: config.host,
  closeAfter: [() => bus.close(), () => db?.close(), () => tracing.shutdown()],
});
configured();
