import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, type Database } from '@flowdesk/db';
import { PrismaClient } from '../generated/prisma/client.ts';

export { PrismaClient };
export const GATEWAY_SCHEMA = 'gateway';
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');

// errorFormat minimal: Prisma's description only, no rendering of the calling source (CPU on every error, code in logs).
export const createPrismaClient = (db: Database) => new PrismaClient({ adapter: db.adapter, errorFormat: 'minimal' });
export const migrateGateway = (db: Database) => migrate(db, MIGRATIONS_DIR, GATEWAY_SCHEMA);
