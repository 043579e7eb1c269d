// Answering the webhook's caller on Kafka: the same suite as respond.test.ts, with `npm start`'s
// stack on a real broker from tools/kafka (the machine's Java): the trigger event and the answer
// (webhook.reply.v1, keyed by the ingest replica) go through Kafka. Runs once per CI run, in the
// PGlite pass (FLOWDESK_KAFKA_TESTS=always runs it in both); skipped without a broker (under
// CI=true: failed).
import { test } from 'node:test';
import { localKafkaUnavailable, startLocalKafka, type LocalKafka } from '@flowdesk/bus/testing';
import { respondSuite } from './helpers/respond-suite.ts';

function skipReason(): string | undefined {
  if (process.env.DATABASE_URL && process.env.FLOWDESK_KAFKA_TESTS !== 'always') return 'runs once per CI run, in the PGlite pass';
  const missing = localKafkaUnavailable();
  return missing ? `no local Kafka broker: ${missing}` : undefined;
}

const reason = skipReason();
if (reason && process.env.CI === 'true' && reason.startsWith('no local')) {
  test('answering the caller on Kafka', () => {
    throw new Error(`CI needs the local Kafka broker (scripts/install-kafka.sh): ${reason}`);
  });
} else if (reason) {
  test('answering the caller on Kafka', { skip: reason }, () => {});
} else {
  let kafka: LocalKafka | undefined;
  respondSuite(
    async () => {
      kafka = await startLocalKafka();
      return { KAFKA_BROKERS: kafka.brokers.join(','), KAFKA_REPLICATION_FACTOR: '1', KAFKA_TOPIC_PARTITIONS: '3' };
    },
    async () => {
      await kafka?.stop();
    },
  );
}
