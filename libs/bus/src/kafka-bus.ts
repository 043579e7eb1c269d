import { Kafka, logLevel, type Consumer, type IHeaders, type KafkaMessage, type Producer } from 'kafkajs';
import { DLQ_HEADERS, dlqTopicOf, type EventBus, type OutgoingMessage, type ReceivedMessage, type RetryPolicy, type SubscribeOptions, type Subscription } from './bus.ts';
import { backoffMs, errorSummary, resolveRetry } from './retry.ts';

export interface KafkaBusOptions {
  /** KAFKA_BROKERS, comma-separated host:port. */
  brokers: string[];
  /** Shows up in broker logs and quotas. Default 'flowdesk'. */
  clientId?: string;
  retry?: Partial<RetryPolicy>;
  /** kafkajs log level; default WARN. */
  logLevel?: logLevel;
  /** Consumer session timeout; a consumer silent longer than this loses its partitions. Default 30 s. */
  sessionTimeoutMs?: number;
}

export interface KafkaTopicSpec {
  topic: string;
  /** The unit of parallelism: at most this many consumers of a group do work. */
  numPartitions: number;
  replicationFactor: number;
}

/**
 * Creates the topics and their `<topic>.dlq` companions if missing (for tests and an init job;
 * brokers in production should not auto-create topics with default partition counts).
 */
export async function ensureKafkaTopics(options: Pick<KafkaBusOptions, 'brokers' | 'clientId' | 'logLevel'>, specs: KafkaTopicSpec[]): Promise<void> {
  const kafka = new Kafka({ clientId: options.clientId ?? 'flowdesk', brokers: options.brokers, logLevel: options.logLevel ?? logLevel.WARN });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const topics = specs
      .flatMap((s) => [s, { ...s, topic: dlqTopicOf(s.topic) }])
      .filter((s) => !existing.has(s.topic));
    if (topics.length > 0) await admin.createTopics({ waitForLeaders: true, topics });
  } finally {
    await admin.disconnect();
  }
}

export async function createKafkaBus(options: KafkaBusOptions): Promise<EventBus> {
  const kafka = new Kafka({
    clientId: options.clientId ?? 'flowdesk',
    brokers: options.brokers,
    logLevel: options.logLevel ?? logLevel.WARN,
  });
  // Idempotent, one request in flight: broker retries neither duplicate nor reorder a key's messages.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await producer.connect();
  return new KafkaBus(kafka, producer, options);
}

const textHeaders = (headers: IHeaders | undefined): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? String(v[v.length - 1]) : String(v);
  }
  return out;
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

class KafkaBus implements EventBus {
  private readonly subscriptions = new Set<KafkaSubscription>();

  constructor(
    private readonly kafka: Kafka,
    private readonly producer: Producer,
    private readonly options: KafkaBusOptions,
  ) {}

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    // acks -1: resolves once every in-sync replica has the messages. The default partitioner hashes
    // the key (murmur2, as the Java client), so one workflow's events share a partition and its order.
    await this.producer.send({
      topic,
      acks: -1,
      messages: messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value), headers: m.headers ?? {} })),
    });
  }

  async subscribe<T>(options: SubscribeOptions<T>): Promise<Subscription> {
    const consumer = this.kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: this.options.sessionTimeoutMs ?? 30_000,
      allowAutoTopicCreation: false,
    });
    const sub = new KafkaSubscription(consumer, this.producer, options as SubscribeOptions<unknown>, resolveRetry(this.options.retry, options.retry));
    await sub.start();
    this.subscriptions.add(sub);
    return {
      close: async () => {
        await sub.close();
        this.subscriptions.delete(sub);
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    this.subscriptions.clear();
    await this.producer.disconnect();
  }
}

/**
 * One consumer in the group. eachMessage runs serially per partition (one key lives in one
 * partition, so a key is never handled concurrently and stays in order); `concurrency` partitions
 * run at once. The offset is committed only after the handler resolved or the message was
 * dead-lettered; retries block the partition, which is what keeps the key's order.
 */
class KafkaSubscription {
  private closing = false;
  private closed: Promise<void> | undefined;

  constructor(
    private readonly consumer: Consumer,
    private readonly producer: Producer,
    private readonly options: SubscribeOptions<unknown>,
    private readonly retry: RetryPolicy,
  ) {}

  async start(): Promise<void> {
    await this.consumer.connect();
    // A new group starts at the oldest retained message, like the embedded bus.
    await this.consumer.subscribe({ topic: this.options.topic, fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: this.options.concurrency ?? 1,
      eachMessage: async ({ topic, partition, message, heartbeat }) => {
        const done = await this.process(topic, partition, message, heartbeat);
        if (!done) return; // closing during a backoff: leave it uncommitted for the next owner
        await this.consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
      },
    });
  }

  /** Runs the handler with retries; true once the message is handled or dead-lettered. */
  private async process(topic: string, partition: number, message: KafkaMessage, heartbeat: () => Promise<void>): Promise<boolean> {
    const base: Omit<ReceivedMessage, 'attempt'> = {
      id: `${topic}/${partition}/${message.offset}`,
      topic,
      key: message.key?.toString() ?? '',
      value: JSON.parse(message.value?.toString() ?? 'null'),
      headers: textHeaders(message.headers),
      publishedAt: new Date(Number(message.timestamp)),
    };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.options.handler({ ...base, attempt });
        return true;
      } catch (err) {
        if (attempt >= this.retry.maxAttempts) {
          await this.producer.send({
            topic: dlqTopicOf(topic),
            acks: -1,
            messages: [{
              key: message.key,
              value: message.value,
              headers: {
                ...base.headers,
                [DLQ_HEADERS.error]: errorSummary(err),
                [DLQ_HEADERS.attempts]: String(attempt),
                [DLQ_HEADERS.originalTopic]: topic,
                [DLQ_HEADERS.originalId]: base.id,
                [DLQ_HEADERS.groupId]: this.options.groupId,
              },
            }],
          });
          return true;
        }
        // Sleep in slices with heartbeats, so a long backoff does not cost the partition.
        const until = Date.now() + backoffMs(this.retry, attempt);
        while (Date.now() < until) {
          if (this.closing) return false;
          await sleep(Math.min(1000, until - Date.now()));
          await heartbeat().catch(() => {});
        }
        if (this.closing) return false;
      }
    }
  }

  /** stop() fetches nothing new and waits for running eachMessage calls (which commit); then leave the group. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      await this.consumer.stop();
      await this.consumer.disconnect();
    })();
    return this.closed;
  }
}
