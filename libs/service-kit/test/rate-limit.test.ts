// The fixed-window limiter behind auth's dynamic client registration and the gateway's anonymous
// initialize: counts per key, answers the seconds to wait, and keeps a bounded number of keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRateLimiter } from '../src/rate-limit.ts';

test('max hits per window and key, then the seconds left in the window (at least 1); a new window starts fresh', () => {
  let t = 1_000_000;
  const limiter = createRateLimiter({ max: 2, windowMs: 10_000 }, () => new Date(t));
  assert.equal(limiter.hit('a'), 0);
  assert.equal(limiter.hit('a'), 0);
  assert.equal(limiter.hit('a'), 10, 'the whole window left');
  assert.equal(limiter.hit('b'), 0, 'another key counts on its own');
  t += 9_999;
  assert.equal(limiter.hit('a'), 1, '1 ms left still says wait 1 s, never 0');
  t += 1;
  assert.equal(limiter.hit('a'), 0, 'the next window');
});

test('a caller rotating keys cannot grow the map past maxKeys: finished windows go first, then the oldest key', () => {
  let t = 0;
  const limiter = createRateLimiter({ max: 1, windowMs: 60_000 }, () => new Date(t), { maxKeys: 3 });
  for (let i = 0; i < 100; i++) limiter.hit(`10.0.0.${i}`);
  assert.equal(limiter.size, 3, 'all 100 windows are still open, yet only 3 keys are kept');

  // The oldest key was dropped, so it starts a fresh window; a kept one is still limited.
  assert.equal(limiter.hit('10.0.0.99'), 60, 'a kept key is still over its limit');
  t = 60_000;
  const fresh = createRateLimiter({ max: 1, windowMs: 1_000 }, () => new Date(t), { maxKeys: 2 });
  fresh.hit('old');
  t += 1_000;
  fresh.hit('busy');
  fresh.hit('new');
  assert.equal(fresh.size, 2);
  assert.equal(fresh.hit('busy'), 1, "the finished window ('old') was dropped, not the open one");
});
