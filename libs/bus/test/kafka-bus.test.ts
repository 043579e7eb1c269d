// The contract suite on Kafka: kafkajs against a real Apache Kafka broker, run from the jars of
// tools/kafka with the machine's Java (scripts/install-kafka.sh installs them; .ci/run does). Where
// Java or the jars are missing it falls back to a testcontainers broker when a Docker engine
// answers, else it is skipped with the reason. Under CI=true a missing broker fails the run instead.
// It does not use the database, so it runs once per CI run: in the PGlite pass (no DATABASE_URL),
// not again in the Postgres pass (docs/event-bus.md, "Tests").
import { test } from 'node:test';
import { doomedKafkaBus } from './doomed-kafka.ts';
import { createKafkaBus, ensureKafkaTopics, type EventBus } from '../src/index.ts';
import { runBusContract, type BusFixture } from './contract.ts';
import { dockerAnswers, localKafkaUnavailable, startKafkaContainer, startLocalKafka } from '../src/testing.ts';

async function kafkaFixture(start: () => Promise<{ brokers: string[]; stop(): Promise<void> }>): Promise<BusFixture> {
  const kafka = await start();
  const { brokers } = kafka;
  let buses: EventBus[] = [];
  const closeAll = async () => {
    for (const b of buses) await b.close();
    buses = [];
  };
  return {
    separateConnections: true,
    deliveryTimeoutMs: 30_000,
    async open() {
      // A short session timeout: group rebalances after close are the slow part here.
      const bus = await createKafkaBus({ brokers, clientId: 'contract', sessionTimeoutMs: 6_000 });
      buses.push(bus);
      return bus;
    },
    restart: closeAll,
    // A bus that dies as a killed process does (test/doomed-kafka.ts); the broker expires its
    // session (6 s) and hands its partitions to the rest of the group.
    async openDoomed() {
      const doomed = await doomedKafkaBus(brokers, 'contract-doomed');
      buses.push(doomed.bus);
      return { bus: doomed.bus, kill: async () => doomed.kill() };
    },
    async createTopic(topic) {
      // Three partitions: keys spread out, so ordering per key and group sharing are really exercised.
      await ensureKafkaTopics({ brokers }, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
    },
    async close() {
      await closeAll();
      await kafka.stop();
    },
  };
}

const local = localKafkaUnavailable();
if (process.env.DATABASE_URL && process.env.FLOWDESK_KAFKA_TESTS !== 'always') {
  test('Kafka contract suite', { skip: 'runs once per CI run, in the pass without DATABASE_URL (it does not use the database)' }, () => {});
} else if (!local) {
  runBusContract('Kafka (local broker, tools/kafka)', () => kafkaFixture(() => startLocalKafka()), { testTimeoutMs: 120_000 });
} else if (await dockerAnswers()) {
  runBusContract('Kafka (testcontainers)', () => kafkaFixture(startKafkaContainer), { testTimeoutMs: 240_000 });
} else if (process.env.CI === 'true') {
  test('Kafka contract suite', () => {
    throw new Error(`CI needs a Kafka broker: ${local} (and no Docker engine answers)`);
  });
} else {
  test('Kafka contract suite', { skip: `${local}; no Docker engine either: Kafka contract suite skipped` }, () => {});
}
