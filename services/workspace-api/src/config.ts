import { requiredEnv } from '@flowdesk/service-kit';
import type { DatabaseConfig } from '@flowdesk/db';

export interface WorkspaceApiConfig {
  port: number;
  host: string;
  database: DatabaseConfig;
  migrateOnStart: boolean;
  jwtPublicKeyPem: string;
  webhookSecretKey: Buffer;
  publicBaseUrl: string;
}

/** See docs/configuration.md for every variable. */
export function loadConfig(env: NodeJS.ProcessEnv): WorkspaceApiConfig {
  const key = Buffer.from(requiredEnv(env, 'WEBHOOK_SECRET_KEY'), 'base64');
  if (key.length !== 32) throw new Error('WEBHOOK_SECRET_KEY must be 32 bytes, base64');
  return {
    port: Number(env.PORT ?? 3001),
    host: env.HOST ?? '0.0.0.0',
    database: { kind: 'postgres', url: requiredEnv(env, 'DATABASE_URL') },
    migrateOnStart: env.MIGRATE_ON_START === 'true',
    jwtPublicKeyPem: requiredEnv(env, 'INTERNAL_JWT_PUBLIC_KEY'),
    webhookSecretKey: key,
    publicBaseUrl: requiredEnv(env, 'PUBLIC_BASE_URL'),
  };
}
