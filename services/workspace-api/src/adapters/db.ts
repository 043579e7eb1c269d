import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, withRole, withUser, type Database } from '@flowdesk/db';
import { PrismaClient } from '../generated/prisma/client.ts';

import type { Tx } from '../domain/tx.ts';

export { PrismaClient };
export type { Tx };

export const WORKSPACE_SCHEMA = 'workspace';
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');

export function createPrismaClient(db: Database): PrismaClient {
  // minimal: an error's message is Prisma's description, not a rendering of the calling source
  // (which costs CPU on every error and puts code into logs).
  return new PrismaClient({ adapter: db.adapter, errorFormat: 'minimal' });
}

export function migrateWorkspace(db: Database) {
  return migrate(db, MIGRATIONS_DIR, WORKSPACE_SCHEMA);
}

/**
 * The only way route handlers reach the data: every query runs inside a transaction bound to the
 * calling user, so row-level security decides what exists.
 */
export function asUser<R>(prisma: PrismaClient, userId: string, fn: (tx: Tx) => Promise<R>): Promise<R> {
  return withUser<Tx, R>(prisma, userId, fn);
}

/** The role that may read webhook triggers by id, and nothing else (migration 20261122010000). */
export const TRIGGER_READER_ROLE = 'flowdesk_trigger_reader';

export function asTriggerReader<R>(prisma: PrismaClient, fn: (tx: Tx) => Promise<R>): Promise<R> {
  return withRole<Tx, R>(prisma, TRIGGER_READER_ROLE, fn);
}

/** The role that may read workflow definitions (no secrets) of every owner (migration 20261123000000). */
export const DEFINITION_READER_ROLE = 'flowdesk_definition_reader';

export function asDefinitionReader<R>(prisma: PrismaClient, fn: (tx: Tx) => Promise<R>): Promise<R> {
  return withRole<Tx, R>(prisma, DEFINITION_READER_ROLE, fn);
}
