// Loaded with `--import` by every package's `node --test` script (docs/development.md, "Tests").
// In each test file's process (the runner's child, NODE_TEST_CONTEXT set) it ends the process 60 s
// after the file's last test if something the file started still holds the event loop, naming what
// is left open. It replaces `--test-force-exit`, which on Node 22 and 24 exits the runner before it has
// reported every result it received, so a package's pass count silently dropped by up to a third
// (nodejs/node#64833); this guard leaves the runner's own exit alone.
import { after } from 'node:test';

const GRACE_MS = Number(process.env.TEST_EXIT_GRACE_MS) || 60_000;

if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    setTimeout(() => {
      const open = process.getActiveResourcesInfo().filter((r) => r !== 'Timeout');
      process.stderr.write(`test file still holds its event loop ${GRACE_MS / 1000} s after its last test (${open.join(', ') || 'timers'}): exiting\n`);
      process.exit();
    }, GRACE_MS).unref();
  });
}
