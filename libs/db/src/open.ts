import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';

/** Where the data lives: a Postgres server (production, CI) or PGlite (embedded start, tests without a server). */
export type DatabaseConfig =
  | { kind: 'postgres'; url: string; poolMax?: number }
  /** dataDir: a folder for durable data, or undefined for an in-memory database. */
  | { kind: 'pglite'; dataDir?: string };

/**
 * One opened database: a Prisma driver adapter for the service's client, and plain SQL for the
 * migration runner and tests. Both kinds speak real Postgres, so row-level security is the same.
 */
export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly adapter: SqlDriverAdapterFactory;
  /** Runs SQL outside Prisma (migrations, health checks); several statements allowed when no params. */
  exec(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  close(): Promise<void>;
}

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  if (config.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: config.url, max: config.poolMax ?? 10 });
    // An idle client that errors (server restart) must not crash the process; the pool drops it.
    pool.on('error', () => {});
    return {
      kind: 'postgres',
      adapter: new PrismaPg(pool),
      async exec(sql, params) {
        const res = await pool.query(sql, params as unknown[] | undefined);
        // A multi-statement query returns one result per statement.
        const last = Array.isArray(res) ? res[res.length - 1] : res;
        return { rows: (last?.rows ?? []) as Record<string, unknown>[] };
      },
      close: () => pool.end(),
    };
  }
  const pglite = config.dataDir ? new PGlite(config.dataDir) : new PGlite();
  await pglite.waitReady;
  return {
    kind: 'pglite',
    adapter: new PrismaPGlite(pglite),
    async exec(sql, params) {
      if (params && params.length > 0) {
        const res = await pglite.query(sql, params as unknown[]);
        return { rows: res.rows as Record<string, unknown>[] };
      }
      const results = await pglite.exec(sql);
      return { rows: (results[results.length - 1]?.rows ?? []) as Record<string, unknown>[] };
    },
    close: () => pglite.close(),
  };
}
