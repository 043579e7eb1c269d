// The local broker's KRaft cluster id is passed to kafka-storage as "-t <id>"; an id that starts with
// "-" is read as an option and the format fails ("expected one argument"), which failed a CI run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newClusterId } from '../src/testing-kafka.ts';

test('a local cluster id is 16 bytes of base64url and never starts with "-" (kafka-storage would read it as an option)', () => {
  // 1 random id in 64 starts with "-": 20,000 draws without the rule fail with near certainty.
  for (let i = 0; i < 20_000; i++) {
    const id = newClusterId();
    assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    assert.equal(Buffer.from(id, 'base64url').length, 16);
  }
});
