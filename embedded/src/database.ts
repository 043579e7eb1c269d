import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openDatabase, type Database } from '@flowdesk/db';
import type { EmbeddedConfig } from './config.ts';

export interface EmbeddedDatabase {
  db: Database;
  /** Closes the database and lets another start use the data folder. */
  close(): Promise<void>;
}

/** Postgres at DATABASE_URL, else PGlite with its data in `<home>/pglite`. */
export async function openEmbeddedDatabase(config: Pick<EmbeddedConfig, 'home' | 'databaseUrl'>): Promise<EmbeddedDatabase> {
  if (config.databaseUrl) {
    const db = await openDatabase({ kind: 'postgres', url: config.databaseUrl });
    return { db, close: () => db.close() };
  }
  const release = await lockDataFolder(path.join(config.home, 'pglite.lock'));
  try {
    const db = await openDatabase({ kind: 'pglite', dataDir: path.join(config.home, 'pglite') });
    return {
      db,
      async close() {
        await db.close();
        await release();
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}

/**
 * PGlite is single-process: a second start on the same folder would corrupt the data, so it is
 * refused while the first one's process is alive. A lock left by a crashed start is taken over.
 */
async function lockDataFolder(file: string): Promise<() => Promise<void>> {
  try {
    await writeFile(file, String(process.pid), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const holder = Number((await readFile(file, 'utf8')).trim());
    if (isAlive(holder)) {
      throw new Error(
        `Another Flowdesk (pid ${holder}) is using ${path.dirname(file)}. Stop it, or set FLOWDESK_HOME to another folder. (Lock file: ${file})`,
        { cause: err },
      );
    }
    await writeFile(file, String(process.pid));
  }
  return () => rm(file, { force: true });
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
