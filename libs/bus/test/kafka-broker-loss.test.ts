// What the Kafka bus does when its broker goes away and comes back, on a real broker
// (tools/kafka): publishes reject within the publish timeout, then at once, and ready() says so;
// once the broker is back ready() says so within seconds, the next publish is then taken (ready
// means it), and the consumer resumes by itself, with nothing acknowledged lost. Runs where the contract suite on Kafka runs (kafka-bus.test.ts).
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
    // The outage outlasts the client's own retries of the send in flight (kafkajs: 8, at most 2 s
    // apart): that send fails, and its producer is replaced while no broker answers.
    await sleep(15_000);

    await kafka.restart(1);
    const back = Date.now();
    // Ready again soon after the broker is back (what webhook-ingest's /readyz answers), and ready
    // means the next publish is taken: not only the brokers' metadata answers, the producer too
    // (its failed send replaced it while no broker answered, so its connect had failed).
    for (;;) {
      try {
        await bus.ready!();
        break;
      } catch (err) {
        assert.ok(err instanceof BusUnavailableError, String(err));
        assert.ok(Date.now() - back < 15_000, `ready again within 15 s of the broker being back (${String(err)})`);
        await sleep(100);
      }
    }
    const readyAfter = Date.now() - back;
    await bus.publish(topic, [{ key: 'a', value: { n: 4 } }]);
    t.diagnostic(`ready again ${readyAfter} ms after the broker was back; the next publish taken ${Date.now() - back} ms after`);
    for (const deadline = Date.now() + 60_000; !got.has(4) && Date.now() < deadline;) await sleep(50);
    assert.ok(got.has(1) && got.has(4), `the consumer resumed by itself (got ${[...got].sort().join(',')})`);
  });
});
