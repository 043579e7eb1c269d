// The production path under failure, on a real three-node Kafka cluster (tools/kafka, the machine's
// Java) and the machine's Postgres, each service its own process (dist/main.js):
//  - all brokers gone: webhook-ingest answers 503 with Retry-After within a bounded wait, /readyz
//    says not ready; brokers back: 200 again, no restart;
//  - kill -9 of the broker leading trigger-topic partitions under a webhook load: every 200 gives
//    exactly one run, nothing doubled, the load recovers by itself;
//  - two engines in one consumer group, one killed mid-load: the other takes its partitions, every
//    accepted event gives exactly one run.
// Skipped with the reason where Java or the broker's jars are missing (failed under CI=true), and
// in the pass without DATABASE_URL (support/kafka.ts: these run once per CI run).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { TRIGGER_TOPIC } from '@flowdesk/contracts';
import type { LocalKafka } from '@flowdesk/bus/testing';
import { createFirstUser, createWebhookWorkflow, workspaceApi } from './support/flowdesk.ts';
import { startKafkaWithTopics, whenKafka } from './support/kafka.ts';
import { freePort, startService, type ServiceProcess } from './support/processes.ts';
import { freshDatabase, startStack, type Stack } from './support/stack.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PUBLISH_TIMEOUT_MS = 3_000;
const WORKFLOWS = 20; // ingest allows 10/s, burst 50 per workflow and replica: 20 spread the load
// The issue's 5,000 deliveries (the engine-kill case sends half): measured at load average ~30 on
// the two-core machine, the whole file took 212 s (leader kill 51 s, engine kill 29 s), well inside
// CI's budget. FLOWDESK_KAFKA_LOAD changes it; the ceilings below grow with it.
const LOAD = Number(process.env.FLOWDESK_KAFKA_LOAD ?? 5000);
const PARTITIONS = 6;
// Ceilings grow with the load (a loaded two-core machine records ~10 runs/s at worst).
const LOAD_CEILING_MS = Math.max(240_000, LOAD * 100);

interface Delivery {
  status: number;
  ms: number;
  retryAfter: string | null;
  eventId?: string;
  body?: unknown;
}

