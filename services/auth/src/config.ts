import type { DatabaseConfig } from '@flowdesk/db';
import { jwkThumbprint, originList, requiredEnv, type SigningKeys } from '@flowdesk/service-kit';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { DEFAULT_USER_ID_EXCHANGE_CLIENTS, normalizeBaseUrl } from './app.ts';
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
}

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
  };
}
