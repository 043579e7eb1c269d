import type { DatabaseConfig } from '@flowdesk/db';
import { jwkThumbprint, requiredEnv, type SigningKeys } from '@flowdesk/service-kit';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { DEFAULT_USER_ID_EXCHANGE_CLIENTS, normalizeBaseUrl } from './app.ts';
import { parseServiceClients } from './domain/service-clients.ts';

export interface AuthConfig {
  port: number;
  host: string;
  database: DatabaseConfig;
  migrateOnStart: boolean;
  signingKeys: SigningKeys;
  serviceClients: Record<string, string>;
  userIdExchangeClients: string[];
  publicBaseUrl: string;
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
  };
}
