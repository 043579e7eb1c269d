// The reply topic scales by partitions (docs/event-bus.md, "Reply topic"), on a real Kafka broker
// (tools/kafka, the machine's Java): two webhook-ingest replicas over HTTP, pinned to partitions 0
// and 1 of webhook.reply.v1, each with its own Kafka bus. The engine's side is its reply publish as
// the engine does it (services/workflow-engine app.ts sendReply: key = replica, partition =
// replyTo.partition), from a subscriber of workflow.trigger.v1. Each replica gets its own answers and
// consumes nothing of the other's. Skipped without a broker (under CI=true: failed).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createKafkaBus, ensureKafkaTopics, type EventBus, type SubscribeOptions } from '@flowdesk/bus';
import { localKafkaUnavailable, startLocalKafka, type LocalKafka } from '@flowdesk/bus/testing';
import { TRIGGER_TOPIC, WEBHOOK_REPLY_TOPIC, type TriggerEvent, type WebhookReply, type WebhookTriggerLookup } from '@flowdesk/contracts';
import { listen, type Service } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';

const missing = localKafkaUnavailable();
const skip = missing && process.env.CI !== 'true' ? `no local Kafka broker: ${missing}` : undefined;
if (missing && process.env.CI === 'true') throw new Error(`CI needs the local Kafka broker (scripts/install-kafka.sh): ${missing}`);

const SECRET = 'reply-partitions-secret';
const trigger: WebhookTriggerLookup = {
  workflowId: randomUUID(),
  ownerId: randomUUID(),
  active: true,
  requireSecret: true,
  signature: 'none',
  secret: SECRET,
  responseMode: 'finished',
};

interface Replica {
  id: string;
  base: string;
  app: Service;
  bus: EventBus;
  /** Every reply this replica's subscription consumed from the reply topic. */
  consumed: WebhookReply[];
  logs: string[];
}

let kafka: LocalKafka | undefined;
const closers: (() => Promise<void>)[] = [];
/** Trigger events as the engine's side received them. */
const triggered: TriggerEvent[] = [];

/** A Kafka bus whose reply-topic deliveries are counted (the real bus; only the handler is wrapped). */
async function countingBus(consumed: WebhookReply[]): Promise<EventBus> {
  const bus = await createKafkaBus({ brokers: kafka!.brokers, clientId: 'reply-partitions-test' });
  const subscribe = bus.subscribe.bind(bus);
  bus.subscribe = <T>(options: SubscribeOptions<T>) =>
    subscribe<T>(
      options.topic === WEBHOOK_REPLY_TOPIC
        ? {
            ...options,
            handler: (m) => {
              consumed.push(m.value as WebhookReply);
              return options.handler(m);
            },
          }
        : options,
    );
  return bus;
}

async function startReplica(id: string, partition: number): Promise<Replica> {
  const consumed: WebhookReply[] = [];
  const logs: string[] = [];
  const bus = await countingBus(consumed);
  const app = await buildApp({
    bus,
    directory: { lookup: async (workflowId) => (workflowId === trigger.workflowId ? { ...trigger } : null) },
    replies: { replica: id, partition, timeoutMs: 30_000 },
    logLevel: 'info',
    logStream: { write: (l) => void logs.push(l) },
  });
  const base = await listen(app, 0);
  closers.push(async () => {
    await app.close();
    await bus.close();
  });
  return { id, base, app, bus, consumed, logs };
}

