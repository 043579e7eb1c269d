// The contract suite on Kafka (kafkajs against a broker in a testcontainers KafkaContainer).
// Skipped, with the reason shown, where no Docker engine answers; the embedded runs always run.
import { test } from 'node:test';
import { createKafkaBus, ensureKafkaTopics, type EventBus } from '../src/index.ts';
import { runBusContract, type BusFixture } from './contract.ts';

const SKIP = 'no Docker engine answers: Kafka contract suite skipped';

/** True when testcontainers finds a container runtime within a few seconds (it fails fast without one). */
async function dockerAnswers(): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), 8_000);
    timer.unref();
  });
  const probe = (async () => {
    try {
      const { getContainerRuntimeClient } = await import('testcontainers');
      await getContainerRuntimeClient();
      return true;
    } catch {
      return false;
    }
  })();
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function kafkaFixture(): Promise<BusFixture> {
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const container = await new KafkaContainer('confluentinc/cp-kafka:7.9.0').withKraft().start();
  const brokers = [`${container.getHost()}:${container.getMappedPort(9093)}`];
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
      await container.stop();
    },
  };
}

if (await dockerAnswers()) {
  runBusContract('Kafka (testcontainers)', kafkaFixture, { testTimeoutMs: 240_000 });
} else {
  test('Kafka contract suite', { skip: SKIP }, () => {});
}
