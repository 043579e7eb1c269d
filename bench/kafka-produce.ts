// What one Kafka produce costs this process, by batch size, against a real local broker
// (tools/kafka, one node): the producer exactly as the Kafka bus makes it (idempotent, one request
// in flight, acks=all, partition per key remembered), one sendBatch after the other, records of the
// webhook's trigger-event size. Prints CPU per batch and per record, the round trip, and the fixed
// and per-record parts of the CPU (a least-squares line through the batch sizes).
//
// The floor, in the same run: a bare TCP round trip of the same bytes to another process on this
// machine (a child that answers each message with one byte), which is what no Kafka client can go
// below. On a VM whose cross-process wake-ups are dear, that floor alone is a large part of a small
// batch's cost, and bigger batches (more concurrent webhooks) are what amortises it.
//
//   npm run bench:kafka-produce                (needs Java and scripts/install-kafka.sh)
//   BENCH_SIZES=1,4,16,32,64 BENCH_BATCHES=2000 (records per batch; batches per size, at most)
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { busProducer, ensureKafkaTopics } from '@flowdesk/bus';
import { startLocalKafka } from '@flowdesk/bus/testing';

if (process.argv[2] === '--echo-child') {
  // The floor's other end: answers every chunk it receives with one byte.
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('data', () => socket.write('k'));
  });
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as net.AddressInfo).port));
} else {
  await main();
}

async function main(): Promise<void> {
  const sizes = (process.env.BENCH_SIZES ?? '1,4,16,32,64').split(',').map(Number);
  const maxBatches = Number(process.env.BENCH_BATCHES ?? 2000);
  // A trigger event as webhook-ingest publishes it for bench/webhook-ingest.ts's body.
  const value = JSON.stringify({
    eventId: `evt_${randomUUID()}`,
    workflowId: randomUUID(),
    ownerId: randomUUID(),
    source: 'webhook',
    receivedAt: new Date().toISOString(),
    payload: { event: 'order.created', customer: { name: 'Ada', email: 'ada@example.com' }, items: [{ sku: 'A-1', qty: 2 }] },
    headers: { host: '127.0.0.1:34567', 'content-type': 'application/json', 'content-length': '110', connection: 'keep-alive' },
  });
  const key = randomUUID();

  interface Row {
    size: number;
    cpuUs: number;
    rttUs: number;
  }
  /** Runs `once` (one round trip) until ~3 s or maxBatches, after a warm-up; CPU and wall per call. */
  async function measure(once: () => Promise<void>, seconds = 3): Promise<{ cpuUs: number; rttUs: number }> {
    for (let i = 0; i < 200; i++) await once();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let n = 0;
    while (n < maxBatches && performance.now() - t0 < seconds * 1000) {
      await once();
      n++;
    }
    const cpu = process.cpuUsage(cpu0);
    return { cpuUs: (cpu.user + cpu.system) / n, rttUs: ((performance.now() - t0) * 1000) / n };
  }

  // Floor: a TCP round trip to another process, with a batch's bytes.
  const child = fork(new URL(import.meta.url).pathname, ['--echo-child'], { stdio: 'inherit' });
  const port = await new Promise<number>((resolve) => child.once('message', (p) => resolve(p as number)));
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((resolve) => socket.once('connect', resolve));
  let answered: (() => void) | undefined;
  socket.on('data', () => {
    const done = answered;
    answered = undefined;
    done?.();
  });
  const floors = new Map<number, { cpuUs: number; rttUs: number }>();
  for (const size of sizes) {
    const bytes = Buffer.alloc(Math.max(64, size * (value.length + 20)), 1);
    floors.set(
      size,
      await measure(
        () =>
          new Promise<void>((resolve) => {
            answered = resolve;
            socket.write(bytes);
          }),
      ),
    );
  }
  socket.destroy();
  child.kill();

  const kafka = await startLocalKafka({ heap: '768m', quickStart: false });
  const rows: Row[] = [];
  try {
    await ensureKafkaTopics({ brokers: kafka.brokers }, [{ topic: 'bench-produce', numPartitions: 12, replicationFactor: 1 }]);
    const client = new Kafka({ brokers: kafka.brokers, clientId: 'bench-produce', logLevel: logLevel.NOTHING });
    const producer = busProducer(client);
    await producer.connect();
    // The broker's JIT reaches its produce path over its first seconds of load (bench/webhook-ingest.ts).
    const warm = Date.now();
    while (Date.now() - warm < 10_000)
      await producer.sendBatch({ acks: -1, topicMessages: [{ topic: 'bench-produce', messages: Array.from({ length: 16 }, () => ({ key, value })) }] });
    for (const size of sizes) {
      const r = await measure(async () => {
        const messages = [];
        for (let i = 0; i < size; i++) messages.push({ key, value });
        await producer.sendBatch({ acks: -1, topicMessages: [{ topic: 'bench-produce', messages }] });
      });
      rows.push({ size, ...r });
    }
    await producer.disconnect();
  } finally {
    await kafka.stop();
  }

  console.log(`kafkajs produce to a local broker (${value.length}-byte records, one key, one request in flight, acks=all)`);
  console.log('records/batch   CPU/batch   CPU/record   round trip   floor: TCP round trip to another process (CPU, wall)');
  for (const r of rows) {
    const f = floors.get(r.size)!;
    console.log(
      `${String(r.size).padStart(13)}   ${r.cpuUs.toFixed(0).padStart(6)} µs   ${(r.cpuUs / r.size).toFixed(1).padStart(7)} µs   ${r.rttUs.toFixed(0).padStart(7)} µs   ${f.cpuUs.toFixed(0)} µs, ${f.rttUs.toFixed(0)} µs`,
    );
  }
  // CPU per batch ≈ fixed + perRecord × size.
  const n = rows.length;
  const mx = rows.reduce((s, r) => s + r.size, 0) / n;
  const my = rows.reduce((s, r) => s + r.cpuUs, 0) / n;
  const perRecord = rows.reduce((s, r) => s + (r.size - mx) * (r.cpuUs - my), 0) / rows.reduce((s, r) => s + (r.size - mx) ** 2, 0);
  const fixed = my - perRecord * mx;
  const floor1 = floors.get(rows[0]!.size)!.cpuUs;
  console.log(
    `fit: ${fixed.toFixed(0)} µs per batch + ${perRecord.toFixed(1)} µs per record; the bare round trip (floor) is ${floor1.toFixed(0)} µs of that fixed part`,
  );
}
