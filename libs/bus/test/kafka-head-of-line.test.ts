// Head-of-line on Kafka (issue 36), on a real broker (tools/kafka): the partition key is the
// workflow, so one partition carries many workflows (and owners). A slow record must hold only its
// own key: records of other keys published after it into the same partition are handled while it
// runs, the committed offset stays at the slow record (a crash redelivers it), and a consumer that
// dies meanwhile leaves it to the next one. Runs where the contract suite on Kafka runs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { doomedKafkaBus } from './doomed-kafka.ts';
import { metricsText } from '@flowdesk/telemetry';
import { MAX_WINDOW } from '../src/kafka-bus.ts';
import { createKafkaBus, ensureKafkaTopics, type EventBus, type Subscription } from '../src/index.ts';
import { localKafkaUnavailable, startLocalKafka, type LocalKafka } from '../src/testing.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (what: string, cond: () => boolean | Promise<boolean>, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
};
const local = localKafkaUnavailable();
const skip =
  process.env.DATABASE_URL && process.env.FLOWDESK_KAFKA_TESTS !== 'always'
    ? 'runs once per CI run, in the pass without DATABASE_URL (it does not use the database)'
    : local && process.env.CI !== 'true'
      ? `${local}: Kafka head-of-line test skipped`
      : false;

