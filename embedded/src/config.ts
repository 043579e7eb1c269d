import path from 'node:path';
import { busConfigFromEnv, type BusConfig } from '@flowdesk/bus';
import { introspectionCacheMsFrom, originList } from '@flowdesk/service-kit';
import { oauthLimitsFrom, parseSignupMode, sessionPolicyFrom, type AuthDeps, type OAuthLimits } from '@flowdesk/auth';
import { engineTuningFromEnv, type EngineTuning } from '@flowdesk/workflow-engine';
import { admissionFromEnv, formsFromEnv, respondTimeoutFromEnv } from '@flowdesk/webhook-ingest';

export interface EmbeddedConfig {
  /** Keys, the demo credentials and (on PGlite) the data live here. */
  home: string;
  /** Port of the front proxy; 0 picks a free one (tests). */
  port: number;
  host: string;
  /** Postgres instead of PGlite when set. */
  databaseUrl: string | undefined;
  /** The URL people and webhooks reach Flowdesk at, when it is not the local one. */
  publicBaseUrl: string | undefined;
  logLevel: string;
  /** SSRF_ALLOWLIST: hosts/CIDRs the HTTP Request node may reach despite the SSRF guard. */
  ssrfAllowlist: string | undefined;
  /** TRACE_URL_TEMPLATE: the console links a run's trace through it (docs/observability.md). */
  traceUrlTemplate?: string;
  /** Tests only: the workflow engine's clock (schedule triggers read it), so a test moves time instead of waiting. */
  engineClock?: () => Date;
  /** TRUST_PROXY: set when the embedded start sits behind another proxy (docs/configuration.md). */
  trustProxy: string | undefined;
  /**
   * MCP_CORS_ORIGINS: origins of browser-based MCP clients, answered with CORS by the MCP endpoint
   * (mcp-gateway) and by the OAuth endpoints such a client calls (auth). Default none.
   */
  corsOrigins?: string[];
  /**
   * MCP_ALLOWED_ORIGINS: more browser origins the MCP endpoint accepts besides the base URL's own
   * (DNS-rebinding protection; no CORS answers for them). Default none.
   */
  allowedOrigins?: string[];
  /**
   * METRICS_PORT: the one metrics listener of the process (docs/observability.md). Default 9464, or
   * 0 (a free one) when PORT is 0 (tests); a busy default falls back to a free port.
   */
  metricsPort: number;
  /** KAFKA_BROKERS set: the services talk through that Kafka instead of the embedded bus. Default embedded. */
  bus?: BusConfig;
  /** SIGNUP_MODE (auth). Default invite. */
  signupMode?: NonNullable<AuthDeps['signupMode']>;
  /** SESSION_IDLE_TTL, SESSION_ABSOLUTE_TTL (auth): console sessions' lifetimes. */
  sessionPolicy?: NonNullable<AuthDeps['sessionPolicy']>;
  /** OAUTH_AUTHORIZE_RATE_LIMIT, OAUTH_CLIENT_METADATA_RATE_LIMIT, OAUTH_CLIENT_METADATA_GLOBAL_RATE_LIMIT (auth). */
  oauthLimits?: OAuthLimits;
  /** CONSOLE_ALLOWED_ORIGINS (console): more origins allowed to write with the session cookie. */
  consoleAllowedOrigins?: string[];
  /** INTROSPECTION_CACHE_MS (console and mcp-gateway). */
  introspectionCacheMs?: number;
  /** ENGINE_CONCURRENCY, ENGINE_WORKFLOW_CONCURRENCY, SCHEDULER_POLL_MS (workflow-engine). */
  engineTuning?: EngineTuning;
  /** WEBHOOK_RATE_LIMIT_PER_SECOND, WEBHOOK_RATE_LIMIT_BURST, WEBHOOK_MAX_BACKLOG (webhook-ingest). */
  webhookAdmission?: ReturnType<typeof admissionFromEnv>;
  /** RESPOND_TIMEOUT_MS (webhook-ingest): how long a webhook waits for its run's answer. */
  respondTimeoutMs?: number;
  /** FORM_SUBMISSIONS_PER_MINUTE, FORM_TOKEN_SECRET (webhook-ingest's hosted forms; without a secret the key comes from the keys file). */
  forms?: ReturnType<typeof formsFromEnv>;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): EmbeddedConfig {
  return {
    home: path.resolve(cwd, env.FLOWDESK_HOME || '.flowdesk'),
    port: parsePort(env.PORT, 8080),
    metricsPort: parsePort(env.METRICS_PORT, env.PORT === '0' ? 0 : 9464, 'METRICS_PORT'),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    publicBaseUrl: env.PUBLIC_BASE_URL ? env.PUBLIC_BASE_URL.replace(/\/+$/, '') : undefined,
    // Quiet by default so the banner stays readable; LOG_LEVEL=info shows every request.
    logLevel: env.LOG_LEVEL || 'warn',
    ssrfAllowlist: env.SSRF_ALLOWLIST || undefined,
    traceUrlTemplate: env.TRACE_URL_TEMPLATE || undefined,
    trustProxy: env.TRUST_PROXY || undefined,
    corsOrigins: originList('MCP_CORS_ORIGINS', env.MCP_CORS_ORIGINS),
    allowedOrigins: originList('MCP_ALLOWED_ORIGINS', env.MCP_ALLOWED_ORIGINS),
    bus: busConfigFromEnv(env),
    // The services' own variables, parsed by the services' own functions: the same names, defaults
    // and errors as their containers (docs/configuration.md).
    signupMode: parseSignupMode(env.SIGNUP_MODE),
    sessionPolicy: sessionPolicyFrom(env),
    oauthLimits: oauthLimitsFrom(env),
    consoleAllowedOrigins: originList('CONSOLE_ALLOWED_ORIGINS', env.CONSOLE_ALLOWED_ORIGINS),
    introspectionCacheMs: introspectionCacheMsFrom(env),
    engineTuning: engineTuningFromEnv(env),
    webhookAdmission: admissionFromEnv(env),
    respondTimeoutMs: respondTimeoutFromEnv(env),
    forms: formsFromEnv(env),
  };
}

function parsePort(value: string | undefined, fallback: number, name = 'PORT'): number {
  if (!value) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${name} must be a port number, got "${value}"`);
  return port;
}
