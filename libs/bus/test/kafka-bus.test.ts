// The contract suite on Kafka: kafkajs against a real Apache Kafka broker, run from the jars of
// tools/kafka with the machine's Java (scripts/install-kafka.sh installs them; .ci/run does). Where
// Java or the jars are missing it falls back to a testcontainers broker when a Docker engine
// answers, else it is skipped with the reason. Under CI=true a missing broker fails the run instead.
// It does not use the database, so it runs once per CI run: in the PGlite pass (no DATABASE_URL),
// not again in the Postgres pass (docs/event-bus.md, "Tests").
import net from 'node:net';
import { test } from 'node:test';
import { logLevel, type ISocketFactory } from 'kafkajs';
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
    // A bus that dies as a killed process does: kill() destroys every connection it has and every
    // later one fails at once, so it commits nothing, sends no heartbeat and never leaves its group;
    // the broker expires its session (6 s) and hands its partitions to the rest of the group, which
    // gets the records it held again (they were never committed). Refusing new connections matters:
    // destroying the sockets alone, kafkajs reconnected and the "dead" consumer kept its partitions.
    async openDoomed() {
      const sockets = new Set<net.Socket>();
      let dead = false;
      const socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
        if (dead) {
          const refused = new net.Socket();
          process.nextTick(() => refused.destroy(Object.assign(new Error('connect ECONNREFUSED (killed)'), { code: 'ECONNREFUSED' })));
          return refused;
        }
        const socket = net.connect({ host, port }, onConnect);
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        return socket;
      };
      const bus = await createKafkaBus({ brokers, clientId: 'contract-doomed', sessionTimeoutMs: 6_000, socketFactory, logLevel: logLevel.NOTHING });
      buses.push(bus);
      return {
        bus,
        async kill() {
          dead = true;
          for (const s of sockets) s.destroy();
        },
      };
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
