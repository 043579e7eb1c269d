// Throughput of the embedded event bus: publish (durably committed) and end to end (publish →
// handler → done) on PGlite with a data folder on disk, as `npm start` runs it, and on Postgres when
// DATABASE_URL is set (a fresh database, dropped afterwards).
//   node --conditions=source --import tsx bench/bus.ts [messages=3000] [keys=100] [concurrency=16]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createTestDatabase, openDatabase, type Database } from '@flowdesk/db';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';

const total = Number(process.argv[2] ?? 3000);
const keys = Number(process.argv[3] ?? 100);
const concurrency = Number(process.argv[4] ?? 16);

const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString('en')}/s`;
const payload = (i: number) => ({ eventId: `e${i}`, workflowId: `wf-${i % keys}`, payload: { customer: { name: 'Ada' }, i } });

/** `publishers` callers publishing one message each, as webhook-ingest does per request. */
async function publishSingles(bus: EventBus, topic: string, n: number, publishers: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: publishers }, async () => {
      while (next < n) {
        const i = next++;
        await bus.publish(topic, [{ key: `wf-${i % keys}`, value: payload(i) }]);
      }
    }),
  );
  return performance.now() - t0;
}

async function publishBatches(bus: EventBus, topic: string, n: number, size: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i += size) {
    await bus.publish(topic, Array.from({ length: Math.min(size, n - i) }, (_, j) => ({ key: `wf-${(i + j) % keys}`, value: payload(i + j) })));
  }
  return performance.now() - t0;
}

/** From the first publish to the last message done, with a subscriber already waiting. */
async function endToEnd(bus: EventBus, topic: string, n: number): Promise<number> {
  let handled = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const sub = await bus.subscribe({ topic, groupId: 'bench', concurrency, handler: () => { if (++handled === n) resolveDone(); } });
  const t0 = performance.now();
  await publishSingles(bus, topic, n, concurrency);
  await done;
  const ms = performance.now() - t0;
  await sub.close();
  return ms;
}

async function run(label: string, db: Database): Promise<void> {
  const bus = await createEmbeddedBus(db, { onError: (e) => console.error(e) });
  const singles = await publishSingles(bus, 'bench.singles', total, concurrency);
  const batches = await publishBatches(bus, 'bench.batches', total, 100);
  const e2e = await endToEnd(bus, 'bench.e2e', total);
  await bus.close();
  console.log(`${label}: ${total} messages, ${keys} keys, concurrency ${concurrency}`);
  console.log(`  publish, 1 per call, ${concurrency} callers: ${rate(total, singles)}`);
  console.log(`  publish, batches of 100:          ${rate(total, batches)}`);
  console.log(`  end to end (publish → handled):   ${rate(total, e2e)}`);
}

const dir = await mkdtemp(path.join(tmpdir(), 'flowdesk-bus-bench-'));
const lite = await openDatabase({ kind: 'pglite', dataDir: dir });
await run('PGlite (data folder on disk)', lite);
await lite.close();
await rm(dir, { recursive: true, force: true });

if (process.env.DATABASE_URL) {
  const pgdb = await createTestDatabase();
  await run('Postgres', pgdb.db);
  await pgdb.close();
} else {
  console.log('Postgres: skipped (set DATABASE_URL=postgres://... to include it)');
}
