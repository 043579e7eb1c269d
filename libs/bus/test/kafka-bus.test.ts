// The contract suite on Kafka (kafkajs against a broker in a testcontainers KafkaContainer).
// Skipped, with the reason shown, where no Docker engine answers; the embedded runs always run.
import { test } from 'node:test';
import { createKafkaBus, ensureKafkaTopics, type EventBus } from '../src/index.ts';
import { runBusContract, type BusFixture } from './contract.ts';
import { dockerAnswers, startKafkaContainer } from '../src/testing.ts';

const SKIP = 'no Docker engine answers: Kafka contract suite skipped';

async function kafkaFixture(): Promise<BusFixture> {
  const kafka = await startKafkaContainer();
  const { brokers } = kafka;
  let buses: EventBus[] = [];
  const closeAll = async () => {
    for (const b of buses) await b.close();
    buses = [];
  };
  return {
    separateConnections: true,
    deliveryTimeoutMs: 60_000,
    async open() {
      // Short backoffs and session timeout: group rebalances after close are the slow part here.
      const bus = await createKafkaBus({ brokers, clientId: 'contract', sessionTimeoutMs: 10_000 });
      buses.push(bus);
      return bus;
    },
    restart: closeAll,
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

if (await dockerAnswers()) {
  runBusContract('Kafka (testcontainers)', kafkaFixture, { testTimeoutMs: 240_000 });
} else {
  test('Kafka contract suite', { skip: SKIP }, () => {});
}
