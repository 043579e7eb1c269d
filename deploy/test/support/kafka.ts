// Kafka for the deploy tests: real brokers from tools/kafka (the machine's Java), else a
// testcontainers broker where a Docker engine answers, else the reason to skip (or, under CI=true,
// to fail: CI installs the broker, so its absence is a broken CI, not a reason to skip).
// These suites run once per CI run, in the Postgres pass (DATABASE_URL set): they always use the
// machine's Postgres anyway, so running them in the PGlite pass too would only repeat them.
import { EVENT_TOPICS } from '@flowdesk/contracts';
import { test } from 'node:test';
import { ensureKafkaTopics } from '@flowdesk/bus';
import { localKafkaUnavailable, startLocalKafka, type LocalKafka } from '@flowdesk/bus/testing';

/** Why the Kafka suites cannot run here (undefined: they can, on a local broker). */
export function kafkaSkipReason(): string | undefined {
  if (!process.env.DATABASE_URL && process.env.FLOWDESK_KAFKA_TESTS !== 'always') {
    return 'the deploy Kafka suites run once per CI run, in the pass with DATABASE_URL (FLOWDESK_KAFKA_TESTS=always runs them anyway)';
  }
  const missing = localKafkaUnavailable();
  return missing ? `no local Kafka broker: ${missing}` : undefined;
}

/** Under CI=true a broker that should be there but is not is a failure, not a skip. */
export function mustRunKafka(reason: string | undefined): boolean {
  return process.env.CI === 'true' && reason !== undefined && !reason.startsWith('the deploy Kafka suites run once');
}

/**
 * Defines a Kafka suite (`define`) where it can run here; else one test named `name` that fails
 * (under CI=true, when the broker is missing) or is skipped, saying why.
 */
export function whenKafka(name: string, define: () => void): void {
  const reason = kafkaSkipReason();
  if (reason && mustRunKafka(reason)) {
    test(name, () => {
      throw new Error(`CI needs the local Kafka broker (scripts/install-kafka.sh): ${reason}`);
    });
  } else if (reason) {
    test(name, { skip: reason }, () => {});
  } else {
    define();
  }
}

/** The topics an init job creates (deploy/k8s/base/kafka-topics.yaml), for `nodes` brokers. */
export async function createFlowdeskTopics(brokers: string[], nodes: number, partitions = 6): Promise<void> {
  await ensureKafkaTopics(
    { brokers },
    [...EVENT_TOPICS].map((topic) => ({
      topic,
      numPartitions: partitions,
      replicationFactor: nodes,
    })),
  );
}

/** One broker or a three-node cluster with Flowdesk's topics. */
export async function startKafkaWithTopics(nodes: 1 | 3, partitions = 6): Promise<LocalKafka> {
  const kafka = await startLocalKafka({ nodes });
  try {
    await createFlowdeskTopics(kafka.brokers, nodes, partitions);
    return kafka;
  } catch (err) {
    await kafka.stop();
    throw err;
  }
}