describe('Kafka bus: a slow record holds only its key, not its partition', { skip, timeout: 180_000 }, () => {
  let kafka: LocalKafka;
  const buses: EventBus[] = [];
  /** Ends the handlers that never finish on a killed consumer, so its bus can be closed. */
  let endForever!: () => void;
  const forever = new Promise<void>((r) => (endForever = r));

  before(async () => {
    if (local) throw new Error(`CI needs a Kafka broker: ${local}`);
    kafka = await startLocalKafka();
  });
  after(async () => {
    endForever();
    for (const b of buses) await Promise.race([b.close().catch(() => {}), sleep(15_000)]);
    await kafka?.stop();
  });

  const committed = async (groupId: string, topic: string): Promise<number> => {
    const admin = new Kafka({ brokers: kafka.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return Number(t!.partitions[0]!.offset);
    } finally {
      await admin.disconnect();
    }
  };

  test('records of other keys published after a slow one into its partition are handled while it runs; the commit stays at it', async () => {
    const topic = 'hol.one';
    await ensureKafkaTopics({ brokers: kafka.brokers }, [{ topic, numPartitions: 1, replicationFactor: 1 }]);
    const bus = await createKafkaBus({ brokers: kafka.brokers, clientId: 'hol', sessionTimeoutMs: 6_000 });
    buses.push(bus);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let slowStarted = false;
    let slowDone = false;
    const handled: string[] = [];
    const sub: Subscription = await bus.subscribe<{ n: string }>({
      topic,
      groupId: 'hol.g',
      concurrency: 8,
      keyConcurrency: 4,
      handler: async (m) => {
        if (m.key === 'slow') {
          slowStarted = true;
          await gate;
          slowDone = true;
        }
        handled.push(m.value.n);
      },
    });
    await bus.publish(topic, [{ key: 'slow', value: { n: 'slow' } }]);
    await until('the slow record to start', () => slowStarted);
    // Published after the slow record was fetched: on the same partition, in later fetches.
    for (let i = 1; i <= 5; i++) await bus.publish(topic, [{ key: `wf-${i}`, value: { n: `wf-${i}` } }]);
    await until('the later records of other keys (before: held until the slow one finished)', () => handled.length === 5, 15_000);
    assert.equal(slowDone, false, 'they were handled while the slow record still ran');
    assert.deepEqual(handled.sort(), ['wf-1', 'wf-2', 'wf-3', 'wf-4', 'wf-5']);
    // Nothing past the unfinished record is committed: a crash now redelivers it.
    await sleep(1_500);
    assert.equal(await committed('hol.g', topic), 0, 'the commit stays at the slow record (offset 0)');
    release();
    await until('the slow record', () => slowDone);
    await until('the commit past every record', async () => (await committed('hol.g', topic)) === 6);
    await sub.close();
  });

  test('a consumer killed while its slow record runs: the next one gets it again, nothing of the partition is lost', async () => {
    const topic = 'hol.crash';
    await ensureKafkaTopics({ brokers: kafka.brokers }, [{ topic, numPartitions: 1, replicationFactor: 1 }]);
    // The doomed bus dies as a killed process does (test/doomed-kafka.ts): no commit, no leave.
    const doomedBus = await doomedKafkaBus(kafka.brokers, 'hol-doomed');
    const doomed = doomedBus.bus;
    buses.push(doomed);
    let slowStarted = false;
    const first: string[] = [];
    await doomed.subscribe<{ n: string }>({
      topic,
      groupId: 'hol.crash.g',
      concurrency: 8,
      keyConcurrency: 4,
      handler: async (m) => {
        if (m.key === 'slow') {
          slowStarted = true;
          await forever; // does not finish before the consumer is killed
        }
        first.push(m.value.n);
      },
    });
    const publisher = await createKafkaBus({ brokers: kafka.brokers, clientId: 'hol-pub' });
    buses.push(publisher);
    await publisher.publish(topic, [{ key: 'slow', value: { n: 'slow' } }]);
    await until('the slow record to start', () => slowStarted);
    for (let i = 1; i <= 3; i++) await publisher.publish(topic, [{ key: `wf-${i}`, value: { n: `wf-${i}` } }]);
    await until('the later records on the doomed consumer', () => first.length === 3, 15_000);
    doomedBus.kill();

    const next = await createKafkaBus({ brokers: kafka.brokers, clientId: 'hol-next', sessionTimeoutMs: 6_000 });
    buses.push(next);
    const second = new Set<string>();
    await next.subscribe<{ n: string }>({ topic, groupId: 'hol.crash.g', concurrency: 8, keyConcurrency: 4, handler: (m) => void second.add(m.value.n) });
    await until("the unfinished slow record on the partition's next consumer", () => second.has('slow'), 60_000);
    await publisher.publish(topic, [{ key: 'wf-4', value: { n: 'wf-4' } }]);
    await until('a record published after the crash', () => second.has('wf-4'));
    // At-least-once: the finished ones behind the unfinished record come again too (the engine dedupes by event id).
    for (const n of ['wf-1', 'wf-2', 'wf-3']) assert.ok(second.has(n), `${n} redelivered (it was behind the uncommitted slow record)`);
  });
  test(`a partition's records held by a consumer stop at MAX_WINDOW (${MAX_WINDOW}): its fetching pauses, and resumes as they finish`, async () => {
    const topic = 'hol.window';
    const total = 2 * MAX_WINDOW;
    await ensureKafkaTopics({ brokers: kafka.brokers }, [{ topic, numPartitions: 2, replicationFactor: 1 }]);
    // Records placed by partition: the held ones on 0, markers on 1 that show fetches going on.
    const producer = new Kafka({ brokers: kafka.brokers, logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    const put = async (partition: number, values: { n: number; pad?: string }[]) =>
      void (await producer.send({ topic, messages: values.map((v) => ({ partition, key: `k-${partition}-${v.n}`, value: JSON.stringify(v) })) }));
    // 8 KB each: one fetch (1 MiB per partition) brings ~120 records, so the window fills over many
    // fetches, and without the pause every record of the partition would be fetched and held.
    const pad = 'x'.repeat(8 * 1024);
    for (let i = 0; i < total; i += 100)
      await put(
        0,
        Array.from({ length: Math.min(100, total - i) }, (_, j) => ({ n: i + j, pad })),
      );
    const bus = await createKafkaBus({ brokers: kafka.brokers, clientId: 'hol-window', sessionTimeoutMs: 6_000 });
    buses.push(bus);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    let handled = 0;
    let markers = 0;
    // Room for every record at once: only the window limits how many are held (and so started).
    const sub = await bus.subscribe<{ n: number }>({
      topic,
      groupId: 'hol.window.g',
      concurrency: total + 100,
      keyConcurrency: 4,
      handler: async (m) => {
        if (m.id.startsWith(`${topic}/1/`)) return void markers++;
        started++;
        await gate;
        handled++;
      },
    });
    const paused = async () => /flowdesk_bus_consumer_paused\{[^}]*topic="hol\.window"[^}]*\} 1$/m.test(await metricsText());
    const bound = MAX_WINDOW + 300; // the window, plus the fetches already on their way when it filled
    await until('the window filled', () => started >= MAX_WINDOW, 60_000);
    // Ten more fetches of the topic (each marker on partition 1 comes in a later one): a partition
    // still fetched would bring ~120 more of its records in each.
    for (let i = 1; i <= 10; i++) {
      await put(1, [{ n: -i }]);
      await until(`marker ${i} on the other partition`, () => markers === i, 30_000);
    }
    assert.ok(started <= bound, `${started} records of the partition held at once (at most ${MAX_WINDOW} plus a fetch or two)`);
    assert.ok(await paused(), 'the pause is shown (flowdesk_bus_consumer_paused 1)');
    release();
    await until('every record handled once the window drained and fetching resumed', () => handled === total, 60_000);
    assert.equal(started, total, 'each record started once');
    await until('the partition no longer paused', async () => !(await paused()));
    await producer.disconnect();
    await sub.close();
  });
});
