import { randomBytes } from 'node:crypto';
import { requiredEnv } from '@flowdesk/service-kit';
import type { GatewayConfig } from '../config.ts';
import { isLoopbackHost } from './mode.ts';

/** Off unless exactly `1`; anything else but empty or `0` is a mistake worth stopping for. */
export function conformanceModeRequested(env: NodeJS.ProcessEnv): boolean {
  const v = (env.MCP_CONFORMANCE_MODE ?? '').trim();
  if (v === '' || v === '0') return false;
  if (v === '1') return true;
  throw new Error('MCP_CONFORMANCE_MODE must be 1 (on) or unset');
}

/**
 * The process configuration in conformance mode: only a database and a loopback address. Auth and
 * workspace-api are never called (the identity is fixed, the fixtures read nothing), so their
 * settings are not asked for.
 */
export function loadConformanceConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  const host = env.HOST || '127.0.0.1';
  if (!isLoopbackHost(host)) throw new Error(`MCP_CONFORMANCE_MODE=1 is unauthenticated and binds loopback only: HOST=${host} refused`);
  const port = Number(env.PORT || 3003);
  const hostInUrl = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    port,
    host,
    database: { kind: 'postgres', url: requiredEnv(env, 'DATABASE_URL') },
    migrateOnStart: env.MIGRATE_ON_START === 'true',
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://${hostInUrl}:${port}`).replace(/\/+$/, ''),
    authUrl: 'http://127.0.0.1:9',
    serviceClientSecret: randomBytes(32).toString('base64url'),
    workspaceApiUrl: 'http://127.0.0.1:9',
    engineUrl: 'http://127.0.0.1:9',
    allowedOrigins: [],
    corsOrigins: [],
    introspectionCacheMs: 0,
    logLevel: env.LOG_LEVEL,
    conformanceMode: true,
  };
}
