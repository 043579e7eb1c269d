import { MCP_PATH } from '@flowdesk/contracts';
import type { EventBus, Subscription } from '@flowdesk/bus';
import type { Database } from '@flowdesk/db';
import { createService, type Service } from '@flowdesk/service-kit';
import { AuthClient, subscribeToRevocations } from '@flowdesk/service-kit';
import { createPrismaClient } from './adapters/db.ts';
import { inProcessSessionCache } from './adapters/session-cache.ts';
import { sqlStreamEvents } from './adapters/stream-event-store.ts';
import { prismaSessionStore } from './adapters/session-store.ts';
import { WorkspaceClient } from './adapters/workspace-client.ts';
import { conformanceRouting, guardConformanceMode } from './conformance/mode.ts';
import { corsRoutes } from './routes/cors.ts';
import { DEFAULT_ANONYMOUS_INITIALIZE_LIMIT, mcpRoutes } from './routes/mcp.ts';
import type { RateLimit } from '@flowdesk/service-kit';
import { wellKnownRoutes } from './routes/well-known.ts';

export interface McpGatewayDeps {
  /** An opened, migrated database (see migrateGateway): the sessions live there. */
  db: Database;
  /** The externally visible base URL: the resource URL and the discovery document are built from it. */
  publicBaseUrl: string;
  /** The auth service: introspection and token exchange. */
  authUrl: string;
  /** This service's secret at auth (HTTP Basic as `mcp-gateway`). */
  serviceClientSecret: string;
  serviceClientId?: string;
  /** workspace-api, where every tool call goes (but the runs reads). */
  workspaceApiUrl: string;
  /** The workflow engine, which serves the runs API (list_workflow_runs, get_workflow_run, ...). */
  engineUrl?: string;
  /** Browser origins allowed besides PUBLIC_BASE_URL's own (DNS-rebinding protection). */
  allowedOrigins?: readonly string[];
  /**
   * Origins of browser-based MCP clients (MCP_CORS_ORIGINS): they get CORS answers (preflight,
   * exposed Mcp-Session-Id) and pass the Origin check.
   */
  corsOrigins?: readonly string[];
  /** `initialize` without a token per client address (default 30 per minute). */
  anonymousInitializeLimit?: RateLimit;
  /** How long an active introspection answer is reused (default 30 s): the revocation delay. */
  introspectionCacheMs?: number;
  /** pino level, or 'silent' (tests). Default LOG_LEVEL or info. */
  logLevel?: string;
  /** Where log lines go (default stdout); tests read them to prove no token is logged. */
  logStream?: { write(line: string): void };
  /** Clock port: session idle expiry and cache lifetimes. */
  clock?: () => Date;
  /**
   * Where auth announces revocations (CREDENTIAL_REVOKED_TOPIC): cached results for a revoked
   * credential are evicted on arrival. Optional: without it only the cache TTL bounds revocation.
   */
  bus?: Pick<EventBus, 'subscribe'>;
  /**
   * Serve the MCP conformance suite's fixtures, unauthenticated, instead of the Flowdesk catalogue
   * (docs/mcp-gateway.md, "Conformance"). Loopback only: listen() refuses any other address and
   * non-loopback clients get 403. Never set in production.
   */
  conformanceMode?: boolean;
  /** An SSE answer still open after this long is closed and the client polls for it (docs/mcp-gateway.md, "SSE polling"). */
  ssePollAfterMs?: number;
}

export async function buildApp(deps: McpGatewayDeps): Promise<Service> {
  const now = deps.clock ?? (() => new Date());
  const publicBaseUrl = deps.publicBaseUrl.replace(/\/+$/, '');
  const prisma = createPrismaClient(deps.db);
  const auth = new AuthClient({
    url: deps.authUrl,
    clientId: deps.serviceClientId ?? 'mcp-gateway',
    clientSecret: deps.serviceClientSecret,
    now,
    resource: `${publicBaseUrl}${MCP_PATH}`,
    activeTtlMs: deps.introspectionCacheMs,
  });
  const workspace = new WorkspaceClient(deps.workspaceApiUrl, { engineUrl: deps.engineUrl });
  const app = createService({
    name: 'mcp-gateway',
    logLevel: deps.logLevel,
    logStream: deps.logStream,
    readiness: async () => {
      await deps.db.exec('SELECT 1');
    },
  });
  // Consuming revocations starts with the app and stops with it (before the auth client closes).
  let revocations: Subscription | undefined;
  const bus = deps.bus;
  if (bus) {
    app.addHook('onReady', async () => {
      revocations = await subscribeToRevocations(bus, auth, app.log, now);
    });
  }
  app.addHook('onClose', async () => {
    await revocations?.close();
    revocations = undefined;
    await Promise.allSettled([auth.close(), workspace.close(), prisma.$disconnect()]);
  });
  if (deps.conformanceMode) guardConformanceMode(app);
  const corsOrigins = new Set((deps.corsOrigins ?? []).map((o) => o.replace(/\/+$/, '').toLowerCase()));
  const allowedOrigins = new Set([new URL(publicBaseUrl).origin, ...(deps.allowedOrigins ?? [])].map((o) => o.toLowerCase()).concat([...corsOrigins]));
  // Hooks of the app itself (not a child context): CORS headers go on every route's answer, errors included.
  await corsRoutes(corsOrigins)(app);
  await app.register(wellKnownRoutes(publicBaseUrl));
  // On PGlite every replica is in this process (nothing else can open it): sessions are mirrored in
  // memory and a check costs no query. On Postgres each request reads the row (docs/mcp-gateway.md, "Performance").
  const store = prismaSessionStore(prisma, deps.db.exec);
  const sessions = deps.db.kind === 'pglite' ? inProcessSessionCache(deps.db, store) : store;
  await app.register(
    mcpRoutes({
      publicBaseUrl,
      allowedOrigins,
      sessions,
      auth,
      workspace,
      now,
      conformance: deps.conformanceMode ? conformanceRouting() : undefined,
      anonymousInitializeLimit: deps.anonymousInitializeLimit ?? DEFAULT_ANONYMOUS_INITIALIZE_LIMIT,
      streamEvents: sqlStreamEvents(deps.db.exec),
      ...(deps.ssePollAfterMs !== undefined ? { ssePollAfterMs: deps.ssePollAfterMs } : {}),
    }),
  );
  return app;
}
