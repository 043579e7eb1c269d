// The package entry: the embedded start builds this service in its own process and seeds the demo account.
export { buildApp, DEFAULT_USER_ID_EXCHANGE_CLIENTS, type AuthDeps } from './app.ts';
export { createPrismaClient, migrateAuth, type PrismaClient } from './adapters/db.ts';
export { createUser, findUserByEmail, setPassword, verifyPassword, type User } from './domain/users.ts';
export { authenticateApiKey, createApiKey, listApiKeys, revokeApiKey } from './domain/api-keys.ts';
export { generateServiceSecret, type ServiceClients } from './domain/service-clients.ts';
export { listUsers, addUser, setUserDisabled, parseSignupMode } from './domain/accounts.ts';
export { sessionPolicyFrom, parseDuration, oauthLimitsFrom, parseRateLimit, type OAuthLimits } from './config.ts';
