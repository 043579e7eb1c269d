// onShutdown's contract, with signals and exit injected (the real ones are exercised on the compiled
// services by deploy/test/entrypoints.test.ts and graceful-shutdown.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createService, isDraining, listen, onShutdown } from '../src/index.ts';

function harness() {
  const signals = new EventEmitter();
  const exits: number[] = [];
  let exited!: (code: number) => void;
  const exitedOnce = new Promise<number>((r) => (exited = r));
  return {
    signals,
    exits,
    exitedOnce,
    exit: (code: number) => {
      exits.push(code);
      exited(code);
    },
  };
}

test('SIGTERM: /readyz answers 503 at once and the next response says Connection: close, in-flight work finishes, then exit 0', async () => {
  const h = harness();
  const app = createService({ name: 'svc', logLevel: 'silent' });
  let release!: () => void;
  const slowStarted = new Promise<void>((started) => {
    app.get('/slow', async () => {
      started();
      await new Promise<void>((r) => (release = r));
      return { done: true };
    });
  });
  const base = await listen(app, 0);
  const closed: string[] = [];
  onShutdown(
    async () => {
      closed.push('close started');
      await app.close();
      closed.push('app closed');
    },
    // A drain period long enough that the checks made while draining finish inside it on a loaded
    // machine (with 200 ms, the close sometimes began before the /healthz check under load).
    { app, drainMs: 4_000, graceMs: 60_000, exit: h.exit, signals: h.signals },
  );
  const slow = fetch(`${base}/slow`);
  await slowStarted;
  h.signals.emit('SIGTERM', 'SIGTERM');
  assert.ok(isDraining(app));

  // Draining: still served, but not ready, and clients are told to reconnect elsewhere.
  const ready = await fetch(`${base}/readyz`);
  assert.equal(ready.status, 503);
  assert.equal(ready.headers.get('connection'), 'close');
  assert.equal((await fetch(`${base}/healthz`)).status, 200, 'liveness stays up: a restart would cut the in-flight work');
  assert.deepEqual(closed, [], 'close waits for the drain period');

  // The drain period ends and close starts; it cannot finish while /slow is in flight.
  for (const until = Date.now() + 60_000; closed.length === 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(closed, ['close started'], 'close waits for the request in flight');
  release();
  const res = await slow;
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { done: true });
  assert.equal(await h.exitedOnce, 0);
  assert.deepEqual(closed, ['close started', 'app closed']);
  assert.deepEqual(h.exits, [0]);
});

test('a second signal exits 1 at once', async () => {
  const h = harness();
  // A short grace period only so that its (ref'd) timer does not hold this test file open.
  onShutdown(() => new Promise(() => {}), { graceMs: 300, exit: h.exit, signals: h.signals, log: { info: () => {}, error: () => {} } });
  h.signals.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(h.exits, []);
  h.signals.emit('SIGINT', 'SIGINT');
  assert.deepEqual(h.exits, [1]);
});

test('the grace period running out exits 1; a failing close exits 1', async () => {
  const late = harness();
  const lines: string[] = [];
  const log = { info: () => {}, error: (_o: object, msg: string) => void lines.push(msg) };
  onShutdown(() => new Promise(() => {}), { graceMs: 50, exit: late.exit, signals: late.signals, log });
  late.signals.emit('SIGTERM', 'SIGTERM');
  assert.equal(await late.exitedOnce, 1);
  assert.match(lines.join('\n'), /grace period/);

  const failing = harness();
  onShutdown(
    async () => {
      throw new Error('pool would not close');
    },
    { graceMs: 5_000, exit: failing.exit, signals: failing.signals, log },
  );
  failing.signals.emit('SIGTERM', 'SIGTERM');
  assert.equal(await failing.exitedOnce, 1);
  assert.match(lines.join('\n'), /shutdown failed/);
});

test('SHUTDOWN_GRACE_MS (like SHUTDOWN_DRAIN_MS) must be whole milliseconds', () => {
  const saved = process.env.SHUTDOWN_GRACE_MS;
  process.env.SHUTDOWN_GRACE_MS = '10s';
  try {
    assert.throws(
      () => onShutdown(async () => {}, { signals: new EventEmitter(), exit: () => {} }),
      /SHUTDOWN_GRACE_MS must be a whole number of milliseconds/,
    );
  } finally {
    if (saved === undefined) delete process.env.SHUTDOWN_GRACE_MS;
    else process.env.SHUTDOWN_GRACE_MS = saved;
  }
});
