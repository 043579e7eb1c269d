import { introspectionCacheMsFrom, originList, requiredEnv } from '@flowdesk/service-kit';
import { parseTraceUrlTemplate } from './domain/trace-url.ts';

export interface ConsoleConfig {
  port: number;
  host: string;
  publicBaseUrl: string;
  authUrl: string;
  workspaceApiUrl: string;
  engineUrl: string;
  serviceClientSecret: string;
  allowedOrigins: string[];
  introspectionCacheMs: number;
  /** TRACE_URL_TEMPLATE: a run's trace link on its page (docs/observability.md); unset: the id only. */
  traceUrlTemplate: string | undefined;
  /** SSRF_ALLOWLIST, the engine's: the editor does not warn about a URL it opens. */
  ssrfAllowlist: string | undefined;
  logLevel: string | undefined;
}

/** The container's configuration (docs/configuration.md). */
export function loadConfig(env: NodeJS.ProcessEnv): ConsoleConfig {
  const secret = requiredEnv(env, 'CONSOLE_CLIENT_SECRET');
  if (secret.length < 32) throw new Error('CONSOLE_CLIENT_SECRET must be at least 32 characters');
  return {
    port: Number(env.PORT || 3006),
    host: env.HOST || '0.0.0.0',
    publicBaseUrl: requiredEnv(env, 'PUBLIC_BASE_URL').replace(/\/+$/, ''),
    authUrl: requiredEnv(env, 'AUTH_URL'),
    workspaceApiUrl: requiredEnv(env, 'WORKSPACE_API_URL'),
    engineUrl: requiredEnv(env, 'WORKFLOW_ENGINE_URL'),
    serviceClientSecret: secret,
    allowedOrigins: originList('CONSOLE_ALLOWED_ORIGINS', env.CONSOLE_ALLOWED_ORIGINS),
    introspectionCacheMs: introspectionCacheMsFrom(env),
    traceUrlTemplate: parseTraceUrlTemplate(env.TRACE_URL_TEMPLATE),
    ssrfAllowlist: env.SSRF_ALLOWLIST || undefined,
    logLevel: env.LOG_LEVEL,
  };
}
