// Which bus the environment selects, and what a mistyped value does (fails at start, not later).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { busConfigFromEnv, embeddedBusOptionsFromEnv, topicSpecs } from '../src/config.ts';

test('no KAFKA_BROKERS means the embedded bus, with 24 h retention and 7-day group expiry unless set', () => {
  const defaults = { kind: 'embedded', retentionMs: 86_400_000, groupExpiryMs: 604_800_000 };
  assert.deepEqual(busConfigFromEnv({}), defaults);
  assert.deepEqual(busConfigFromEnv({ KAFKA_BROKERS: ' ' }), defaults);
  assert.deepEqual(busConfigFromEnv({ BUS_RETENTION_MS: '3600000', BUS_GROUP_EXPIRY_MS: 'off' }), {
    kind: 'embedded',
    retentionMs: 3_600_000,
    groupExpiryMs: Infinity,
  });
  assert.deepEqual(embeddedBusOptionsFromEnv({ BUS_RETENTION_MS: '0' }), { retentionMs: 0, groupExpiryMs: 604_800_000 });
});

test('KAFKA_BROKERS selects Kafka with defaults for client id, partitions and replication', () => {
  const c = busConfigFromEnv({ KAFKA_BROKERS: 'k1:9092, k2:9092' });
  assert.deepEqual(c, {
    kind: 'kafka',
    brokers: ['k1:9092', 'k2:9092'],
    clientId: 'flowdesk',
    partitions: 12,
    replicationFactor: 3,
    sessionTimeoutMs: 30_000,
    publishTimeoutMs: 5_000,
  });
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
  assert.throws(() => busConfigFromEnv({ KAFKA_BROKERS: 'k:1', KAFKA_PUBLISH_TIMEOUT_MS: '-5' }), /KAFKA_PUBLISH_TIMEOUT_MS/);
  assert.throws(() => busConfigFromEnv({ BUS_RETENTION_MS: '1h' }), /BUS_RETENTION_MS/);
  assert.throws(() => busConfigFromEnv({ BUS_GROUP_EXPIRY_MS: '-5' }), /BUS_GROUP_EXPIRY_MS/);
});

test('a per-process consumer group is one metric label, whatever the process: <prefix>.instance', async () => {
  const { instanceGroupId } = await import('../src/index.ts');
  const { groupLabel } = await import('../src/group-id.ts');
  const a = instanceGroupId('workflow-engine.definitions');
  const b = instanceGroupId('workflow-engine.definitions');
  assert.notEqual(a, b, 'each process its own group');
  assert.equal(groupLabel(a), 'workflow-engine.definitions.instance');
  assert.equal(groupLabel(b), groupLabel(a));
  assert.equal(groupLabel('workflow-engine'), 'workflow-engine', 'a shared group keeps its name');
});