async function deliver(r: Replica, n: number) {
  const res = await fetch(`${r.base}/functions/v1/webhook-trigger/${trigger.workflowId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-secret': SECRET },
    body: JSON.stringify({ n, to: r.id }),
  });
  return { status: res.status, body: (await res.json()) as { answeredFor?: string; n?: number; eventId?: string } };
}

async function until(what: string, cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let a: Replica;
let b: Replica;

before(async () => {
  if (skip) return;
  kafka = await startLocalKafka();
  const brokers = kafka.brokers;
  await ensureKafkaTopics({ brokers }, [
    { topic: TRIGGER_TOPIC, numPartitions: 3, replicationFactor: 1 },
    { topic: WEBHOOK_REPLY_TOPIC, numPartitions: 2, replicationFactor: 1 },
  ]);
  // The engine's reply publish: to the replica's partition, keyed by its id.
  const engine = await createKafkaBus({ brokers, clientId: 'reply-partitions-engine' });
  closers.push(() => engine.close());
  await engine.subscribe<TriggerEvent>({
    topic: TRIGGER_TOPIC,
    groupId: 'workflow-engine',
    concurrency: 16,
    keyConcurrency: 16,
    handler: async ({ value: e }) => {
      triggered.push(e);
      if (!e.replyTo) return;
      const reply: WebhookReply = {
        eventId: e.eventId,
        replica: e.replyTo.replica,
        status: 200,
        headers: {},
        body: { answeredFor: e.replyTo.replica, n: (e.payload as { n: number }).n },
      };
      await engine.publish(WEBHOOK_REPLY_TOPIC, [
        { key: reply.replica, value: reply, ...(e.replyTo.partition === undefined ? {} : { partition: e.replyTo.partition }) },
      ]);
    },
  });
  a = await startReplica('ingest-a', 0);
  b = await startReplica('ingest-b', 1);
});

after(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await kafka?.stop();
});

test('two ingest replicas pinned to partitions 0 and 1: each gets its own answers and consumes none of the other’s', { skip, timeout: 240_000 }, async () => {
  const N = 8;
  const answers = await Promise.all([...Array.from({ length: N }, (_, n) => deliver(a, n)), ...Array.from({ length: N }, (_, n) => deliver(b, n))]);
  for (const [i, res] of answers.entries()) {
    const owner = i < N ? a : b;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual([res.body.answeredFor, res.body.n], [owner.id, i % N], 'the caller got the answer to its own delivery');
  }
  // replyTo carried each replica's partition.
  const partitions = new Map(triggered.map((e) => [e.replyTo?.replica, e.replyTo?.partition]));
  assert.deepEqual([partitions.get('ingest-a'), partitions.get('ingest-b')], [0, 1]);
  // What each replica's subscription consumed from the reply topic: its own replies, none of the other's.
  assert.deepEqual(
    a.consumed.map((r) => r.replica),
    Array(N).fill('ingest-a'),
  );
  assert.deepEqual(
    b.consumed.map((r) => r.replica),
    Array(N).fill('ingest-b'),
  );

  // A last reply to B's partition, consumed by B: by then A's subscription has had every chance to see it.
  const late: WebhookReply = { eventId: randomUUID(), replica: 'ingest-b', status: 200, headers: {}, body: null };
  await a.bus.publish(WEBHOOK_REPLY_TOPIC, [{ key: late.replica, value: late, partition: 1 }]);
  await until('B to consume the late reply', () => b.consumed.some((r) => r.eventId === late.eventId));
  assert.equal(b.consumed.length, N + 1);
  assert.equal(a.consumed.length, N, 'A consumed nothing published to partition 1');
});

test(
  'a replica whose partition the topic lacks warns and shares one (answers still reach it); pinning to a missing partition is refused',
  { skip, timeout: 240_000 },
  async () => {
    const c = await startReplica('ingest-c', 5);
    const warning = c.logs.find((l) => l.includes('replicas outnumber the partitions'));
    assert.ok(warning, 'a warning names the problem at start');
    assert.match(warning, /REPLY_PARTITION 5 but the topic has 2; sharing partition 1/);
    const res = await deliver(c, 42);
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.answeredFor, res.body.n], ['ingest-c', 42]);
    // It shares partition 1 with B: B reads C's reply and drops it (nobody waits there for it).
    await until('B to see C’s reply', () => b.consumed.some((r) => r.replica === 'ingest-c'));

    await assert.rejects(
      a.bus.subscribe({ topic: WEBHOOK_REPLY_TOPIC, groupId: `pinned-${randomUUID()}`, ephemeral: true, partitions: [2], handler: () => {} }),
      (err: Error) => err instanceof RangeError && /webhook\.reply\.v1 has 2 partition\(s\) \(0–1\): cannot read partition\(s\) 2/.test(err.message),
    );
  },
);
