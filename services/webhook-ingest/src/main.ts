import { instanceGroupId, openBus } from '@flowdesk/bus';
import { openDatabase, type Database } from '@flowdesk/db';
import { exitOnConfigError, readConfig, requiredEnv, serviceTokenSource, startTracing, serveService } from '@flowdesk/service-kit';
import { buildApp } from './app.ts';
import { admissionFromEnv, formsFromEnv } from './config.ts';
import { replyPartitionFromEnv, respondTimeoutFromEnv } from './domain/reply-waiter.ts';
import { workspaceApiDirectory } from './adapters/workspace-directory.ts';

// A missing or bad configuration value ends the process with one line naming it (exit 78), not a
// stack trace; removed once the service listens.
const configured = exitOnConfigError('webhook-ingest');
// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; off otherwise (docs/observability.md).
const tracing = startTracing({ serviceName: 'webhook-ingest' });

// The service's own process (its container's entrypoint): configuration from the environment
// (docs/configuration.md). Kafka when KAFKA_BROKERS is set, else the embedded bus on DATABASE_URL.
const required = (name: string) => requiredEnv(process.env, name);

// Every value read and checked before the first connection: a bad one stops the start at once.
const admission = readConfig(() => admissionFromEnv(process.env));
const respondTimeoutMs = readConfig(() => respondTimeoutFromEnv(process.env));
const replyPartition = readConfig(() => replyPartitionFromEnv(process.env));
const workspaceApiUrl = required('WORKSPACE_API_URL');
if (!process.env.KAFKA_BROKERS) required('DATABASE_URL');
const clientSecret = required('WEBHOOK_INGEST_CLIENT_SECRET');
// FORM_SUBMISSIONS_PER_MINUTE; the hosted forms' token key: FORM_TOKEN_SECRET, else derived from the client secret.
const forms = readConfig(() => formsFromEnv(process.env, clientSecret));
const token = serviceTokenSource({
  authUrl: required('AUTH_URL'),
  clientId: 'webhook-ingest',
  clientSecret,
  audience: 'workspace-api',
});

let db: Database | undefined;
const bus = await openBus('webhook-ingest', async () => (db = await openDatabase({ kind: 'postgres', url: required('DATABASE_URL') })));
const app = await buildApp({
  bus,
  // WEBHOOK_RATE_LIMIT_PER_SECOND, WEBHOOK_RATE_LIMIT_BURST, WEBHOOK_MAX_BACKLOG.
  ...admission,
  forms,
  directory: workspaceApiDirectory({ workspaceApiUrl, token }),
  // Each replica keeps its own trigger cache, evicted by workflow.changed events: a group per process
  // (two on one host included), deleted when it closes.
  definitionEvents: { groupId: instanceGroupId('webhook-ingest.definitions') },
  ownerThrottle: { groupId: instanceGroupId('webhook-ingest.owner-throttle') },
  // Answers of waiting webhooks (responseMode): this replica's own id on the reply topic, and the
  // partition it reads there (REPLY_PARTITION: the StatefulSet's pod index in k8s).
  replies: { replica: instanceGroupId('webhook-ingest.replies'), timeoutMs: respondTimeoutMs, partition: replyPartition },
  logLevel: process.env.LOG_LEVEL,
});
// serveService (libs/service-kit): /metrics on METRICS_PORT, never the public port. On SIGTERM /readyz
// answers 503 at once; app.close() stops accepting and lets in-flight requests finish — each answers
// 200 only once its event is durable on the bus, so nothing acknowledged is lost; then the bus
// (producer) and the pool close. Registered before listening, so a signal during start-up stops
// gracefully too. Exit 0, or 1 when SHUTDOWN_GRACE_MS runs out.
await serveService(app, {
  name: 'webhook-ingest',
  port: Number(process.env.PORT || 3004),
  host: process.env.HOST || '0.0.0.0',
  closeAfter: [() => bus.close(), () => db?.close(), () => tracing.shutdown()],
});
configured();
