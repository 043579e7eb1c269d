// PGlite's start from a copy of an initialised cluster (src/pglite-template.ts): a new cluster, in
// memory or in a new data folder, is a working empty one; the copy is made once and reused; a damaged
// copy is replaced; an existing data folder is opened as it is. PGlite only (no server involved).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src/index.ts';

let root: string;
const savedTmp = process.env.TMPDIR;

before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'flowdesk-pglite-template-'));
  // The copy goes to the system's temporary folder: a folder of this test's own.
  process.env.TMPDIR = path.join(root, 'tmp');
  await mkdir(process.env.TMPDIR);
});
after(async () => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  await rm(root, { recursive: true, force: true });
});

const copies = async () => (await readdir(path.join(root, 'tmp'))).filter((f) => /^flowdesk-pglite-.+\.tar$/.test(f));

test('a new cluster in memory is an empty working one, and the first start leaves the copy the next ones load', async () => {
  assert.deepEqual(await copies(), []);
  const first = await openDatabase({ kind: 'pglite' });
  await first.exec('CREATE TABLE only_here (x INT)');
  const [copy] = await copies();
  assert.ok(copy, 'the copy is written by the first start');
  const written = (await stat(path.join(root, 'tmp', copy))).mtimeMs;

  const second = await openDatabase({ kind: 'pglite' });
  const { rows } = await second.exec("SELECT current_user AS who, to_regclass('only_here') AS t");
  assert.deepEqual(rows, [{ who: 'postgres', t: null }], "the second cluster is empty: nothing of the first one's");
  assert.equal((await stat(path.join(root, 'tmp', copy))).mtimeMs, written, 'the copy is reused, not made again');
  await Promise.all([first.close(), second.close()]);
});

test('a damaged copy is replaced and the cluster still starts', async () => {
  const [copy] = await copies();
  await writeFile(path.join(root, 'tmp', copy!), 'not a tarball');
  const db = await openDatabase({ kind: 'pglite' });
  assert.deepEqual((await db.exec('SELECT 1 AS one')).rows, [{ one: 1 }]);
  await db.close();
  const fresh = await openDatabase({ kind: 'pglite' });
  assert.deepEqual((await fresh.exec('SELECT 2 AS two')).rows, [{ two: 2 }]);
  await fresh.close();
  assert.ok((await stat(path.join(root, 'tmp', copy!))).size > 1_000_000, 'a whole cluster was written back');
});

test('a new data folder starts from the copy, keeps what is written, and is opened as it is the next time', async () => {
  const dataDir = path.join(root, 'data');
  const db = await openDatabase({ kind: 'pglite', dataDir });
  await db.exec('CREATE TABLE kept (x INT)');
  await db.exec('INSERT INTO kept VALUES (42)');
  await db.close();
  const again = await openDatabase({ kind: 'pglite', dataDir });
  assert.deepEqual((await again.exec('SELECT x FROM kept')).rows, [{ x: 42 }]);
  await again.close();
});
