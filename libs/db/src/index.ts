export { openDatabase, type Database, type DatabaseConfig } from './open.ts';
export { migrate, type MigrationResult } from './migrate.ts';
export { withUser, withRole, userContext, APP_ROLE, USER_ID, type RawCapable, type TransactionCapable } from './with-user.ts';
export { createTestDatabase, type TestDatabase } from './test-database.ts';
export { CONTEXT_SQL, USER_STATEMENT_TIMEOUT, type QueryAsUser } from './rls.ts';
