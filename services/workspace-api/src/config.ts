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

function required(env: NodeJS.ProcessEnv, name: string): string {
  const v = env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
}

/** See docs/configuration.md for every variable. */
export function loadConfig(env: NodeJS.ProcessEnv): WorkspaceApiConfig {
  const key = Buffer.from(required(env, 'WEBHOOK_SECRET_KEY'), 'base64');
  if (key.length !== 32) throw new Error('WEBHOOK_SECRET_KEY must be 32 bytes, base64');
  return {
    port: Number(env.PORT ?? 3001),
    host: env.HOST ?? '0.0.0.0',
    database: { kind: 'postgres', url: required(env, 'DATABASE_URL') },
    migrateOnStart: env.MIGRATE_ON_START === 'true',
    jwtPublicKeyPem: required(env, 'INTERNAL_JWT_PUBLIC_KEY'),
    webhookSecretKey: key,
    publicBaseUrl: required(env, 'PUBLIC_BASE_URL'),
  };
}
