import { originList, requiredEnv } from '@flowdesk/service-kit';
import type { DatabaseConfig } from '@flowdesk/db';
import { conformanceModeRequested, loadConformanceConfig } from './conformance/config.ts';

export interface GatewayConfig {
  port: number;
  host: string;
  database: DatabaseConfig;
  migrateOnStart: boolean;
  publicBaseUrl: string;
  authUrl: string;
  serviceClientSecret: string;
  workspaceApiUrl: string;
  /** WORKFLOW_ENGINE_URL: the runs API (runs are the engine's data). */
  engineUrl: string;
  allowedOrigins: string[];
  /** MCP_CORS_ORIGINS: origins of browser-based MCP clients (CORS). */
  corsOrigins: string[];
  introspectionCacheMs: number;
  logLevel: string | undefined;
  /** MCP_CONFORMANCE_MODE=1: the conformance fixtures, unauthenticated, on loopback only. */
  conformanceMode: boolean;
}

/** The container's configuration (docs/configuration.md). */
export function loadConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  if (conformanceModeRequested(env)) return loadConformanceConfig(env);
  const secret = requiredEnv(env, 'MCP_GATEWAY_CLIENT_SECRET');
  if (secret.length < 32) throw new Error('MCP_GATEWAY_CLIENT_SECRET must be at least 32 characters');
  const cacheMs = Number(env.INTROSPECTION_CACHE_MS ?? 30_000);
  if (!Number.isInteger(cacheMs) || cacheMs < 0 || cacheMs > 60_000) throw new Error('INTROSPECTION_CACHE_MS must be 0..60000');
  return {
    port: Number(env.PORT || 3003),
    host: env.HOST || '0.0.0.0',
    database: { kind: 'postgres', url: requiredEnv(env, 'DATABASE_URL') },
    migrateOnStart: env.MIGRATE_ON_START === 'true',
    publicBaseUrl: requiredEnv(env, 'PUBLIC_BASE_URL').replace(/\/+$/, ''),
    authUrl: requiredEnv(env, 'AUTH_URL'),
    serviceClientSecret: secret,
    workspaceApiUrl: requiredEnv(env, 'WORKSPACE_API_URL'),
    engineUrl: requiredEnv(env, 'WORKFLOW_ENGINE_URL'),
    allowedOrigins: originList('MCP_ALLOWED_ORIGINS', env.MCP_ALLOWED_ORIGINS),
    corsOrigins: corsOrigins(env.MCP_CORS_ORIGINS),
    introspectionCacheMs: cacheMs,
    logLevel: env.LOG_LEVEL,
    conformanceMode: false,
  };
}

/** MCP_CORS_ORIGINS: comma-separated origins (scheme://host[:port]); anything else is a configuration error. */
export const corsOrigins = (value: string | undefined): string[] => originList('MCP_CORS_ORIGINS', value);
