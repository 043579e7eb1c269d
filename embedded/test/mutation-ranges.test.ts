// The mutation modules (stryker.config.mjs, docs/development.md "Mutation testing") name line ranges
// of the security and durability checks, each with an anchor its first line must hold. `npm run
// mutation` is not part of CI, so code that moved left nine ranges pointing at other lines unnoticed
// for weeks (2026-12-03): this fails as soon as a range's first line no longer holds its anchor, and
// says which range to update.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { MODULES } = (await import(path.join(root, 'stryker.config.mjs'))) as {
  MODULES: { name: string; mutate: { file: string; lines: [number, number]; anchor: string }[] }[];
};

test('every mutation range starts at the line holding its anchor, inside its file', () => {
  const moved: string[] = [];
  for (const m of MODULES)
    for (const r of m.mutate) {
      const lines = readFileSync(path.join(root, r.file), 'utf8').split('\n');
      const [from, to] = r.lines;
      if (!(from >= 1 && to >= from && to <= lines.length)) moved.push(`${m.name}: ${r.file}:${from}-${to} is outside the file (${lines.length} lines)`);
      else if (!lines[from - 1]!.includes(r.anchor)) {
        const now = lines.flatMap((l, i) => (l.includes(r.anchor) ? [i + 1] : []));
        moved.push(
          `${m.name}: ${r.file}:${from} no longer holds ${JSON.stringify(r.anchor)}${now.length ? ` (now at line ${now.join(', ')})` : ' (not in the file)'}`,
        );
      }
    }
  assert.deepEqual(moved, [], 'update these ranges in stryker.config.mjs');
  assert.ok(MODULES.length >= 9, 'the modules are read');
});
