export { serveOpenApi, OPENAPI_PATH, PUBLIC_SECURITY, PUBLIC_SECURITY_SCHEMES, type OpenApiOptions } from './openapi.ts';
export { createService, dropRestOfBody, parseTrustProxy, registeredRoutes, type RegisteredRoute, type Service, type ServiceOptions } from './service.ts';
export { internalAuth, VerifiedTokenCache, type InternalAuthOptions } from './internal-auth.ts';
export { signInternalToken, generateSigningKeys, jwkThumbprint, type SigningKeys } from './internal-token.ts';
export { loggerOptions } from './logger.ts';
export { callInProcess, InProcessTimeoutError, type InProcessService, type InternalAnswer, type InternalCall } from './in-process.ts';
export { listen, onShutdown, isDraining, runJob, type ShutdownOptions } from './lifecycle.ts';
export { constantTimeEqual, hmacSha256Hex, verifyHmacSha256 } from './constant-time.ts';
export { serviceTokenSource, userTokenSource, type ServiceTokenSource, type ServiceTokenSourceOptions, type UserTokenSource } from './service-token.ts';
export { CONFIG_ERROR_EXIT_CODE, ConfigError, exitOnConfigError, introspectionCacheMsFrom, originList, readConfig, requiredEnv } from './env.ts';
export { AuthClient, AuthUnavailableError, basicAuthorization, CredentialRejectedError, type AuthClientOptions, type Principal } from './auth-client.ts';
export { subscribeToRevocations, revocationGroupId, IN_PROCESS_REVOCATION_ID, type RevocationLog } from './revocations.ts';
export { SecretBox, type SecretBoxOptions } from './secret-box.ts';
export { instrumentHttp, listenMetrics, routeLabel, type MetricsListenerOptions } from './observability.ts';
export { serveService, type ServeOptions } from './serve.ts';
export { createRateLimiter, RATE_LIMIT_MAX_KEYS, type RateLimit } from './rate-limit.ts';
export { startTracing } from '@flowdesk/telemetry';
export {
  createGuardedHttpClient,
  guardedAddress,
  systemResolve,
  type GuardedHttpClient,
  type GuardedHttpOptions,
  type ResolveHost,
  type ResolvedAddress,
} from './outbound/guarded-http.ts';
export { SsrfPolicy, parseAllowlist, screenUrl, blockedReason, canonicalHost, EMPTY_ALLOWLIST, type SsrfAllowlist } from './outbound/ssrf.ts';
export { findCause, NetworkError, RequestRefusedError, RequestTimeoutError, SsrfBlockedError } from './outbound/errors.ts';
export type { HttpClient, HttpMethod, OutboundRequest, OutboundResponse } from './outbound/types.ts';
