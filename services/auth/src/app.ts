import { AUTH_API_PREFIX, ErrorBody, type EventPublisher } from '@flowdesk/contracts';
import type { Database } from '@flowdesk/db';
import {
  createGuardedHttpClient,
  createService,
  PUBLIC_SECURITY,
  PUBLIC_SECURITY_SCHEMES,
  serveOpenApi,
  SsrfPolicy,
  type HttpClient,
  type Service,
  type SigningKeys,
} from '@flowdesk/service-kit';
import { createPrismaClient } from './adapters/db.ts';
import type { AuthContext } from './context.ts';
import type { ServiceClients } from './domain/service-clients.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { connectedAppRoutes } from './routes/connected-apps.ts';
import { oauthRoutes } from './routes/oauth.ts';
import { wellKnownRoutes } from './routes/well-known.ts';
import { oauthCorsRoutes } from './routes/cors.ts';
import { mcpResourceUrl } from './domain/oauth/policy.ts';
import { DEFAULT_CLIENT_METADATA_RATE_LIMIT, MetadataFetchGate } from './domain/oauth/client-metadata.ts';
import { OAUTH_SWEEP, startOAuthSweep } from './domain/oauth/sweep.ts';
import type { RateLimit } from '@flowdesk/service-kit';
import { revocationNotifier } from './domain/revocations.ts';
import { accountRoutes } from './routes/accounts.ts';
import { DEFAULT_SESSION_POLICY, type SessionPolicy } from './domain/sessions.ts';
import { DEFAULT_THROTTLE, LoginThrottle, type ThrottlePolicies } from './domain/login-throttle.ts';
import type { SignupMode } from '@flowdesk/contracts';

export interface AuthDeps {
  /** An opened, migrated database (see migrateAuth). */
  db: Database;
  /** Signs internal tokens (private half); its public half is published at /.well-known/jwks.json. */
  signingKeys: SigningKeys;
  /** Service id → secret: the services allowed to introspect and exchange tokens (HTTP Basic). */
  serviceClients: ServiceClients;
  /** Service ids that may obtain a token for any user by id (default: workflow-engine). */
  userIdExchangeClients?: readonly string[];
  /** pino level, or 'silent' (tests). Default LOG_LEVEL or info. */
  logLevel?: string;
  /** Where log lines go (default stdout); tests read them to prove no secret is logged. */
  logStream?: { write(line: string): void };
  /** Clock port, so time-dependent behaviour can be tested without waiting. */
  clock?: () => Date;
  /** PUBLIC_BASE_URL: the OAuth issuer and the base of every published URL (never the Host header). */
  publicBaseUrl: string;
  /** Dynamic client registrations per caller address (default 20 per 10 minutes). */
  registrationRateLimit?: RateLimit;
  /**
   * Dynamic client registrations over all addresses together. Default: 50 times the per-address
   * limit in the same window (1,000 per 10 minutes), so one caller cannot use it up.
   */
  registrationGlobalRateLimit?: RateLimit;
  /**
   * Where revocations are announced (CREDENTIAL_REVOKED_TOPIC), so gateways evict cached results at
   * once: an @flowdesk/bus EventBus fits. Optional: without it gateways rely on their cache TTL.
   */
  events?: EventPublisher;
  /** Console sessions' idle and absolute lifetimes (SESSION_IDLE_TTL, SESSION_ABSOLUTE_TTL; 7 and 30 days). */
  sessionPolicy?: SessionPolicy;
  /** SIGNUP_MODE (default invite). */
  signupMode?: SignupMode;
  /**
   * The email of the embedded start's demo account (`npm start` only): `GET /setup` names it while
   * that user exists and is enabled, so the console can offer to sign in with it. Unset elsewhere.
   */
  demoAccountEmail?: string;
  /** Login throttling per account and per address (default: docs/auth.md). */
  throttle?: ThrottlePolicies;
  /** TRUST_PROXY (fastify trustProxy): whose X-Forwarded-For to believe. Default: the environment's, else loopback. */
  trustProxy?: string | number;
  /**
   * MCP_CORS_ORIGINS: origins of browser-based MCP clients. They get CORS answers on the OAuth
   * endpoints such a client calls itself (discovery, registration, token, revocation; routes/cors.ts).
   */
  corsOrigins?: readonly string[];
  /**
   * SSRF_ALLOWLIST (the engine's syntax): private hosts or ranges Client ID Metadata Documents may be
   * fetched from. Empty by default: only public addresses.
   */
  ssrfAllowlist?: string;
  /** Replaces the guarded client that fetches Client ID Metadata Documents (tests: one trusting a test CA). */
  clientMetadataHttp?: HttpClient;
  /** Client ID Metadata Document fetches per caller address (default 20 per 10 minutes). */
  clientMetadataRateLimit?: RateLimit;
  /** Document fetches over all addresses together (default 50 times the per-address limit, in its window). */
  clientMetadataGlobalRateLimit?: RateLimit;
  /** GET /oauth/authorize per caller address (default 60 per 10 minutes): each one stores a pending consent request. */
  authorizeRateLimit?: RateLimit;
  /** How often expired consent requests and unused document clients are deleted (default 5 minutes; 0: never, tests). */
  oauthSweepIntervalMs?: number;
}

