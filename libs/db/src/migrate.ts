import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Database, Exec } from './open.ts';

export interface MigrationResult {
  applied: string[];
  skipped: string[];
}

const NAME = /^[A-Za-z0-9_.-]+$/;

/**
 * Applies Prisma-format migrations (`<dir>/<name>/migration.sql`, in name order) that are not yet
 * recorded, and records them in `<schema>._prisma_migrations` with the same columns and checksum
 * (SHA-256 of the file) that `prisma migrate deploy` uses, so either tool can take over from the
 * other. A migration whose file changed after it was applied is an error.
 *
 * Each migration and its record commit in one transaction: a crash leaves it either applied and
 * recorded, or neither. Everything runs in one database session holding an advisory lock (on
 * PGlite, sessions queue in-process), so concurrent runners — replicas starting together, test
 * files — apply each migration once.
 */
export async function migrate(db: Database, migrationsDir: string, schema: string): Promise<MigrationResult> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const names = (await readdir(migrationsDir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const name of names) if (!NAME.test(name)) throw new Error(`invalid migration folder name ${name}`);
  const files = await Promise.all(names.map((n) => readFile(path.join(migrationsDir, n, 'migration.sql'), 'utf8')));

  return db.session(async (exec) => {
    const lockKey = Number.parseInt(createHash('sha256').update(`flowdesk-migrate:${schema}`).digest('hex').slice(0, 12), 16);
    if (db.kind === 'postgres') await exec('SELECT pg_advisory_lock($1)', [lockKey]);
    try {
      return await applyPending(exec, schema, names, files);
    } finally {
      if (db.kind === 'postgres') await exec('SELECT pg_advisory_unlock($1)', [lockKey]);
    }
  });
}

async function applyPending(exec: Exec, schema: string, names: string[], files: string[]): Promise<MigrationResult> {
  const table = `"${schema}"."_prisma_migrations"`;
  await exec(`CREATE SCHEMA IF NOT EXISTS "${schema}";
    CREATE TABLE IF NOT EXISTS ${table} (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    );`);
  const done = await exec(`SELECT migration_name, checksum FROM ${table} WHERE rolled_back_at IS NULL AND finished_at IS NOT NULL`);
  const applied = new Map(done.rows.map((r) => [String(r.migration_name), String(r.checksum)]));
  const result: MigrationResult = { applied: [], skipped: [] };
  for (const [i, name] of names.entries()) {
    const sql = files[i]!;
    const checksum = createHash('sha256').update(sql).digest('hex');
    const seen = applied.get(name);
    if (seen !== undefined) {
      if (seen !== checksum) throw new Error(`migration ${name} was modified after it was applied`);
      result.skipped.push(name);
      continue;
    }
    // Literals, not parameters: a multi-statement query takes none. All three are safe by
    // construction (a UUID, hex digits, a name checked against NAME).
    const record = `INSERT INTO ${table} (id, checksum, started_at, finished_at, migration_name, applied_steps_count)
      VALUES ('${randomUUID()}', '${checksum}', now(), clock_timestamp(), '${name}', 1);`;
    try {
      await exec(`BEGIN;\n${sql}\n;\n${record}\nCOMMIT;`);
    } catch (err) {
      await exec('ROLLBACK').catch(() => {});
      throw new Error(`migration ${name} failed: ${(err as Error).message}`, { cause: err });
    }
    result.applied.push(name);
  }
  return result;
}
