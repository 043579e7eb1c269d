import { hkdfSync } from 'node:crypto';
import type { EventBus } from '@flowdesk/bus';
import type { Database } from '@flowdesk/db';
import { listen, serviceTokenSource, userTokenSource, type Service } from '@flowdesk/service-kit';
import { buildApp as buildWorkspaceApi } from '@flowdesk/workspace-api';
import { buildApp as buildAuth } from '@flowdesk/auth';
import { DEMO_EMAIL } from './demo-account.ts';
import { buildApp as buildMcpGateway, withInProcessRevocations } from '@flowdesk/mcp-gateway';
import { buildApp as buildWebhookIngest, formTokenKey, workspaceApiDirectory } from '@flowdesk/webhook-ingest';
import { buildApp as buildWorkflowEngine, createGuardedHttpClient, createSmtpMailer, SsrfPolicy, workspaceClient } from '@flowdesk/workflow-engine';
import { buildApp as buildConsole } from '@flowdesk/console';
import type { EmbeddedConfig } from './config.ts';
import type { EmbeddedKeys } from './keys.ts';
import type { Route } from './routing.ts';

// Start order: each service after the ones it calls (the gateway and the console read runs from the engine).
export const SERVICE_NAMES = ['workspace-api', 'auth', 'workflow-engine', 'mcp-gateway', 'webhook-ingest', 'console'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** The same prefixes the Kubernetes ingress routes; keep the two in step. */
export const PUBLIC_ROUTES: readonly Route[] = [
  // The public API edge (docs/console.md): sessions and users' credentials in, internal tokens out.
  // workspace-api itself is internal only (it accepts nothing but internal tokens).
  { prefix: '/api/v1', service: 'console' },
  { prefix: '/functions/v1/mcp-server-v2', service: 'mcp-gateway' },
  // A parked run's resume link (the Wait node; the secret in the link is the credential): the engine's public route.
  { prefix: '/api/v1/resume/', service: 'workflow-engine' },
  { prefix: '/functions/v1/webhook-trigger/', service: 'webhook-ingest' },
  // The hosted forms of form-trigger workflows (docs/triggers.md, "Form"): pages for people, served by ingest.
  { prefix: '/form/', service: 'webhook-ingest' },
  // RFC 9728 metadata of the MCP endpoint; the longer prefix wins over /.well-known/ (routing.ts).
  { prefix: '/.well-known/oauth-protected-resource', service: 'mcp-gateway' },
  { prefix: '/.well-known/', service: 'auth' },
  { prefix: '/oauth/', service: 'auth' },
  // Key management and Connected Apps, called with the user's own key. Nothing under /internal/ is public.
  { prefix: '/auth/', service: 'auth' },
  // The web console: every path no other prefix takes (the shortest prefix, so the last choice).
  { prefix: '/', service: 'console' },
];

export interface ServiceDeps {
  db: Database;
  /** The in-process event bus on the same database (Kafka's stand-in). */
  bus: EventBus;
  /** SSRF_ALLOWLIST for the HTTP Request node (docs/workflow-engine.md); nothing by default. */
  ssrfAllowlist?: string;
  /** TRACE_URL_TEMPLATE for the console's run page. */
  traceUrlTemplate?: string;
  keys: EmbeddedKeys;
  publicBaseUrl: string;
  logLevel: string;
  /** The engine's clock (schedules read it); tests move time with it. Default the real time. */
  engineClock?: () => Date;
  /** MCP_CORS_ORIGINS: browser MCP clients' origins, for the gateway and auth's OAuth endpoints. */
  corsOrigins?: readonly string[];
  /** MCP_ALLOWED_ORIGINS: more origins the MCP endpoint accepts (no CORS). */
  allowedOrigins?: readonly string[];
  /** The services' own variables (EmbeddedConfig): sign-up, sessions, the console's origins, caches, engine and ingest limits. */
  tuning?: Pick<
    EmbeddedConfig,
    | 'signupMode'
    | 'sessionPolicy'
    | 'oauthLimits'
    | 'consoleAllowedOrigins'
    | 'introspectionCacheMs'
    | 'engineTuning'
    | 'webhookAdmission'
    | 'respondTimeoutMs'
    | 'forms'
  >;
}

export interface RunningService {
  name: ServiceName;
  url: string;
  app: Service;
}

/** The services started so far (they start in SERVICE_NAMES order): loopback URL and app. */
type Started = Partial<Record<ServiceName, { url: string; app: Service }>>;
const startedOf = (started: Started, name: ServiceName) => {
  const one = started[name];
  if (!one) throw new Error(`${name} must start before the services that call it`);
  return one;
};
const urlOf = (started: Started, name: ServiceName): string => startedOf(started, name).url;
/** How a service that calls others obtains its internal tokens: from auth, with its own secret. */
const tokenOptions = (d: ServiceDeps, started: Started, service: string) => ({
  authUrl: urlOf(started, 'auth'),
  clientId: service,
  clientSecret: d.keys.serviceClients[service] ?? '',
  audience: 'workspace-api',
});

/**
 * Auth and the gateway share this process: revocation events also reach the gateway in-process
 * before auth answers the revoke (docs/auth.md, "Revocation events"). One wrapper per bus.
 */
const revocationBuses = new WeakMap<EventBus, EventBus>();
const revocationBus = (bus: EventBus): EventBus => {
  let wrapped = revocationBuses.get(bus);
  if (!wrapped) revocationBuses.set(bus, (wrapped = withInProcessRevocations(bus)));
  return wrapped;
};

const builders: Record<ServiceName, (deps: ServiceDeps, started: Started) => Promise<Service>> = {
  'workspace-api': (d) =>
    buildWorkspaceApi({
      db: d.db,
      jwtPublicKeyPem: d.keys.signing.publicKeyPem,
      webhookSecretKey: d.keys.webhookSecretKey,
      publicBaseUrl: d.publicBaseUrl,
      logLevel: d.logLevel,
      // workflow.changed events, through its outbox, for the caches of ingest and the engine.
      events: d.bus,
    }),
  auth: (d) =>
    buildAuth({
      db: d.db,
      signingKeys: d.keys.signing,
      serviceClients: d.keys.serviceClients,
      publicBaseUrl: d.publicBaseUrl,
      logLevel: d.logLevel,
      events: revocationBus(d.bus),
      corsOrigins: d.corsOrigins,
      signupMode: d.tuning?.signupMode,
      sessionPolicy: d.tuning?.sessionPolicy,
      ...d.tuning?.oauthLimits,
      // The first-run and sign-in pages name the demo account while it is enabled (docs/console.md).
      demoAccountEmail: DEMO_EMAIL,
      // The same allowlist as the HTTP Request node: where Client ID Metadata Documents may come from besides public addresses.
      ssrfAllowlist: d.ssrfAllowlist,
    }),
  'mcp-gateway': (d, started) =>
    buildMcpGateway({
      db: d.db,
      publicBaseUrl: d.publicBaseUrl,
      authUrl: urlOf(started, 'auth'),
      serviceClientSecret: d.keys.serviceClients['mcp-gateway'] ?? '',
      workspaceApiUrl: urlOf(started, 'workspace-api'),
      engineUrl: urlOf(started, 'workflow-engine'),
      corsOrigins: d.corsOrigins,
      allowedOrigins: d.allowedOrigins,
      introspectionCacheMs: d.tuning?.introspectionCacheMs,
      logLevel: d.logLevel,
      // Revocation events from auth, so a revoked credential's cached introspection dies at once.
      bus: revocationBus(d.bus),
    }),
  'webhook-ingest': (d, started) =>
    buildWebhookIngest({
      bus: d.bus,
      directory: workspaceApiDirectory({
        workspaceApiUrl: urlOf(started, 'workspace-api'),
        token: serviceTokenSource(tokenOptions(d, started, 'webhook-ingest')),
      }),
      definitionEvents: { groupId: 'webhook-ingest.definitions' },
      ownerThrottle: { groupId: 'webhook-ingest.owner-throttle' },
      // One replica: the answers of waiting webhooks come back on the reply topic of this bus.
      replies: { replica: 'webhook-ingest.replies', timeoutMs: d.tuning?.respondTimeoutMs },
      ...d.tuning?.webhookAdmission,
      // The hosted forms' token key: FORM_TOKEN_SECRET's, else derived from the keys file (it outlives a restart,
      // so a page opened before one still submits after it).
      forms: { ...d.tuning?.forms, tokenKey: d.tuning?.forms?.tokenKey ?? formTokenKey(d.keys.webhookSecretKey) },
      logLevel: d.logLevel,
    }),
  'workflow-engine': async (d, started) => {
    const policy = SsrfPolicy.fromEnv({ SSRF_ALLOWLIST: d.ssrfAllowlist });
    const http = createGuardedHttpClient({ policy });
    // Send Email's SMTP servers pass the same SSRF policy as HTTP Request's URLs.
    const mail = createSmtpMailer({ policy });
    // workspace-api is in this process: the engine's calls go to its routes in process, no socket
    // (the same token check, validation and serialisation; docs/development.md, "In-process hops").
    const workspace = workspaceClient({
      workspaceApi: startedOf(started, 'workspace-api').app,
      userToken: userTokenSource(tokenOptions(d, started, 'workflow-engine')),
      serviceToken: serviceTokenSource(tokenOptions(d, started, 'workflow-engine')),
    });
    // The credentials key is derived from the stored secret key (HKDF, its own label): one key file,
    // and the webhook secrets' key itself is never used for another purpose (docs/credentials.md).
    const credentialsKey = { key: Buffer.from(hkdfSync('sha256', d.keys.webhookSecretKey, Buffer.alloc(0), 'flowdesk credentials v1', 32)), keyId: 'e1' };
    const app = await buildWorkflowEngine({
      bus: d.bus,
      db: d.db,
      jwtPublicKeyPem: d.keys.signing.publicKeyPem,
      http,
      mail,
      workspace,
      credentialsKey,
      logLevel: d.logLevel,
      clock: d.engineClock,
      concurrency: d.tuning?.engineTuning?.concurrency,
      workflowConcurrency: d.tuning?.engineTuning?.workflowConcurrency,
      // Tests that move the engine's clock look for ticks often; otherwise SCHEDULER_POLL_MS (0: none).
      scheduler: { pollMs: d.engineClock ? 50 : d.tuning?.engineTuning?.scheduler.pollMs },
      retention: d.tuning?.engineTuning?.retention,
      sandbox: d.tuning?.engineTuning?.sandbox,
      // Resume links of waiting runs (the Wait node) are published under the public base URL.
      publicBaseUrl: d.publicBaseUrl,
      waits: d.tuning?.engineTuning?.waits,
      retryParkMs: d.tuning?.engineTuning?.retryParkMs,
      limits: d.tuning?.engineTuning?.limits,
      quotas: d.tuning?.engineTuning?.quotas,
      fairness: d.tuning?.engineTuning?.fairness,
      metricsTopOwners: d.tuning?.engineTuning?.metricsTopOwners,
    });
    app.addHook('onClose', async () => {
      await http.close();
      await workspace.close();
    });
    return app;
  },
  console: (d, started) =>
    buildConsole({
      publicBaseUrl: d.publicBaseUrl,
      authUrl: urlOf(started, 'auth'),
      serviceClientSecret: d.keys.serviceClients.console ?? '',
      workspaceApiUrl: urlOf(started, 'workspace-api'),
      engineUrl: urlOf(started, 'workflow-engine'),
      traceUrlTemplate: d.traceUrlTemplate,
      ssrfAllowlist: d.ssrfAllowlist,
      allowedOrigins: d.tuning?.consoleAllowedOrigins,
      introspectionCacheMs: d.tuning?.introspectionCacheMs,
      logLevel: d.logLevel,
      bus: revocationBus(d.bus),
    }),
};

/**
 * Every service in this process, each on its own loopback port exactly as it would run alone, so
 * what the front forwards to is the real HTTP surface. If one fails, the started ones are closed.
 */
export async function startServices(deps: ServiceDeps): Promise<RunningService[]> {
  const running: RunningService[] = [];
  try {
    const started: Started = {};
    for (const name of SERVICE_NAMES) {
      const app = await builders[name](deps, started);
      try {
        running.push({ name, app, url: await listen(app, 0, '127.0.0.1') });
        started[name] = running[running.length - 1]!;
      } catch (err) {
        await app.close();
        throw err;
      }
    }
    return running;
  } catch (err) {
    await closeServices(running);
    throw err;
  }
}

export async function closeServices(services: readonly RunningService[]): Promise<void> {
  await Promise.allSettled(services.map((s) => s.app.close()));
}
