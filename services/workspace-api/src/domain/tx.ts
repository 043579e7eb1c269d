/**
 * The handle every domain query runs on: the Prisma client generated from workspace-api's own schema
 * (src/generated), as seen inside a transaction. adapters/db.ts opens the transaction under the
 * caller's row-level security role (asUser, asTriggerReader, asDefinitionReader) and hands it in;
 * domain/ never imports adapters/ (eslint.config.js refuses it).
 */
import type { PrismaClient } from '../generated/prisma/client.ts';

export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];
