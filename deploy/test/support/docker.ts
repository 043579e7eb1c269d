// Docker-dependent fixtures: skipped with a clear message where no Docker engine answers.
import { CREDENTIAL_REVOKED_TOPIC, ENTITY_CHANGED_TOPIC, TRIGGER_TOPIC, WORKFLOW_CHANGED_TOPIC } from '@flowdesk/contracts';
import { ensureKafkaTopics } from '@flowdesk/bus';
import { dockerAnswers, startKafkaContainer } from '@flowdesk/bus/testing';

export { dockerAnswers };

export const NO_DOCKER = 'no Docker engine answers: the Postgres + Kafka (testcontainers) variant is skipped';

export interface Infrastructure {
  databaseUrl: string;
  kafkaBrokers: string;
  close(): Promise<void>;
}

/** Postgres and a one-broker Kafka (KRaft) in containers, with the topics an init job would create. */
export async function startPostgresAndKafka(): Promise<Infrastructure> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const [pg, kafka] = await Promise.all([new PostgreSqlContainer('postgres:16-alpine').start(), startKafkaContainer()]);
  const kafkaBrokers = kafka.brokers.join(',');
  // Producers and consumers never auto-create topics (docs/event-bus.md): the init job's part.
  await ensureKafkaTopics(
    { brokers: kafka.brokers },
    [TRIGGER_TOPIC, CREDENTIAL_REVOKED_TOPIC, WORKFLOW_CHANGED_TOPIC, ENTITY_CHANGED_TOPIC].map((topic) => ({ topic, numPartitions: 3, replicationFactor: 1 })),
  );
  return {
    databaseUrl: pg.getConnectionUri(),
    kafkaBrokers,
    async close() {
      await Promise.allSettled([kafka.stop(), pg.stop()]);
    },
  };
}
