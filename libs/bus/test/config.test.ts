// Which bus the environment selects, and what a mistyped value does (fails at start, not later).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { busConfigFromEnv, topicSpecs } from '../src/config.ts';

test('no KAFKA_BROKERS means the embedded bus', () => {
  assert.deepEqual(busConfigFromEnv({}), { kind: 'embedded' });
  assert.deepEqual(busConfigFromEnv({ KAFKA_BROKERS: ' ' }), { kind: 'embedded' });
});

test('KAFKA_BROKERS selects Kafka with defaults for client id, partitions and replication', () => {
  const c = busConfigFromEnv({ KAFKA_BROKERS: 'k1:9092, k2:9092' });
  assert.deepEqual(c, { kind: 'kafka', brokers: ['k1:9092', 'k2:9092'], clientId: 'flowdesk', partitions: 12, replicationFactor: 3 });
  const custom = busConfigFromEnv({ KAFKA_BROKERS: 'k:1', KAFKA_CLIENT_ID: 'engine', KAFKA_TOPIC_PARTITIONS: '48', KAFKA_REPLICATION_FACTOR: '1' });
  assert.equal(custom.kind, 'kafka');
  if (custom.kind === 'kafka') {
    assert.equal(custom.clientId, 'engine');
    assert.deepEqual(topicSpecs(custom, ['workflow.trigger.v1']), [{ topic: 'workflow.trigger.v1', numPartitions: 48, replicationFactor: 1 }]);
  }
});

test('malformed values are refused at start', () => {
  assert.throws(() => busConfigFromEnv({ KAFKA_BROKERS: 'no-port' }), /host:port/);
  assert.throws(() => busConfigFromEnv({ KAFKA_BROKERS: 'k:1', KAFKA_TOPIC_PARTITIONS: '0' }), /KAFKA_TOPIC_PARTITIONS/);
  assert.throws(() => busConfigFromEnv({ KAFKA_BROKERS: 'k:1', KAFKA_REPLICATION_FACTOR: 'three' }), /KAFKA_REPLICATION_FACTOR/);
});
