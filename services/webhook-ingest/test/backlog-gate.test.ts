// The backlog gate's arithmetic with a fake bus count and clock (the HTTP behaviour is tested with the
// real embedded bus in webhook-trigger.test.ts, "back-pressure").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backlogGate, STALLED_RETRY_AFTER_SECONDS } from '../src/domain/backlog-gate.ts';

function setup(limit: number) {
  let t = 0;
  const counts = new Map<string, number>();
  const reads: string[][] = [];
  const gate = backlogGate({
    limit,
    refreshMs: 100,
    now: () => t,
    read: async (keys, atMost) => {
      reads.push(keys);
      return new Map(keys.map((k) => [k, Math.min(atMost, counts.get(k) ?? 0)]));
    },
  });
  /** One delivery: admitted (and then accepted) or refused. */
  const deliver = (key: string) => {
    const d = gate.admit(key);
    if (d.allowed) {
      gate.accepted(key);
      counts.set(key, (counts.get(key) ?? 0) + 1); // published: the bus counts it
    }
    return d;
  };
  return { gate, counts, reads, deliver, tick: (ms: number) => (t += ms) };
}

test('admits up to the bound from its own count, refuses beyond with Retry-After, admits again once the bus count falls', async () => {
  const { gate, counts, deliver, tick } = setup(10);
  const decisions = Array.from({ length: 15 }, () => deliver('a'));
  assert.deepEqual(
    decisions.map((d) => d.allowed),
    [...Array(10).fill(true), ...Array(5).fill(false)],
  );
  const refused = decisions[10]!;
  assert.ok(!refused.allowed && refused.retryAfterSeconds === STALLED_RETRY_AFTER_SECONDS && refused.backlog === 10);
  assert.equal(deliver('b').allowed, true, 'another workflow has its own backlog');

  counts.set('a', 2); // the engine ran 8 of them
  tick(150);
  assert.equal(gate.admit('a').allowed, false, 'still the old count until the read is back');
  await gate.settle();
  assert.equal(deliver('a').allowed, true);
});

test('reads only workflows whose estimate reached half the bound', async () => {
  const { gate, reads, deliver, tick } = setup(100);
  for (let i = 0; i < 10; i++) deliver('quiet');
  for (let i = 0; i < 60; i++) deliver('busy');
  tick(150);
  deliver('quiet');
  await gate.settle();
  assert.deepEqual(reads.at(-1), ['busy']);
});

test('Retry-After follows the measured drain rate', async () => {
  const { gate, counts, deliver, tick } = setup(100);
  for (let i = 0; i < 100; i++) deliver('a');
  tick(1000);
  gate.admit('a'); // first read: the count, no rate yet
  await gate.settle();
  counts.set('a', 95); // the engine ran 5 in one second
  tick(1000);
  gate.admit('a');
  await gate.settle();
  for (let i = 0; i < 5; i++) assert.equal(deliver('a').allowed, true);
  const d = gate.admit('a');
  assert.ok(!d.allowed);
  assert.ok(d.retryAfterSeconds >= 1 && d.retryAfterSeconds < STALLED_RETRY_AFTER_SECONDS, `Retry-After ${d.retryAfterSeconds}`);
});

test('a slow but steady drain (one run every 1.5 s, read every 250 ms) gives the time it needs, never the stalled value', async () => {
  const { gate, counts, deliver, tick } = setup(20);
  for (let i = 0; i < 20; i++) deliver('slow');
  const answers = new Set<number>();
  // 12 s of a sender retrying every 250 ms while the engine finishes one run every 1.5 s.
  for (let ms = 250; ms <= 12_000; ms += 250) {
    tick(250);
    if (ms % 1500 === 0) counts.set('slow', counts.get('slow')! - 1);
    const d = deliver('slow');
    await gate.settle();
    if (!d.allowed && ms > 3000) answers.add(d.retryAfterSeconds); // after a few seconds of measuring
  }
  // One delivery over the bound at 2/3 run per second: ceil(1.5) = 2 s.
  assert.deepEqual([...answers], [2], `Retry-After answers: ${[...answers].join(', ')}`);
  const stalled = setup(20);
  for (let i = 0; i < 25; i++) stalled.deliver('stuck');
  for (let i = 0; i < 20; i++) {
    stalled.tick(250);
    stalled.deliver('stuck');
    await stalled.gate.settle();
  }
  const d = stalled.gate.admit('stuck');
  assert.ok(!d.allowed && d.retryAfterSeconds === STALLED_RETRY_AFTER_SECONDS, 'nothing drained in 5 s: the stalled value');
});
