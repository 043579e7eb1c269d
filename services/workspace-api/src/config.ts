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
  /** Versions kept per workflow (WORKFLOW_VERSIONS_KEEP, default 100). */
  versionsKeep: number;
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
    versionsKeep: versionsKeep(env.WORKFLOW_VERSIONS_KEEP),
  };
}

/** WORKFLOW_VERSIONS_KEEP: a whole number from 1 to 10,000; unset: 100 (docs/workflow-versions.md). */
export function versionsKeep(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 100;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new Error('WORKFLOW_VERSIONS_KEEP must be a whole number from 1 to 10000');
  return n;
}
