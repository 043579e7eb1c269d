import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MCP_PATH } from '@flowdesk/contracts';
import { parseAllowlist } from '@flowdesk/contracts/ssrf';
import type { EventBus, Subscription } from '@flowdesk/bus';
import { AuthClient, basicAuthorization, createService, subscribeToRevocations, type Service } from '@flowdesk/service-kit';
import { Upstream } from './adapters/upstream.ts';
import { parseTraceUrlTemplate } from './domain/trace-url.ts';
import { API_PREFIX } from './domain/upstreams.ts';
import { OpenStreams } from './domain/open-streams.ts';
import { edgeRoutes } from './routes/edge.ts';
import { referenceRoutes } from './routes/reference.ts';
import { webRoutes } from './routes/web.ts';

/** Where `npm run build:web` puts the front end (dist/web: the image keeps dist/ of every workspace). */
export const DEFAULT_WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/web');

export interface ConsoleDeps {
  /** The externally visible base URL: cookie flags (Secure on https), allowed origin, the document's server. */
  publicBaseUrl: string;
  /** The auth service: introspection, token exchange, and the account routes (/auth/v1). */
  authUrl: string;
  /** This service's secret at auth (HTTP Basic as `console`). */
  serviceClientSecret: string;
  serviceClientId?: string;
  /** workspace-api (internal only): everything under /api/v1 that is not an account route. */
  workspaceApiUrl: string;
  /** The workflow engine: the runs API (/api/v1/workflow-runs, /api/v1/workflows/:id/runs). */
  engineUrl: string;
  /** The built front end; default dist/web of this package. */
  webRoot?: string;
  /** Browser origins allowed to write besides PUBLIC_BASE_URL's. */
  allowedOrigins?: readonly string[];
  /** How long an active introspection answer is reused (default 30 s; revocation events evict sooner). */
  introspectionCacheMs?: number;
  /**
   * TRACE_URL_TEMPLATE, e.g. `https://grafana.example/explore?traceId={traceId}`: the run page links a
   * run's trace through it (checked by parseTraceUrlTemplate; an invalid one fails the start).
   */
  traceUrlTemplate?: string;
  /**
   * SSRF_ALLOWLIST as the engine has it: GET /session hands it to the editor, whose warning under an
   * outbound URL then stays quiet for what it opens (checked with parseAllowlist: a malformed one fails the start).
   */
  ssrfAllowlist?: string;
  /** Revocation events from auth (CREDENTIAL_REVOKED_TOPIC): cached answers for a revoked credential go at once. */
  bus?: Pick<EventBus, 'subscribe'>;
  logLevel?: string;
  logStream?: { write(line: string): void };
  clock?: () => Date;
}

/** AuthClient's default reuse of an active introspection answer. */
const DEFAULT_INTROSPECTION_CACHE_MS = 30_000;

/** The allowlist's entries, checked (a typo fails the start, as at the engine) and joined by commas. */
function ssrfAllowlistText(text: string | undefined): string {
  parseAllowlist(text);
  return (text ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .join(',');
}

/** The console: the web front end at `/` and the public API edge at /api/v1 (docs/console.md). */
export async function buildApp(deps: ConsoleDeps): Promise<Service> {
  const now = deps.clock ?? (() => new Date());
  const ssrfAllowlist = ssrfAllowlistText(deps.ssrfAllowlist);
  const publicBaseUrl = deps.publicBaseUrl.replace(/\/+$/, '');
  const clientId = deps.serviceClientId ?? 'console';
  const auth = new AuthClient({
    url: deps.authUrl,
    clientId,
    clientSecret: deps.serviceClientSecret,
    now,
    // OAuth access tokens are issued for the MCP endpoint (the one resource Flowdesk's auth serves):
    // the public API accepts them as the same user's credential, with the same scopes.
    resource: `${publicBaseUrl}${MCP_PATH}`,
    audienceFreeTypes: ['api_key', 'console_session'],
    activeTtlMs: deps.introspectionCacheMs,
  });
  const authApi = new Upstream(deps.authUrl);
  const workspace = new Upstream(deps.workspaceApiUrl);
  const engine = new Upstream(deps.engineUrl);
  const app = createService({ name: 'console', logLevel: deps.logLevel, logStream: deps.logStream });
  let revocations: Subscription | undefined;
  // Open runs streams end when their credential is revoked, like the cached answers for it.
  const streams = new OpenStreams();
  const bus = deps.bus;
  if (bus) {
    app.addHook('onReady', async () => {
      revocations = await subscribeToRevocations(bus, { evict: (target) => auth.evict(target) + streams.end(target) }, app.log, now, 'console');
    });
  }
  app.addHook('onClose', async () => {
    await revocations?.close();
    revocations = undefined;
    await Promise.allSettled([auth.close(), authApi.close(), workspace.close(), engine.close()]);
  });
  const allowedOrigins = new Set([new URL(publicBaseUrl).origin, ...(deps.allowedOrigins ?? [])].map((o) => o.toLowerCase()));
  await app.register(
    referenceRoutes({ upstreams: { 'workspace-api': workspace, auth: authApi, 'workflow-engine': engine }, publicBaseUrl, now, log: app.log }),
    { prefix: API_PREFIX },
  );
  const consoleClientAuthorization = basicAuthorization(clientId, deps.serviceClientSecret);
  await app.register(
    edgeRoutes({
      auth,
      authApi,
      consoleClientAuthorization,
      workspace,
      engine,
      secureCookies: publicBaseUrl.startsWith('https:'),
      allowedOrigins,
      ssrfAllowlist,
      now,
      streams,
      // At least a second apart: INTROSPECTION_CACHE_MS=0 (no cache) must not mean a check per tick.
      streamRecheckMs: Math.max(1_000, deps.introspectionCacheMs ?? DEFAULT_INTROSPECTION_CACHE_MS),
    }),
    {
      prefix: API_PREFIX,
    },
  );
  await app.register(webRoutes(deps.webRoot ?? DEFAULT_WEB_ROOT, { traceUrlTemplate: parseTraceUrlTemplate(deps.traceUrlTemplate) }));
  return app;
}
