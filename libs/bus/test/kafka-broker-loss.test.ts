// What the Kafka bus does when its broker goes away and comes back, on a real broker
// (tools/kafka): publishes reject within the publish timeout, then at once, and ready() says so;
// once the broker is back the same bus publishes again and its consumer resumes by itself, with
// nothing acknowledged lost. Runs where the contract suite on Kafka runs (kafka-bus.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BusUnavailableError, createKafkaBus, ensureKafkaTopics, type EventBus } from '../src/index.ts';
import { localKafkaUnavailable, startLocalKafka, type LocalKafka } from '../src/testing.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const local = localKafkaUnavailable();
const skip =
  process.env.DATABASE_URL && process.env.FLOWDESK_KAFKA_TESTS !== 'always'
    ? 'runs once per CI run, in the pass without DATABASE_URL (it does not use the database)'
    : local && process.env.CI !== 'true'
      ? `${local}: Kafka broker-loss test skipped`
      : false;

describe('Kafka bus: the broker goes away and comes back', { skip, timeout: 180_000 }, () => {
  let kafka: LocalKafka;
  let bus: EventBus;
  const topic = 'loss.t';
  const got = new Set<number>();

  before(async () => {
    if (local) throw new Error(`CI needs a Kafka broker: ${local}`);
    kafka = await startLocalKafka();
    await ensureKafkaTopics({ brokers: kafka.brokers }, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
    bus = await createKafkaBus({ brokers: kafka.brokers, clientId: 'loss', publishTimeoutMs: 2_000, sessionTimeoutMs: 6_000 });
    await bus.subscribe<{ n: number }>({ topic, groupId: 'loss.g', concurrency: 4, handler: (m) => void got.add(m.value.n) });
  });
  after(async () => {
    await bus?.close().catch(() => {});
    await kafka?.stop();
  });

  test('publish fails fast while it is gone, ready() throws; afterwards publish and consume resume without a new bus', async (t) => {
    await bus.publish(topic, [{ key: 'a', value: { n: 1 } }]);
    await bus.ready!();
    await kafka.kill(1);

    let t0 = Date.now();
    await assert.rejects(bus.publish(topic, [{ key: 'a', value: { n: 2 } }]), BusUnavailableError);
    const first = Date.now() - t0;
    t0 = Date.now();
    await assert.rejects(bus.publish(topic, [{ key: 'a', value: { n: 3 } }]), BusUnavailableError);
    const second = Date.now() - t0;
    t.diagnostic(`first publish rejected after ${first} ms, the next after ${second} ms`);
    assert.ok(first < 2_000 + 1_500, `within the publish timeout (${first} ms)`);
    assert.ok(second < 500, `at once once the broker is known gone (${second} ms)`);
    await assert.rejects(bus.ready!(), BusUnavailableError);

    await kafka.restart(1);
    const back = Date.now();
    for (;;) {
      try {
        await bus.publish(topic, [{ key: 'a', value: { n: 4 } }]);
        break;
      } catch (err) {
        assert.ok(err instanceof BusUnavailableError, String(err));
        assert.ok(Date.now() - back < 60_000, 'publishes again within a minute of the broker being back');
        await sleep(200);
      }
    }
    t.diagnostic(`publishing again ${Date.now() - back} ms after the broker was back`);
    await bus.ready!();
    for (const deadline = Date.now() + 60_000; !got.has(4) && Date.now() < deadline;) await sleep(50);
    assert.ok(got.has(1) && got.has(4), `the consumer resumed by itself (got ${[...got].sort().join(',')})`);
  });
});
