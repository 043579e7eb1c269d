// A Kafka bus that dies as a killed process does: kill() destroys every connection it has and every
// later one fails at once, so it commits nothing, sends no heartbeat and never leaves its group; the
// broker expires its session and hands its partitions to the rest of the group, which gets the
// records it held again (they were never committed). Refusing new connections matters: destroying
// the sockets alone, kafkajs reconnected and the "dead" consumer kept its partitions.
import net from 'node:net';
import { logLevel, type ISocketFactory } from 'kafkajs';
import { createKafkaBus, type EventBus } from '../src/index.ts';

export async function doomedKafkaBus(brokers: string[], clientId: string, sessionTimeoutMs = 6_000): Promise<{ bus: EventBus; kill(): void }> {
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
  const bus = await createKafkaBus({ brokers, clientId, sessionTimeoutMs, socketFactory, logLevel: logLevel.NOTHING });
  return {
    bus,
    kill() {
      dead = true;
      for (const s of sockets) s.destroy();
    },
  };
}
