import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Database } from './open.ts';

export interface MigrationResult {
  applied: string[];
  skipped: string[];
}

/**
 * Applies Prisma-format migrations (`<dir>/<name>/migration.sql`, in name order) that are not yet
 * recorded, each in its own transaction, and records them in `<schema>._prisma_migrations` with the
 * same columns and checksum (SHA-256 of the file) that `prisma migrate deploy` uses, so either tool
 * can take over from the other. A migration whose file changed after it was applied is an error.
 *
 * On Postgres an advisory lock serialises runners (several replicas or test files starting at once).
 */
export async function migrate(db: Database, migrationsDir: string, schema: string): Promise<MigrationResult> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const lockKey = Number.parseInt(createHash('sha256').update(`flowdesk-migrate:${schema}`).digest('hex').slice(0, 12), 16);
  const names = (await readdir(migrationsDir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

  if (db.kind === 'postgres') await db.exec('SELECT pg_advisory_lock($1)', [lockKey]);
  try {
    await db.exec(`CREATE SCHEMA IF NOT EXISTS "${schema}";
      CREATE TABLE IF NOT EXISTS "${schema}"."_prisma_migrations" (
        "id" VARCHAR(36) PRIMARY KEY NOT NULL,
        "checksum" VARCHAR(64) NOT NULL,
        "finished_at" TIMESTAMPTZ,
        "migration_name" VARCHAR(255) NOT NULL,
        "logs" TEXT,
        "rolled_back_at" TIMESTAMPTZ,
        "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
        "applied_steps_count" INTEGER NOT NULL DEFAULT 0
      );`);
    const done = await db.exec(
      `SELECT migration_name, checksum FROM "${schema}"."_prisma_migrations" WHERE rolled_back_at IS NULL AND finished_at IS NOT NULL`,
    );
    const applied = new Map(done.rows.map((r) => [String(r.migration_name), String(r.checksum)]));
    const result: MigrationResult = { applied: [], skipped: [] };
    for (const name of names) {
      const sql = await readFile(path.join(migrationsDir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const seen = applied.get(name);
      if (seen !== undefined) {
        if (seen !== checksum) throw new Error(`migration ${name} was modified after it was applied`);
        result.skipped.push(name);
        continue;
      }
      await db.exec(`BEGIN;\n${sql}\n;COMMIT;`).catch(async (err: unknown) => {
        await db.exec('ROLLBACK').catch(() => {});
        throw new Error(`migration ${name} failed: ${(err as Error).message}`, { cause: err });
      });
      await db.exec(
        `INSERT INTO "${schema}"."_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
         VALUES ($1, $2, now(), $3, 1)`,
        [randomUUID(), checksum, name],
      );
      result.applied.push(name);
    }
    return result;
  } finally {
    if (db.kind === 'postgres') await db.exec('SELECT pg_advisory_unlock($1)', [lockKey]);
  }
}
