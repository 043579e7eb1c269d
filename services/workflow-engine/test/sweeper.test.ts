// The housekeeping sweeper (delivery ids, step tests): one round at a time, a failure logged, never thrown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Sweeper } from '../src/domain/sweeper.ts';

test('a round runs once even when asked twice, a failing round is logged and the next one runs', async () => {
  const warnings: string[] = [];
  const log = { info() {}, error() {}, warn: (_o: object, m?: string) => void warnings.push(m ?? '') };
  let rounds = 0;
  let release!: () => void;
  const sweeper = new Sweeper(60_000, log, async () => {
    rounds++;
    if (rounds === 1) await new Promise<void>((r) => (release = r));
    if (rounds === 2) throw new Error('database down');
  });
  const a = sweeper.runOnce();
  const b = sweeper.runOnce();
  release();
  await Promise.all([a, b]);
  assert.equal(rounds, 1, 'a round in flight is not started again');
  await sweeper.runOnce();
  assert.equal(rounds, 2);
  assert.match(warnings[0]!, /sweep failed/);
  await sweeper.runOnce();
  assert.equal(rounds, 3, 'the next round runs after a failure');
  sweeper.start();
  await sweeper.stop();
});
