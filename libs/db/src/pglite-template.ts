import { existsSync, readFileSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

/**
 * Opens PGlite. A new cluster (in memory, or a data folder without one yet) starts from a copy of a
 * freshly initialised cluster instead of running initdb again: initdb in WebAssembly costs 5–9 s of
 * CPU, loading the copy about 1 s (docs/development.md, "PGlite's start"). The copy is made once per
 * machine and PGlite version, by initdb in memory, and kept in the system's temporary folder
 * (`flowdesk-pglite-<version>.tar`); it holds nothing but an empty cluster. A copy that does not load
 * is deleted and the cluster is initialised as before. FLOWDESK_PGLITE_TEMPLATE=off turns it off.
 */
export async function openPglite(dataDir?: string): Promise<PGlite> {
  const fresh = !dataDir || !existsSync(path.join(dataDir, 'PG_VERSION'));
  if (!fresh || process.env.FLOWDESK_PGLITE_TEMPLATE === 'off') return ready(dataDir ? new PGlite(dataDir) : new PGlite());
  const file = templateFile();
  const tar: Uint8Array<ArrayBuffer> = (await readFile(file).catch(() => undefined)) ?? (await makeTemplate(file));
  try {
    return await ready(new PGlite({ ...(dataDir ? { dataDir } : {}), loadDataDir: new Blob([tar]) }));
  } catch {
    // A damaged or foreign copy: drop it, and whatever it left in the data folder, and initialise.
    await rm(file, { force: true });
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    return ready(dataDir ? new PGlite(dataDir) : new PGlite());
  }
}

async function ready(pglite: PGlite): Promise<PGlite> {
  await pglite.waitReady;
  return pglite;
}

/** initdb in memory, dumped; written under a temporary name and renamed, so concurrent makers never see half a file. */
async function makeTemplate(file: string): Promise<Uint8Array<ArrayBuffer>> {
  const pglite = await ready(new PGlite());
  try {
    const tar = new Uint8Array(await (await pglite.dumpDataDir('none')).arrayBuffer());
    const partial = `${file}.${process.pid}.partial`;
    await writeFile(partial, tar)
      .then(() => rename(partial, file))
      .catch(() => rm(partial, { force: true }));
    return tar;
  } finally {
    await pglite.close();
  }
}

let pgliteVersion: string | undefined;
function templateFile(): string {
  pgliteVersion ??= installedVersion();
  return path.join(tmpdir(), `flowdesk-pglite-${pgliteVersion}.tar`);
}

function installedVersion(): string {
  // The package's own version: a copy made by another PGlite release is never loaded.
  let dir = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  let version = 'unknown';
  for (; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === '@electric-sql/pglite') {
      version = pkg.version ?? version;
      break;
    }
  }
  return version;
}
