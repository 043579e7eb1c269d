import { createTestDatabase, type Database } from '@flowdesk/db';
import { createPrismaClient, migrateWorkspace, type PrismaClient } from '../../src/adapters/db.ts';

export interface TestWorkspace {
  /** Plain SQL access as the connecting (superuser) role: bypasses nothing by itself, see asUser. */
  db: Database;
  prisma: PrismaClient;
  /** The fresh database's connection string on Postgres, undefined on PGlite. */
  url: string | undefined;
  /** Disconnects Prisma and closes (on Postgres: drops) the database. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * A fresh, migrated workspace database with a Prisma client on it: in-memory PGlite without
 * DATABASE_URL, a new database on that server with it. Call close() in `after`.
 */
export async function openTestWorkspace(): Promise<TestWorkspace> {
  const test = await createTestDatabase();
  let prisma: PrismaClient | undefined;
  try {
    await migrateWorkspace(test.db);
    prisma = createPrismaClient(test.db);
  } catch (err) {
    await test.close().catch(() => {});
    throw err;
  }
  let closed: Promise<void> | undefined;
  const client = prisma;
  return {
    db: test.db,
    prisma: client,
    url: test.url,
    close() {
      closed ??= (async () => {
        await client.$disconnect().catch(() => {});
        await test.close();
      })();
      return closed;
    },
  };
}