async function deliverOnce(ingest: string, wf: { id: string; secret: string }, n: number): Promise<Delivery> {
  const t0 = Date.now();
  try {
    const res = await fetch(`${ingest}/functions/v1/webhook-trigger/${wf.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-secret': wf.secret },
      body: JSON.stringify({ n }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await res.json().catch(() => ({}))) as { eventId?: string };
    return { status: res.status, ms: Date.now() - t0, retryAfter: res.headers.get('retry-after'), eventId: body.eventId, body };
  } catch {
    return { status: 0, ms: Date.now() - t0, retryAfter: null };
  }
}

interface LoadResult {
  accepted: string[];
  statuses: Map<number, number>;
  /** 503s, with when they happened (ms after the load began). */
  unavailable: number[];
}

/**
 * `count` deliveries from `clients` concurrent senders that retry a 503/429 (as webhook senders
 * do, after a short pause) until it is accepted; `during(accepted)` is called after each 200.
 */
async function load(
  ingest: string,
  wfs: { id: string; secret: string }[],
  count: number,
  clients: number,
  onAccepted: (n: number) => void,
): Promise<LoadResult> {
  const accepted: string[] = [];
  const statuses = new Map<number, number>();
  const unavailable: number[] = [];
  const t0 = Date.now();
  let next = 0;
  const deadline = Date.now() + LOAD_CEILING_MS;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (;;) {
        const n = next++;
        if (n >= count) return;
        for (;;) {
          const d = await deliverOnce(ingest, wfs[n % wfs.length]!, n);
          statuses.set(d.status, (statuses.get(d.status) ?? 0) + 1);
          if (d.status === 200) {
            accepted.push(d.eventId!);
            onAccepted(accepted.length);
            break;
          }
          if (d.status === 503) unavailable.push(Date.now() - t0);
          if (d.status !== 503 && d.status !== 429 && d.status !== 0) throw new Error(`delivery ${n}: unexpected ${d.status} ${JSON.stringify(d.body)}`);
          if (Date.now() > deadline) throw new Error(`delivery ${n} not accepted before the deadline (last ${d.status})`);
          await sleep(d.status === 429 ? 300 : 100);
        }
      }
    }),
  );
  return { accepted, statuses, unavailable };
}

whenKafka('Kafka failure tests (three brokers)', () => {
  describe('production path on a three-node Kafka cluster, under failure', { timeout: 360_000 + 3 * LOAD_CEILING_MS }, () => {
    let kafka: LocalKafka;
    let db: Awaited<ReturnType<typeof freshDatabase>>;
    let stack: Stack;
    let sql: pg.Client;
    const wfs: { id: string; secret: string }[] = [];
    let ingest: string;
    const extra: ServiceProcess[] = [];

    before(async () => {
      [kafka, db] = await Promise.all([startKafkaWithTopics(3, PARTITIONS), freshDatabase()]);
      stack = await startStack(
        {
          databaseUrl: db.url,
          kafkaBrokers: kafka.brokers.join(','),
          env: {
            'webhook-ingest': { KAFKA_PUBLISH_TIMEOUT_MS: String(PUBLISH_TIMEOUT_MS) },
            // A dead engine's partitions move after this; the default 30 s would only slow the test.
            'workflow-engine': { KAFKA_SESSION_TIMEOUT_MS: '6000', ENGINE_CONCURRENCY: '16' },
          },
        },
        ['auth', 'workspace-api', 'webhook-ingest', 'workflow-engine'],
      );
      ingest = stack.url('webhook-ingest');
      const { apiKey } = await createFirstUser(db.url);
      const api = await workspaceApi(stack, apiKey);
      for (let i = 0; i < WORKFLOWS; i++) wfs.push(await createWebhookWorkflow(api, `load ${i}`, { nodes: [], edges: [] }));
      sql = new pg.Client({ connectionString: db.url });
      await sql.connect();
    });

    after(async () => {
      await sql?.end().catch(() => {});
      for (const p of extra) p.child.kill('SIGKILL');
      await stack?.close();
      await kafka?.stop();
      await db?.close();
    });

    /** Runs per event id (the superuser reads past row-level security). */
    async function runsOf(eventIds: string[]): Promise<Map<string, { n: number; finished: number }>> {
      const { rows } = await sql.query<{ event_id: string; n: number; finished: number }>(
        `SELECT event_id, count(*)::int AS n, count(*) FILTER (WHERE status IN ('succeeded','failed','skipped'))::int AS finished
           FROM engine.run WHERE event_id = ANY($1) GROUP BY event_id`,
        [eventIds],
      );
      return new Map(rows.map((r) => [r.event_id, { n: r.n, finished: r.finished }]));
    }

    /** Waits until every accepted event has a finished run; then asserts exactly one run each. */
    async function expectOneRunEach(accepted: string[], timeoutMs: number): Promise<void> {
      assert.equal(new Set(accepted).size, accepted.length, 'every 200 carried its own event id');
      const deadline = Date.now() + timeoutMs;
      let runs = await runsOf(accepted);
      while ([...runs.values()].reduce((a, r) => a + r.finished, 0) < accepted.length && Date.now() < deadline) {
        await sleep(500);
        runs = await runsOf(accepted);
      }
      const missing = accepted.filter((id) => !runs.get(id)?.finished);
      const doubled = [...runs].filter(([, r]) => r.n !== 1);
      const engines = [stack.proc('workflow-engine'), ...extra]
        .map((p) => `${p.name} ${p.url}:\n${[...p.stderr, ...p.stdout].slice(-15).join('\n')}`)
        .join('\n');
      assert.deepEqual(
        missing.slice(0, 5),
        [],
        `${missing.length} of ${accepted.length} accepted deliveries have no finished run; engines' last lines:\n${engines}`,
      );
      assert.deepEqual(doubled, [], 'an event ran more than once');
    }

    test('all brokers gone: 503 with Retry-After within a bounded wait, /readyz not ready; brokers back: 200 again without a restart', async (t) => {
      assert.equal((await deliverOnce(ingest, wfs[0]!, 0)).status, 200);
      await Promise.all(kafka.nodes.map((n) => kafka.kill(n.id)));

      const first = await deliverOnce(ingest, wfs[1]!, 1);
      t.diagnostic(`first delivery with the brokers gone: ${first.status} after ${first.ms} ms`);
      assert.equal(first.status, 503);
      assert.ok(first.retryAfter, 'Retry-After is set');
      assert.ok(first.ms < PUBLISH_TIMEOUT_MS + 2_000, `answered within the publish timeout (${first.ms} ms)`);
      const second = await deliverOnce(ingest, wfs[2]!, 2);
      t.diagnostic(`next delivery: ${second.status} after ${second.ms} ms`);
      assert.equal(second.status, 503);
      assert.ok(second.ms < 1_000, `once the brokers are known gone, at once (${second.ms} ms)`);

      let ready = 200;
      for (const until = Date.now() + 15_000; Date.now() < until && ready === 200; await sleep(200)) ready = (await fetch(`${ingest}/readyz`)).status;
      assert.equal(ready, 503, 'ingest /readyz reports not ready');

      await kafka.restart(...kafka.nodes.map((n) => n.id));
      let back: Delivery | undefined;
      const t0 = Date.now();
      for (const until = Date.now() + 90_000; Date.now() < until; await sleep(250)) {
        back = await deliverOnce(ingest, wfs[3]!, 3);
        if (back.status === 200) break;
      }
      t.diagnostic(`200 again ${Date.now() - t0} ms after the brokers were registered`);
      assert.equal(back?.status, 200, 'accepted again, same process');
      assert.equal((await fetch(`${ingest}/readyz`)).status, 200);
      assert.equal(stack.proc('webhook-ingest').child.exitCode, null, 'ingest was not restarted');
      await expectOneRunEach([back.eventId!], 60_000);
    });

    test('kill -9 of the leader of trigger-topic partitions under a webhook load: every 200 is exactly one run, the load recovers by itself', async (t) => {
      const leaders = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => kafka.leaderOf(TRIGGER_TOPIC, p)));
      const victim = [...new Set(leaders)].sort((a, b) => leaders.filter((x) => x === b).length - leaders.filter((x) => x === a).length)[0]!;
      const count = LOAD;
      let killed: Promise<void> | undefined;
      const result = await load(ingest, wfs, count, 24, (n) => {
        if (n === Math.floor(count / 3) && !killed) killed = kafka.kill(victim);
      });
      await killed;
      const led = leaders.filter((l) => l === victim).length;
      t.diagnostic(
        `killed node ${victim} (leader of ${led}/${PARTITIONS} partitions) after ${Math.floor(count / 3)} accepted; statuses ${JSON.stringify([...result.statuses])}; 503s at ${result.unavailable.length ? `${result.unavailable[0]}–${result.unavailable.at(-1)} ms` : '-'}`,
      );
      assert.equal(result.accepted.length, count, 'every delivery was accepted in the end');
      assert.notEqual(await kafka.leaderOf(TRIGGER_TOPIC, leaders.indexOf(victim)), victim, 'another node leads its partitions');
      await expectOneRunEach(result.accepted, LOAD_CEILING_MS);
      await kafka.restart(victim);
    });

    test('two engines in one consumer group: one killed mid-load, the other takes over; every accepted event is one run', async (t) => {
      const second = await startService('workflow-engine', await freePort(), stack.envOf('workflow-engine'));
      extra.push(second);
      const count = Math.round(LOAD / 2);
      const first = stack.proc('workflow-engine');
      let killedAt = 0;
      const result = await load(ingest, wfs, count, 16, (n) => {
        if (n === Math.floor(count / 4) && !killedAt) {
          killedAt = Date.now();
          first.child.kill('SIGKILL');
        }
      });
      await first.exited;
      t.diagnostic(`first engine killed after ${Math.floor(count / 4)} accepted; statuses ${JSON.stringify([...result.statuses])}`);
      assert.equal(result.accepted.length, count);
      await expectOneRunEach(result.accepted, LOAD_CEILING_MS);
      t.diagnostic(`all runs recorded ${Date.now() - killedAt} ms after the kill`);
      assert.equal(second.child.exitCode, null, 'the surviving engine still runs');
    });
  });
});
