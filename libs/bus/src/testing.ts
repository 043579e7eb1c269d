// Test support shared by every suite that needs a real broker (the bus's Kafka contract run and the
// production-path tests in deploy/): one Docker probe and one way to start Kafka, so every such test
// skips for the same reason and runs against the same broker image. Not part of the runtime API.

/** The broker the Kafka tests run against: Confluent's image in KRaft mode (no ZooKeeper). */
export const KAFKA_TEST_IMAGE = 'confluentinc/cp-kafka:7.9.0';

/** True when testcontainers finds a container runtime within a few seconds (it fails fast without one). */
export async function dockerAnswers(): Promise<boolean> {
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

/** A one-broker Kafka in a container; `brokers` is what kafkajs connects to from the host. */
export async function startKafkaContainer(): Promise<{ brokers: string[]; stop(): Promise<void> }> {
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const container = await new KafkaContainer(KAFKA_TEST_IMAGE).withKraft().start();
  return {
    brokers: [`${container.getHost()}:${container.getMappedPort(9093)}`],
    stop: async () => {
      await container.stop();
    },
  };
}

export {
  kafkaToolsDir,
  kafkaVersion,
  localKafkaUnavailable,
  startLocalKafka,
  type KafkaNode,
  type LocalKafka,
  type LocalKafkaOptions,
} from './testing-kafka.ts';
