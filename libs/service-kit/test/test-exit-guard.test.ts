// The test runner's exit guard (scripts/test-exit-guard.mjs, loaded by every package's test script):
// every result a test file sends is counted, and a file that leaves a handle open still ends, named.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

const GUARD = fileURLToPath(new URL('../../../scripts/test-exit-guard.mjs', import.meta.url));

test('a run of many test files reports every result, and a file that leaks a timer ends after the grace', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'exit-guard-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files: string[] = [];
  for (let f = 0; f < 6; f++) {
    const lines = ["import { test } from 'node:test';"];
    for (let i = 0; i < 100; i++) lines.push(`test('file ${f} test ${i} with a name long enough to fill the pipe', () => {});`);
    files.push(path.join(dir, `f${f}.test.mjs`));
    await writeFile(files.at(-1)!, lines.join('\n'));
  }
  files.push(path.join(dir, 'leak.test.mjs'));
  await writeFile(files.at(-1)!, "import { test } from 'node:test';\ntest('leaves an interval running', () => { setInterval(() => {}, 1000); });\n");

  const env: NodeJS.ProcessEnv = { ...process.env, TEST_EXIT_GRACE_MS: '500' };
  delete env.NODE_TEST_CONTEXT; // this file's own runner context must not leak into the inner run
  const { stdout, stderr } = await run(process.execPath, ['--import', GUARD, '--test', '--test-reporter=tap', '--test-concurrency=1', ...files], {
    env,
    cwd: dir,
    timeout: 120_000,
  });
  const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(stdout)?.[1]);
  assert.equal(count('pass'), 601, `every result reported\n${stdout.slice(-400)}${stderr}`);
  assert.equal(count('fail'), 0);
  assert.match(stdout, /still holds its event loop 0\.5 s after its last test/);
});
