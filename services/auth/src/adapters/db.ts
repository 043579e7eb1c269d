import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, type Database } from '@flowdesk/db';
import { PrismaClient } from '../generated/prisma/client.ts';

export { PrismaClient };

export const AUTH_SCHEMA = 'auth';
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');

export function createPrismaClient(db: Database): PrismaClient {
  // errorFormat minimal: Prisma's description only, no rendering of the calling source.
  return new PrismaClient({ adapter: db.adapter, errorFormat: 'minimal' });
}

/** Applies auth's migrations to its own schema; the other services' schemas are not touched. */
export function migrateAuth(db: Database) {
  return migrate(db, MIGRATIONS_DIR, AUTH_SCHEMA);
}
