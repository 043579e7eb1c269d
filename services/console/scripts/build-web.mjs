// Builds the console's front end (web/ → dist/web) with Vite. `npm start` and `npm test` run it
// through the root `generate` step; it does nothing when dist is newer than every source file, so a
// second start costs nothing. --force always builds (npm run build:web). `npm run build` (which turbo
// runs while the browser tests read dist/web, e.g. for the deploy tests) builds only when stale too:
// a forced build empties dist/web first, and a test reading index.html at that moment failed.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const web = path.resolve(here, '../web');
const stamp = path.join(web, '../dist/web/index.html');

function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules') continue;
    const p = path.join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const force = process.argv.includes('--force');
// The node registry (libs/contracts/src/nodes) is part of the front end: the editor's menu, cards and forms come from it.
const nodes = path.resolve(here, '../../../libs/contracts/src/nodes');
const sources = Math.max(newest(web), newest(nodes), statSync(fileURLToPath(import.meta.url)).mtimeMs);
if (!force && existsSync(stamp) && statSync(stamp).mtimeMs >= sources) process.exit(0);

const { build } = await import('vite');
await build({ configFile: path.join(web, 'vite.config.ts'), logLevel: 'warn' });