export const DEFAULT_USER_ID_EXCHANGE_CLIENTS = ['workflow-engine'] as const;
export const DEFAULT_REGISTRATION_RATE_LIMIT: RateLimit = { max: 20, windowMs: 10 * 60_000 };
export const DEFAULT_AUTHORIZE_RATE_LIMIT: RateLimit = { max: 60, windowMs: 10 * 60_000 };

export async function buildApp(deps: AuthDeps): Promise<Service> {
  const prisma = createPrismaClient(deps.db);
  const app = createService({
    name: 'auth',
    logLevel: deps.logLevel,
    logStream: deps.logStream,
    trustProxy: deps.trustProxy,
    readiness: async () => {
      await deps.db.exec('SELECT 1');
    },
  });
  const guarded = deps.clientMetadataHttp ? undefined : createGuardedHttpClient({ policy: SsrfPolicy.fromEnv({ SSRF_ALLOWLIST: deps.ssrfAllowlist }) });
  let sweep: { stop(): Promise<void> } | undefined;
  app.addHook('onClose', async () => {
    await sweep?.stop();
    await prisma.$disconnect();
    await guarded?.close();
  });
  const ctx: AuthContext = {
    prisma,
    signingKeys: deps.signingKeys,
    serviceClients: deps.serviceClients,
    userIdExchangeClients: deps.userIdExchangeClients ?? DEFAULT_USER_ID_EXCHANGE_CLIENTS,
    now: deps.clock ?? (() => new Date()),
    publicBaseUrl: normalizeBaseUrl(deps.publicBaseUrl),
    mcpResource: mcpResourceUrl(normalizeBaseUrl(deps.publicBaseUrl)),
    registrationRateLimit: deps.registrationRateLimit ?? DEFAULT_REGISTRATION_RATE_LIMIT,
    registrationGlobalRateLimit: deps.registrationGlobalRateLimit ?? globalRegistrationLimit(deps.registrationRateLimit ?? DEFAULT_REGISTRATION_RATE_LIMIT),
    revoked: revocationNotifier(deps.events, app.log),
    sessionPolicy: deps.sessionPolicy ?? DEFAULT_SESSION_POLICY,
    signupMode: deps.signupMode ?? 'invite',
    demoAccountEmail: deps.demoAccountEmail,
    throttle: new LoginThrottle(prisma, deps.throttle ?? DEFAULT_THROTTLE),
    clientMetadataHttp: deps.clientMetadataHttp ?? guarded!,
    clientMetadataGate: new MetadataFetchGate(
      {
        perAddress: deps.clientMetadataRateLimit ?? DEFAULT_CLIENT_METADATA_RATE_LIMIT,
        overall: deps.clientMetadataGlobalRateLimit ?? globalRegistrationLimit(deps.clientMetadataRateLimit ?? DEFAULT_CLIENT_METADATA_RATE_LIMIT),
      },
      deps.clock ?? (() => new Date()),
    ),
    authorizeRateLimit: deps.authorizeRateLimit ?? DEFAULT_AUTHORIZE_RATE_LIMIT,
  };
  const sweepIntervalMs = deps.oauthSweepIntervalMs ?? OAUTH_SWEEP.intervalMs;
  // Each replica deletes what anonymous requests leave behind (domain/oauth/sweep.ts); stopped on close, before the client disconnects.
  if (sweepIntervalMs > 0) {
    app.addHook('onReady', async () => {
      sweep = startOAuthSweep(prisma, ctx.now, app.log, sweepIntervalMs);
    });
  }
  app.addSchema(ErrorBody);
  // Its account routes' document (the console merges it into /api/v1/openapi.json), as the edge presents them.
  await serveOpenApi(app, {
    title: 'Flowdesk auth',
    description: 'Accounts, sessions, API keys, connected apps and members, reached through the console edge (docs/console.md).',
    securitySchemes: PUBLIC_SECURITY_SCHEMES,
    security: PUBLIC_SECURITY,
  });
  // On the app itself (not a child context): the CORS headers go on every answer of those paths, errors included.
  await oauthCorsRoutes(deps.corsOrigins ?? [])(app);
  await app.register(wellKnownRoutes(ctx));
  await app.register(oauthRoutes(ctx));
  await app.register(
    async (api: Service) => {
      await api.register(apiKeyRoutes(ctx));
      await api.register(connectedAppRoutes(ctx));
      await api.register(accountRoutes(ctx));
    },
    { prefix: AUTH_API_PREFIX },
  );
  return app;
}

/** An absolute http(s) URL without query or fragment; the trailing slash dropped so paths join cleanly. */
export function normalizeBaseUrl(value: string): string {
  const url = new URL(value);
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash) {
    throw new Error(`PUBLIC_BASE_URL must be an http(s) URL without query or fragment, got ${value}`);
  }
  return value.replace(/\/+$/, '');
}

/** The default ceiling over all addresses: 50 times one address's share, in the same window (registration, document fetches). */
const globalRegistrationLimit = (perAddress: RateLimit): RateLimit => ({ max: 50 * perAddress.max, windowMs: perAddress.windowMs });
