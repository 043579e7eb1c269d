// `npm run kafka:start [-- --nodes 3]`: a local Kafka (one broker, or a three-node cluster) for
// development, with Flowdesk's topics created; prints the KAFKA_BROKERS to give `npm start` or the
// services. Ctrl+C stops the brokers and deletes their data (a temporary folder).
import { parseArgs } from 'node:util';
import { CREDENTIAL_REVOKED_TOPIC, TRIGGER_TOPIC } from '@flowdesk/contracts';
import { ensureKafkaTopics } from '@flowdesk/bus';
import { kafkaVersion, startLocalKafka } from '@flowdesk/bus/testing';

const { values } = parseArgs({
  options: { nodes: { type: 'string', default: '1' }, partitions: { type: 'string', default: '12' }, 'keep-data': { type: 'boolean', default: false } },
});
const nodes = Number(values.nodes);
if (nodes !== 1 && nodes !== 3) {
  console.error('--nodes must be 1 or 3');
  process.exit(2);
}
const t0 = Date.now();
console.log(`Starting Kafka ${kafkaVersion()} (${nodes} node${nodes > 1 ? 's' : ''}, KRaft)...`);
const kafka = await startLocalKafka({ nodes, keepData: values['keep-data'] });
await ensureKafkaTopics(
  { brokers: kafka.brokers },
  [TRIGGER_TOPIC, CREDENTIAL_REVOKED_TOPIC].map((topic) => ({ topic, numPartitions: Number(values.partitions), replicationFactor: nodes })),
);
console.log(`Kafka ready in ${((Date.now() - t0) / 1000).toFixed(1)} s; data in ${kafka.dataDir} (broker.log per node).`);
console.log(`\n  KAFKA_BROKERS=${kafka.brokers.join(',')} KAFKA_REPLICATION_FACTOR=${nodes} npm start\n`);
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await kafka.stop();
  console.log('Kafka stopped.');
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
