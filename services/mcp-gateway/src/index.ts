// The package entry: the embedded start builds this service in its own process.
export { buildApp, type McpGatewayDeps } from './app.ts';
export { migrateGateway, MIGRATIONS_DIR, GATEWAY_SCHEMA } from './adapters/db.ts';
export { withInProcessRevocations } from './adapters/revocations.ts';
// The gateway's own client for auth: benches and production-path tests obtain workspace-api tokens exactly as it does.
export { AuthClient } from '@flowdesk/service-kit';
