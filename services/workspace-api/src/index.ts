// What other packages (the embedded start, tests) may use of workspace-api: its app and migrations.
export { buildApp, API_PREFIX, type WorkspaceApiDeps } from './app.ts';
export { migrateWorkspace, createPrismaClient, MIGRATIONS_DIR, WORKSPACE_SCHEMA } from './adapters/db.ts';
