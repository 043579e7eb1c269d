import { openBus } from '@flowdesk/bus';
import { openDatabase, type Database } from '@flowdesk/db';
import { listen, onShutdown, requiredEnv, listenMetrics, startTracing } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';

// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; off otherwise (docs/observability.md).
const tracing = startTracing({ serviceName: 'console' });

// The service's own process (its container's entrypoint): configuration from the environment.
const config = loadConfig(process.env);
// Revocation events from auth: Kafka when KAFKA_BROKERS is set, else the embedded bus on DATABASE_URL
// (the console owns no tables; the database is only the bus's).
let db: Database | undefined;
const bus = await openBus('console', async () => (db = await openDatabase({ kind: 'postgres', url: requiredEnv(process.env, 'DATABASE_URL') })));
const app = await buildApp({ ...config, bus });
// /metrics (and /healthz, /readyz) on METRICS_PORT (9464), never on the public port.
const metrics = await listenMetrics({ apps: [{ name: 'console', app }] });
onShutdown(
  async () => {
    await app.close();
    await metrics.close();
    await bus.close();
    await db?.close();
    await tracing.shutdown();
  },
  { app },
);
await listen(app, config.port, config.host);
