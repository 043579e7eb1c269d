// bench:wait's parking report (bench/park-watch.ts). With a short wait (`--runs 2000 --wait 1`) runs
// resume before the last one parks: the report printed "all parked after -1796181238361 ms" (a
// timestamp that was never set) and 0 B per run. It says the runs were never all parked and gives the
// peak, its time and the heap per run waiting then.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ParkWatch, type Memory } from '../../bench/park-watch.ts';

const MB = 1024 * 1024;
const idle: Memory = { heap: 100 * MB, rss: 200 * MB };

test('runs that resume before the last parks: "never all parked", the peak and the heap per run waiting then', () => {
  const watch = new ParkWatch(2000, idle);
  const polls: [waiting: number, ms: number][] = [
    [400, 500],
    [1300, 1000],
    [900, 1500],
    [0, 2000],
  ];
  let measured = 0;
  for (const [waiting, ms] of polls) watch.observe(waiting, ms, () => (measured++, { heap: idle.heap + waiting * 1000, rss: idle.rss + waiting * 2000 }));
  assert.equal(watch.allParkedAfterMs, null);
  assert.equal(watch.peakWaiting, 1300);
  assert.equal(measured, 2, 'measured only at a new peak');
  const line = watch.parkedLine();
  assert.match(line, /never all 2000 parked at once/);
  assert.match(line, /peak 1300 waiting, 1000 ms after the first publish/);
  assert.doesNotMatch(line, /-\d/);
  assert.equal(watch.perWaitingRunBytes(), 1000);
  assert.match(watch.memoryLine(idle), /peak \(1300 waiting\) heap .*per waiting run 1000 B heap/);
});

test('all N parked at once: when, and the heap per run over N', () => {
  const watch = new ParkWatch(1000, idle);
  watch.observe(600, 700, () => ({ heap: idle.heap + 600 * 500, rss: idle.rss }));
  watch.observe(1000, 1400, () => ({ heap: idle.heap + 1000 * 500, rss: idle.rss }));
  assert.equal(watch.parkedLine(), 'all 1000 parked after 1400 ms');
  assert.equal(watch.perWaitingRunBytes(), 500);
  assert.match(watch.memoryLine(idle), /all 1000 parked heap/);
});

test('no run seen waiting: says so, no per-run figure', () => {
  const watch = new ParkWatch(10, idle);
  watch.observe(0, 500, () => assert.fail('no peak, no measurement'));
  assert.match(watch.parkedLine(), /no run was seen parked/);
  assert.equal(watch.perWaitingRunBytes(), null);
  assert.match(watch.memoryLine(idle), /per waiting run n\/a/);
});
