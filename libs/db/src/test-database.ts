import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from './open.ts';

export interface TestDatabase {
  db: Database;
  /** The connection string of the fresh database, or undefined on PGlite. */
  url: string | undefined;
  close(): Promise<void>;
}

/**
 * A fresh, empty database for one test file: on Postgres (when DATABASE_URL is set) a new database
 * on that server, dropped on close, so test files running in parallel never see each other's rows;
 * otherwise an in-memory PGlite. The same suites run on both.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const db = await openDatabase({ kind: 'pglite' });
    return { db, url: undefined, close: () => db.close() };
  }
  const name = `flowdesk_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ kind: 'postgres', url: url.toString() });
  return {
    db,
    url: url.toString(),
    async close() {
      await db.close();
      const drop = new pg.Client({ connectionString: serverUrl });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await drop.end();
    },
  };
}
