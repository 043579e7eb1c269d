import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Partitioners, type PartitionerArgs } from 'kafkajs';
import { keyPartitionCache } from '../src/kafka-bus.ts';

const metadata = (n: number): PartitionerArgs['partitionMetadata'] =>
  Array.from({ length: n }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));
const args = (key: string | null, n: number, partition?: number): PartitionerArgs => ({
  topic: 'flowdesk.trigger',
  partitionMetadata: metadata(n),
  message: { key, value: '{}', ...(partition === undefined ? {} : { partition }) },
});

test('the cached partitioner puts every key where Java’s default partitioner (kafkajs DefaultPartitioner) does, at every partition count, also after the count changes', () => {
  const cached = keyPartitionCache();
  const reference = Partitioners.DefaultPartitioner();
  const keys = Array.from({ length: 500 }, () => randomUUID());
  const spread = new Set<number>();
  for (const n of [12, 1, 3, 12, 24]) {
    for (const key of [...keys, ...keys]) {
      const p = cached(args(key, n));
      assert.equal(p, reference(args(key, n)), `key ${key} with ${n} partitions`);
      if (n === 24) spread.add(p);
    }
  }
  assert.equal(spread.size, 24, 'keys spread over every partition');
});

test('an explicit partition wins, and a message without a key is spread as by the default partitioner', () => {
  const cached = keyPartitionCache();
  assert.equal(cached(args('some-key', 12, 7)), 7);
  const seen = new Set(Array.from({ length: 100 }, () => cached(args(null, 12))));
  assert.ok(seen.size > 1, 'keyless messages go round the partitions');
});
