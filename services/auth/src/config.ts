import type { DatabaseConfig } from '@flowdesk/db';
import { jwkThumbprint, originList, requiredEnv, type RateLimit, type SigningKeys } from '@flowdesk/service-kit';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { DEFAULT_AUTHORIZE_RATE_LIMIT, DEFAULT_USER_ID_EXCHANGE_CLIENTS, normalizeBaseUrl, type AuthDeps } from './app.ts';
import { DEFAULT_CLIENT_METADATA_RATE_LIMIT } from './domain/oauth/client-metadata.ts';
import { parseServiceClients } from './domain/service-clients.ts';
import { parseSignupMode } from './domain/accounts.ts';
import { DEFAULT_SESSION_POLICY, type SessionPolicy } from './domain/sessions.ts';
import type { SignupMode } from '@flowdesk/contracts';

export interface AuthConfig {
  port: number;
  host: string;
  database: DatabaseConfig;
  migrateOnStart: boolean;
  signingKeys: SigningKeys;
  serviceClients: Record<string, string>;
  userIdExchangeClients: string[];
  publicBaseUrl: string;
  signupMode: SignupMode;
  sessionPolicy: SessionPolicy;
  /** MCP_CORS_ORIGINS: browser MCP clients' origins, answered with CORS on the OAuth endpoints they call. */
  corsOrigins: string[];
  /** SSRF_ALLOWLIST: private addresses Client ID Metadata Documents may come from (none by default). */
  ssrfAllowlist: string | undefined;
  /** OAUTH_AUTHORIZE_RATE_LIMIT, OAUTH_CLIENT_METADATA_RATE_LIMIT, OAUTH_CLIENT_METADATA_GLOBAL_RATE_LIMIT. */
  oauthLimits: OAuthLimits;
}

/** The limits at the OAuth edge an anonymous caller reaches (docs/auth.md; docs/configuration.md). */
export type OAuthLimits = Required<Pick<AuthDeps, 'authorizeRateLimit' | 'clientMetadataRateLimit' | 'clientMetadataGlobalRateLimit'>>;

/**
 * A duration: `30d`, `12h`, `45m`, `90s`, or plain seconds. Undefined or empty → the default.
 */
export function parseDuration(name: string, value: string | undefined, defaultMs: number): number {
  const text = (value ?? '').trim();
  if (!text) return defaultMs;
  const match = /^(\d+)\s*(d|h|m|s)?$/.exec(text);
  if (!match || Number(match[1]) <= 0) throw new Error(`${name} must be a duration like 7d, 12h, 30m or 3600 (seconds), got "${text}"`);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[(match[2] ?? 's') as 'd' | 'h' | 'm' | 's'];
  return Number(match[1]) * unit;
}

/**
 * A rate limit: `<count>/<window>`, the window a duration (`20/10m`, `600/1h`, `5/30s`). Undefined or
 * empty → the default. Anything else (a zero count, no window) stops the start naming the variable.
 */
export function parseRateLimit(name: string, value: string | undefined, fallback: RateLimit): RateLimit {
  const text = (value ?? '').trim();
  if (!text) return fallback;
  const match = /^(\d+)\s*\/\s*(\S+)$/.exec(text);
  if (!match || Number(match[1]) <= 0 || !Number.isSafeInteger(Number(match[1]))) {
    throw new Error(`${name} must be <count>/<window> with a count of at least 1, like 20/10m, got "${text}"`);
  }
  return { max: Number(match[1]), windowMs: parseDuration(name, match[2], 0) };
}

/**
 * OAUTH_AUTHORIZE_RATE_LIMIT (GET /oauth/authorize per caller address), OAUTH_CLIENT_METADATA_RATE_LIMIT
 * (Client ID Metadata Document fetches per caller address) and OAUTH_CLIENT_METADATA_GLOBAL_RATE_LIMIT
 * (those fetches over all addresses; by default 50 times the per-address count, in its window).
 */
export function oauthLimitsFrom(env: NodeJS.ProcessEnv): OAuthLimits {
  const clientMetadataRateLimit = parseRateLimit('OAUTH_CLIENT_METADATA_RATE_LIMIT', env.OAUTH_CLIENT_METADATA_RATE_LIMIT, DEFAULT_CLIENT_METADATA_RATE_LIMIT);
  return {
    authorizeRateLimit: parseRateLimit('OAUTH_AUTHORIZE_RATE_LIMIT', env.OAUTH_AUTHORIZE_RATE_LIMIT, DEFAULT_AUTHORIZE_RATE_LIMIT),
    clientMetadataRateLimit,
    clientMetadataGlobalRateLimit: parseRateLimit('OAUTH_CLIENT_METADATA_GLOBAL_RATE_LIMIT', env.OAUTH_CLIENT_METADATA_GLOBAL_RATE_LIMIT, {
      max: 50 * clientMetadataRateLimit.max,
      windowMs: clientMetadataRateLimit.windowMs,
    }),
  };
}

/** SESSION_IDLE_TTL and SESSION_ABSOLUTE_TTL; the idle time may not exceed the absolute one. */
export function sessionPolicyFrom(env: NodeJS.ProcessEnv): SessionPolicy {
  const idleTtlMs = parseDuration('SESSION_IDLE_TTL', env.SESSION_IDLE_TTL, DEFAULT_SESSION_POLICY.idleTtlMs);
  const absoluteTtlMs = parseDuration('SESSION_ABSOLUTE_TTL', env.SESSION_ABSOLUTE_TTL, DEFAULT_SESSION_POLICY.absoluteTtlMs);
  if (idleTtlMs > absoluteTtlMs) throw new Error('SESSION_IDLE_TTL must not be longer than SESSION_ABSOLUTE_TTL');
  return { idleTtlMs, absoluteTtlMs };
}

/** See docs/configuration.md for every variable. */
export function loadConfig(env: NodeJS.ProcessEnv): AuthConfig {
  const privateKeyPem = requiredEnv(env, 'INTERNAL_JWT_PRIVATE_KEY');
  const privateKey = createPrivateKey(privateKeyPem);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('INTERNAL_JWT_PRIVATE_KEY must be an Ed25519 private key (PEM, PKCS#8)');
  // The public half and the kid follow from the private key, so the two can never disagree.
  const publicKeyPem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  const serviceClients = parseServiceClients(requiredEnv(env, 'SERVICE_CLIENT_SECRETS'));
  return {
    port: Number(env.PORT ?? 3002),
    host: env.HOST ?? '0.0.0.0',
    database: { kind: 'postgres', url: requiredEnv(env, 'DATABASE_URL') },
    migrateOnStart: env.MIGRATE_ON_START === 'true',
    signingKeys: { privateKeyPem, publicKeyPem, kid: jwkThumbprint(publicKeyPem) },
    serviceClients,
    userIdExchangeClients: (env.USER_ID_EXCHANGE_CLIENTS ?? DEFAULT_USER_ID_EXCHANGE_CLIENTS.join(','))
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    // The OAuth issuer and every URL of the metadata; validated (and its trailing slash dropped) by buildApp.
    publicBaseUrl: normalizeBaseUrl(requiredEnv(env, 'PUBLIC_BASE_URL')),
    signupMode: parseSignupMode(env.SIGNUP_MODE),
    sessionPolicy: sessionPolicyFrom(env),
    corsOrigins: originList('MCP_CORS_ORIGINS', env.MCP_CORS_ORIGINS),
    ssrfAllowlist: env.SSRF_ALLOWLIST,
    oauthLimits: oauthLimitsFrom(env),
  };
}
