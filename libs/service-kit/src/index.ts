export { createService, type Service, type ServiceOptions } from './service.ts';
export { internalAuth, type InternalAuthOptions } from './internal-auth.ts';
export { signInternalToken, generateSigningKeys, jwkThumbprint, type SigningKeys } from './internal-token.ts';
export { loggerOptions } from './logger.ts';
export { listen, onShutdown, isDraining, runJob, type ShutdownOptions } from './lifecycle.ts';
export { constantTimeEqual, hmacSha256Hex, verifyHmacSha256 } from './constant-time.ts';
export { serviceTokenSource, userTokenSource, type ServiceTokenSource, type ServiceTokenSourceOptions, type UserTokenSource } from './service-token.ts';
export { requiredEnv } from './env.ts';
