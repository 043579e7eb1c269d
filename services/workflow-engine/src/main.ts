import { readFileSync } from 'node:fs';
import { instanceGroupId, openBus } from '@flowdesk/bus';
import { openDatabase } from '@flowdesk/db';
import {
  ConfigError,
  createGuardedHttpClient,
  exitOnConfigError,
  readConfig,
  requiredEnv,
  serviceTokenSource,
  SsrfPolicy,
  userTokenSource,
  startTracing,
  serveService,
} from '@flowdesk/service-kit';
import { buildApp, ENGINE_GROUP } from './app.ts';
import { engineTuningFromEnv, positiveInteger } from './config.ts';
import { migrateEngine } from './adapters/run-store.ts';
import { workspaceClient } from './adapters/workspace-client.ts';
import { createSmtpMailer } from './adapters/smtp-mailer.ts';

// A missing or bad configuration value ends the process with one line naming it (exit 78), not a
// stack trace; removed once the service listens.
const configured = exitOnConfigError('workflow-engine');
// Traces by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; off otherwise (docs/observability.md).
const tracing = startTracing({ serviceName: 'workflow-engine' });

// The service's own process (its container's entrypoint): configuration from the environment
// (docs/configuration.md). Kafka when KAFKA_BROKERS is set, else the embedded bus on DATABASE_URL.
const required = (name: string) => requiredEnv(process.env, name);

/** CREDENTIALS_KEY (base64, 32 bytes), its id, and CREDENTIALS_PREVIOUS_KEYS `id:base64,…` for a rotation. */
function credentialsKey() {
  const raw = process.env.CREDENTIALS_KEY;
  if (!raw) return undefined;
  const decode = (name: string, v: string) => {
    const key = Buffer.from(v, 'base64');
    if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes, base64`);
    return key;
  };
  const previous: Record<string, Buffer> = {};
  for (const entry of (process.env.CREDENTIALS_PREVIOUS_KEYS ?? '').split(',').filter(Boolean)) {
    const [id, value] = entry.split(':');
    if (!id || !value) throw new ConfigError('CREDENTIALS_PREVIOUS_KEYS must be id:base64[,id:base64…]');
    previous[id.trim()] = decode('CREDENTIALS_PREVIOUS_KEYS', value.trim());
  }
  return { key: decode('CREDENTIALS_KEY', raw), keyId: process.env.CREDENTIALS_KEY_ID || 'k1', previous };
}

// Every value read and checked before the first connection: a bad one stops the start at once.
const databaseUrl = required('DATABASE_URL');
const poolMax = readConfig(() => positiveInteger(process.env, 'DATABASE_POOL_MAX', 10));
// ENGINE_CONCURRENCY, ENGINE_WORKFLOW_CONCURRENCY, and SCHEDULER_POLL_MS: how often this replica looks
// for due schedule ticks (docs/triggers.md); 0 turns it off.
const tuning = readConfig(() => engineTuningFromEnv(process.env));
const ssrfPolicy = readConfig(() => SsrfPolicy.fromEnv(process.env));
const credentials = credentialsKey();
const jwtPublicKeyPem = required('INTERNAL_JWT_PUBLIC_KEY');
const tokenOptions = {
  authUrl: required('AUTH_URL'),
  clientId: 'workflow-engine',
  clientSecret: required('WORKFLOW_ENGINE_CLIENT_SECRET'),
  audience: 'workspace-api',
};
const workspaceApiUrl = required('WORKSPACE_API_URL');

const db = await openDatabase({ kind: 'postgres', url: databaseUrl, poolMax });
if (process.env.MIGRATE_ON_START === 'true') await migrateEngine(db);
const bus = await openBus('workflow-engine', async () => db);
const http = createGuardedHttpClient({ policy: ssrfPolicy });
// Send Email's SMTP client: the same SSRF policy; SMTP_TLS_CA_FILE (PEM) adds the authorities a server's
// certificate may chain to (a private CA, a self-signed server): the one way to accept such a certificate.
const smtpCa = process.env.SMTP_TLS_CA_FILE ? readConfig(() => readFileSync(process.env.SMTP_TLS_CA_FILE!, 'utf8')) : undefined;
const mail = createSmtpMailer({ policy: ssrfPolicy, ...(smtpCa ? { ca: smtpCa } : {}) });
const workspace = workspaceClient({
  workspaceApiUrl,
  userToken: userTokenSource(tokenOptions),
  serviceToken: serviceTokenSource(tokenOptions),
});
const app = await buildApp({
  bus,
  db,
  http,
  mail,
  workspace,
  jwtPublicKeyPem,
  credentialsKey: credentials,
  ...tuning,
  // Every replica keeps its own definition cache, so each process follows workflow.changed in a group
  // of its own (two engines on one host included); app.ts subscribes with it as ephemeral.
  definitionsGroup: instanceGroupId(`${ENGINE_GROUP}.definitions`),
  logLevel: process.env.LOG_LEVEL,
  // The base of waiting runs' resume links (the Wait node); without it a link is a path only.
  publicBaseUrl: process.env.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
});
// serveService (libs/service-kit): /metrics on METRICS_PORT, never the public port. On SIGTERM /readyz
// answers 503 at once; app.close() stops accepting, and its onClose hook closes the subscriptions,
// which wait for the runs in flight and record them done (Kafka: commits their offsets); then the bus,
// the HTTP clients and the pool close. Registered before listening, so a signal during start-up stops
// gracefully too. Exit 0, or 1 when SHUTDOWN_GRACE_MS runs out.
await serveService(app, {
  name: 'workflow-engine',
  port: Number(process.env.PORT || 3005),
  host: process.env.HOST || '0.0.0.0',
  closeAfter: [() => bus.close(), () => http.close(), () => workspace.close(), () => db.close(), () => tracing.shutdown()],
});
configured();
