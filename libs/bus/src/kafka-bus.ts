import {
  AssignerProtocol,
  Kafka,
  Partitioners,
  logLevel,
  type Admin,
  type ISocketFactory,
  type Consumer,
  type EachBatchPayload,
  type ICustomPartitioner,
  type IHeaders,
  type KafkaMessage,
  type Message,
  type PartitionAssigner,
  type Producer,
} from 'kafkajs';
import { consumerLag, consumerPaused, deadLettered, instrumentBus } from './telemetry.ts';
import { groupLabel } from './group-id.ts';
import {
  DLQ_HEADERS,
  dlqTopicOf,
  type EventBus,
  type OutgoingMessage,
  type ReceivedMessage,
  type RetryPolicy,
  type SubscribeOptions,
  type Subscription,
} from './bus.ts';
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
  /**
   * Longest a publish waits for the brokers' acknowledgement before it rejects (the webhook then
   * answers 503). Default 5 s. While the brokers are known to be unreachable, publishes reject at once.
   */
  publishTimeoutMs?: number;
  /** How the client opens its broker connections (kafkajs `socketFactory`); tests use it to cut a bus off as a killed process would be. */
  socketFactory?: ISocketFactory;
}

export interface KafkaTopicSpec {
  topic: string;
  /** The unit of parallelism: at most this many consumers of a group do work. */
  numPartitions: number;
  replicationFactor: number;
  /** min.insync.replicas of the topic: with acks=all, a write needs this many copies. Default: 2 when replicated 3+ times, else 1. */
  minInsyncReplicas?: number;
}

/** Raised by publish when the brokers cannot take the messages now (unreachable, no leader, timed out). */
export class BusUnavailableError extends Error {
  override name = 'BusUnavailableError';
}

/** Header carrying OutgoingMessage.ordered on the record (stripped again on delivery). */
const ORDERED_HEADER = 'x-flowdesk-ordered';

const defaultMinIsr = (replicationFactor: number) => (replicationFactor >= 3 ? 2 : 1);

/**
 * Creates the topics and their `<topic>.dlq` companions if missing (for tests and an init job;
 * brokers in production should not auto-create topics with default partition counts). Each topic
 * gets min.insync.replicas (2 of 3 by default), so acks=all means two brokers have every record.
 */
export async function ensureKafkaTopics(options: Pick<KafkaBusOptions, 'brokers' | 'clientId' | 'logLevel'>, specs: KafkaTopicSpec[]): Promise<void> {
  const kafka = new Kafka({ clientId: options.clientId ?? 'flowdesk', brokers: options.brokers, logLevel: options.logLevel ?? logLevel.WARN });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const topics = specs
      .flatMap((s) => [s, { ...s, topic: dlqTopicOf(s.topic) }])
      .filter((s) => !existing.has(s.topic))
      .map((s) => ({
        topic: s.topic,
        numPartitions: s.numPartitions,
        replicationFactor: s.replicationFactor,
        configEntries: [{ name: 'min.insync.replicas', value: String(s.minInsyncReplicas ?? defaultMinIsr(s.replicationFactor)) }],
      }));
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
    socketFactory: options.socketFactory,
    // Short client-side retries: a leader election takes seconds, and a publish is bounded by
    // publishTimeoutMs anyway; the webhook's sender retries a 503, not this process for a minute.
    retry: { initialRetryTime: 100, retries: 8, maxRetryTime: 2_000 },
  });
  const bus = new KafkaBus(kafka, options);
  await bus.connect();
  return instrumentBus(bus);
}

const textHeaders = (headers: IHeaders | undefined): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined || k === ORDERED_HEADER) continue;
    out[k] = Array.isArray(v) ? String(v[v.length - 1]) : String(v);
  }
  return out;
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** `p`, or a rejection after `ms`: kafkajs retries a request to an unreachable broker for minutes. */
const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref())]);
/** Longest a producer's connect (metadata and InitProducerId, with kafkajs's retries) may take. */
const PRODUCER_CONNECT_MS = 5_000;
/** Longest a commit or heartbeat of a batch may take before the partition is taken as lost. */
const BROKER_CALL_MS = 10_000;
const nextTurn = () => new Promise<void>((r) => setImmediate(r));

/** Keys whose partition is remembered; past this many the cache starts again (keys are workflow ids). */
const PARTITION_CACHE_KEYS = 10_000;

/**
 * Java's default partitioner (kafkajs's DefaultPartitioner: murmur2 of the key modulo the partition
 * count, so other clients put a key where this one does), remembering each key's partition per
 * partition count. The default hashes the key and filters the partition list again for every
 * message; a workflow's trigger events all carry its id, so under load most lookups are repeats.
 */
export const keyPartitionCache: ICustomPartitioner = () => {
  const partitionOf = Partitioners.DefaultPartitioner();
  const cache = new Map<string, { partitions: number; partition: number }>();
  return (args) => {
    const { message, partitionMetadata } = args;
    if (typeof message.key !== 'string' || (message.partition !== undefined && message.partition !== null)) return partitionOf(args);
    const hit = cache.get(message.key);
    if (hit && hit.partitions === partitionMetadata.length) return hit.partition;
    const partition = partitionOf(args);
    if (cache.size >= PARTITION_CACHE_KEYS) cache.clear();
    cache.set(message.key, { partitions: partitionMetadata.length, partition });
    return partition;
  };
};

/**
 * The bus's producer (also bench/kafka-produce.ts's). Idempotent (acks=all is implied and set on
 * every send), one request in flight: broker retries neither duplicate nor reorder a key's records.
 */
export function busProducer(kafka: Kafka): Producer {
  return kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: keyPartitionCache });
}

interface PendingPublish {
  topic: string;
  messages: Message[];
  resolve(): void;
  reject(err: Error): void;
  /** Set when its timeout fired: it is dropped if still queued, or ignored when its send settles. */
  settled: boolean;
}

/** How long a stopping ephemeral subscriber keeps trying to delete its group (a shutdown is not held longer). */
const GROUP_DELETE_MS = 5_000;

/** Largest number of publish calls gathered into one sendBatch. */
const MAX_GROUP = 500;

class KafkaBus implements EventBus {
  private readonly subscriptions = new Set<KafkaSubscription>();
  private producer: Producer;
  private readonly queue: PendingPublish[] = [];
  private flushing = false;
  private closed = false;
  /** Set while the brokers are known not to take writes; publishes reject at once meanwhile. */
  private down: Error | undefined;
  private probing: Promise<void> | undefined;
  private lastProbe = 0;
  private readonly topicsSeen = new Set<string>();
  private readonly publishTimeoutMs: number;
  /**
   * False once a send failed, until a producer connected again (its InitProducerId answered): the
   * bus is not called up again by a metadata answer alone, or readiness says yes while every publish
   * still fails ("the producer is disconnected", "the coordinator is loading").
   */
  private producerConnected = true;
  private reconnecting: Promise<void> | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: KafkaBusOptions,
  ) {
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
    this.producer = this.newProducer();
  }

  private newProducer(): Producer {
    return busProducer(this.kafka);
  }

  async connect(): Promise<void> {
    await this.producer.connect();
  }

  publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('bus is closed'));
    if (messages.length === 0) return Promise.resolve();
    let encoded: Message[];
    try {
      encoded = messages.map((m) => ({
        key: m.key,
        value: JSON.stringify(m.value),
        headers: m.ordered ? { ...m.headers, [ORDERED_HEADER]: '1' } : (m.headers ?? {}),
        ...(m.partition === undefined ? {} : { partition: m.partition }),
      }));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return this.enqueue(topic, encoded);
  }

  /** Queues records for the next sendBatch; resolves once the brokers acknowledged them (acks=all). */
  enqueue(topic: string, messages: Message[]): Promise<void> {
    if (this.down) {
      this.probeSoon();
      return Promise.reject(new BusUnavailableError(`Kafka is unavailable: ${this.down.message}`));
    }
    this.topicsSeen.add(topic);
    return new Promise<void>((resolve, reject) => {
      const p: PendingPublish = { topic, messages, resolve, reject, settled: false };
      const timer = setTimeout(() => {
        if (p.settled) return;
        p.settled = true;
        const i = this.queue.indexOf(p);
        if (i >= 0) this.queue.splice(i, 1); // never sent: it will not be
        this.markDown(new Error(`no acknowledgement within ${this.publishTimeoutMs} ms`));
        reject(new BusUnavailableError(`Kafka did not acknowledge within ${this.publishTimeoutMs} ms`));
      }, this.publishTimeoutMs);
      timer.unref();
      p.resolve = () => {
        clearTimeout(timer);
        if (p.settled) return;
        p.settled = true;
        resolve();
      };
      p.reject = (err) => {
        clearTimeout(timer);
        if (p.settled) return;
        p.settled = true;
        reject(err);
      };
      this.queue.push(p);
      if (!this.flushing) {
        this.flushing = true;
        void this.flush();
      }
    });
  }

  /**
   * Batched produce, as the embedded bus's group commit: one sendBatch in flight; publishes that
   * arrive meanwhile (and all those of the current event-loop turn) go out together in the next
   * one, in call order (so a key's records keep their order in its partition), and each resolves
   * only when that request is acknowledged by every in-sync replica.
   */
  private async flush(): Promise<void> {
    try {
      for (;;) {
        await nextTurn();
        if (this.queue.length === 0) return;
        const batch = this.queue.splice(0, MAX_GROUP);
        await this.send(batch);
      }
    } finally {
      this.flushing = false;
    }
  }

  private async send(batch: PendingPublish[]): Promise<void> {
    const byTopic = new Map<string, Message[]>();
    for (const p of batch) {
      const list = byTopic.get(p.topic) ?? [];
      list.push(...p.messages);
      byTopic.set(p.topic, list);
    }
    const producer = this.producer;
    try {
      await producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    } catch (err) {
      this.markDown(err as Error);
      for (const p of batch) p.reject(new BusUnavailableError(`Kafka did not take the messages: ${(err as Error).message}`));
      // A failed idempotent send may or may not have been written; a fresh producer (new producer
      // id, sequences from 0) keeps a later batch from being taken for a duplicate of this one.
      await this.replaceProducer(producer);
      return;
    }
    this.down = undefined;
    for (const p of batch) p.resolve();
  }

  private async replaceProducer(old: Producer): Promise<void> {
    if (this.producer !== old || this.closed) return;
    this.producerConnected = false;
    this.producer = this.newProducer();
    await old.disconnect().catch(() => {});
    // Connecting needs a broker; if none answers, the probe connects it again before the bus is
    // called up (reconnectProducer).
    const fresh = this.producer;
    await within(fresh.connect(), PRODUCER_CONNECT_MS, 'producer connect').then(
      () => {
        if (this.producer === fresh) this.producerConnected = true;
      },
      () => {},
    );
  }

  /** A new producer, connected (or this throws): what the probe needs before it clears `down`. */
  private reconnectProducer(): Promise<void> {
    this.reconnecting ??= (async () => {
      const old = this.producer;
      const fresh = this.newProducer();
      try {
        await within(fresh.connect(), PRODUCER_CONNECT_MS, 'producer connect');
      } catch (err) {
        await fresh.disconnect().catch(() => {});
        throw err;
      }
      if (this.closed) {
        await fresh.disconnect().catch(() => {});
        return;
      }
      this.producer = fresh;
      this.producerConnected = true;
      await old.disconnect().catch(() => {});
    })().finally(() => {
      this.reconnecting = undefined;
    });
    return this.reconnecting;
  }

  private markDown(err: Error): void {
    this.down ??= err;
    this.probeSoon();
  }

  /** Checks the brokers in the background (at most every 500 ms) and clears `down` when they answer. */
  private probeSoon(): void {
    if (this.probing || this.closed || Date.now() - this.lastProbe < 500) return;
    void this.startProbe();
  }

  /** Starts a probe whose answer sets or clears `down`; `probing` holds it until it settles. */
  private startProbe(): Promise<void> {
    this.lastProbe = Date.now();
    this.probing = this.probe()
      .then(() => {
        this.down = undefined;
      })
      .catch((err: Error) => {
        this.down ??= err;
      })
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }

  private admin: Admin | undefined;
  /** One metadata request with short timeouts: every partition of the topics written so far has a leader. */
  private async probe(): Promise<void> {
    this.admin ??= new Kafka({
      clientId: `${this.options.clientId ?? 'flowdesk'}-probe`,
      brokers: this.options.brokers,
      logLevel: logLevel.NOTHING,
      socketFactory: this.options.socketFactory,
      retry: { retries: 0 },
      connectionTimeout: 1_000,
      requestTimeout: 2_000,
    }).admin();
    const admin = this.admin;
    try {
      await admin.connect();
      if (this.topicsSeen.size === 0) await admin.describeCluster();
      else {
        const { topics } = await admin.fetchTopicMetadata({ topics: [...this.topicsSeen] });
        for (const t of topics) for (const p of t.partitions) if (p.leader < 0) throw new Error(`${t.name}/${p.partitionId} has no leader`);
      }
    } catch (err) {
      this.admin = undefined;
      await admin.disconnect().catch(() => {});
      throw err;
    }
    // The brokers answer; the producer must too (a send failed meanwhile: it was replaced, and its
    // connect may have run while no broker answered).
    if (!this.producerConnected) await this.reconnectProducer();
  }

  /** Readiness: throws while the brokers cannot take writes (at most one probe every 500 ms). */
  async ready(): Promise<void> {
    if (this.closed) throw new Error('bus is closed');
    if (Date.now() - this.lastProbe >= 1_000 && !this.probing) await this.startProbe();
    else if (this.probing) await this.probing;
    if (this.down) throw new BusUnavailableError(`Kafka is unavailable: ${this.down.message}`);
  }

  async subscribe<T>(options: SubscribeOptions<T>): Promise<Subscription> {
    if (this.closed) throw new Error('bus is closed');
    const concurrency = options.concurrency ?? 1;
    const keyConcurrency = options.keyConcurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be an integer >= 1');
    if (!Number.isInteger(keyConcurrency) || keyConcurrency < 1) throw new RangeError('keyConcurrency must be an integer >= 1');
    const pinned = options.partitions;
    if (pinned) {
      const count = await this.partitionCount(options.topic);
      const missing = pinned.filter((p) => !Number.isInteger(p) || p < 0 || p >= count);
      if (pinned.length === 0 || missing.length > 0)
        throw new RangeError(
          `${options.topic} has ${count} partition(s) (0–${count - 1}): cannot read partition(s) ${missing.join(', ') || '(none given)'}; raise the topic's partitions`,
        );
    }
    const consumer = () =>
      this.kafka.consumer({
        groupId: options.groupId,
        ...(pinned ? { partitionAssigners: [staticAssigner(options.topic, pinned)] } : {}),
        sessionTimeout: this.options.sessionTimeoutMs ?? 30_000,
        heartbeatInterval: Math.min(3_000, Math.floor((this.options.sessionTimeoutMs ?? 30_000) / 5)),
        // An idle fetch waits this long for data (it returns at once when there is some). Stopping
        // waits for the fetch in flight, so kafkajs's 5 s default took a shutdown past its grace
        // period before the ephemeral groups were deleted; one fetch a second per idle consumer is cheap.
        maxWaitTimeInMs: 1_000,
        allowAutoTopicCreation: false,
      });
    const sub = new KafkaSubscription(
      consumer,
      this,
      options as SubscribeOptions<unknown>,
      resolveRetry(this.options.retry, options.retry),
      concurrency,
      keyConcurrency,
    );
    await sub.start();
    this.subscriptions.add(sub);
    return {
      close: async () => {
        await sub.close();
        this.subscriptions.delete(sub);
      },
    };
  }

  /** The topic's partition count, from the brokers' metadata (throws when the topic does not exist). */
  async partitionCount(topic: string): Promise<number> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      return topics[0]?.partitions.length ?? 0;
    } finally {
      await admin.disconnect().catch(() => {});
    }
  }

  /**
   * Deletes an ephemeral subscriber's group once it has left it (bounded: with no broker answering
   * the broker's offsets.retention.minutes removes the empty group later).
   */
  async deleteGroup(groupId: string): Promise<void> {
    const admin = this.kafka.admin();
    const deadline = Date.now() + GROUP_DELETE_MS;
    let done = false;
    const attempt = async () => {
      await admin.connect();
      // The coordinator may not have processed the member's LeaveGroup yet (NON_EMPTY_GROUP) or may
      // be moving (NOT_COORDINATOR): try again until the deadline. A group already gone is done.
      while (!done && Date.now() < deadline) {
        try {
          await admin.deleteGroups([groupId]);
          return;
        } catch (err) {
          const codes = ((err as { groups?: { error?: { type?: string } }[] }).groups ?? []).map((g) => g.error?.type);
          if (codes.includes('GROUP_ID_NOT_FOUND')) return;
          await sleep(250);
        }
      }
    };
    await Promise.race([attempt().catch(() => {}), sleep(GROUP_DELETE_MS)]);
    done = true;
    await admin.disconnect().catch(() => {});
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    this.subscriptions.clear();
    // Publishes already queued still go out (a webhook awaiting its 200 is being drained).
    while (this.flushing) await sleep(5);
    this.closed = true;
    await this.probing;
    await this.admin?.disconnect().catch(() => {});
    await Promise.race([this.producer.disconnect().catch(() => {}), sleep(10_000)]);
  }
}

/**
 * A static assignment on kafkajs's assigner API: every member of the group gets `partitions` of
 * `topic`, whatever the group's size (SubscribeOptions.partitions; the group is the subscriber's own).
 * The group stays only for kafkajs's fetch loop and offsets; it hands out nothing.
 */
const staticAssigner =
  (topic: string, partitions: number[]): PartitionAssigner =>
  () => ({
    name: 'FlowdeskStaticAssigner',
    version: 0,
    assign: ({ members }) =>
      Promise.resolve(
        members.map(({ memberId }) => ({
          memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: { [topic]: partitions }, userData: Buffer.alloc(0) }),
        })),
      ),
    protocol: ({ topics }) => ({
      name: 'FlowdeskStaticAssigner',
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
    }),
  });

interface Task {
  offset: bigint;
  key: string;
  ordered: boolean;
  /** Dropped once the record is done (a finished record ahead of an unfinished one keeps only its offset). */
  message: KafkaMessage | null;
  state: 'waiting' | 'running' | 'done';
}

/**
 * What this consumer holds of one assigned partition: the records fetched and not yet committed, in
 * offset order (the done prefix is pruned as the commit point moves). It outlives the fetched batch
 * that brought them, so a slow record holds only its own key, never its partition's next fetch.
 */
interface PartitionWindow {
  topic: string;
  partition: number;
  tasks: Task[];
  /** The offset after the last record taken (kafkajs fetches on from there); null before the first. */
  next: bigint | null;
  /** Offset committed last by this window (the next record to read); -1 before the first commit. */
  committed: bigint;
  committing: Promise<void> | undefined;
  retryCommit: NodeJS.Timeout | undefined;
  runningByKey: Map<string, { n: number; ordered: boolean }>;
  running: number;
  /** Fetching of the partition paused: the window holds MAX_WINDOW records. */
  paused: boolean;
  /** The partition was revoked (or the consumer replaced): nothing of it starts or commits any more. */
  dropped: boolean;
}

/**
 * Records of one partition a consumer holds at most (fetched, not committed: running, waiting for
 * their key, or done behind an unfinished one). At this many its fetching is paused, and resumed at
 * half. It bounds the memory and what a crash redelivers (docs/event-bus.md, "How fairness holds on Kafka").
 */
export const MAX_WINDOW = 1_000;

/**
 * One consumer in the group. Records of a partition are handled concurrently: up to `concurrency`
 * at once for the whole subscriber, up to `keyConcurrency` of one key (default 1: a key's records
 * one after another, in order), and an `ordered` record only alone within its key, after every
 * earlier record of the key. The committed offset of a partition only moves up to its lowest
 * unfinished record, so a crash redelivers everything not finished and nothing finished is lost
 * (at-least-once; the engine's run record makes a redelivery a no-op). Retries hold only their key.
 *
 * Per-record progress: a fetched batch goes into the partition's window and the next fetch follows
 * at once (up to MAX_WINDOW records held), so a slow record holds its own key and one slot, not the
 * records of other keys behind it in its partition. Records with an order promise (every record
 * when keyConcurrency is 1, else those published `ordered`) still hold their batch until they
 * finish, as before: a rebalance waits for them, so a key's next record never starts on the
 * partition's next owner while one of them still runs here.
 */
class KafkaSubscription {
  private closing = false;
  private closed: Promise<void> | undefined;
  private running = 0;
  /** Set between a rebalance's start and the assignment that ends it: nothing new starts meanwhile. */
  private rebalancing = false;
  private readonly windows = new Map<string, PartitionWindow>();
  /** Wakes batches that hold for their order-bound records, and close(). */
  private readonly waiters = new Set<() => void>();
  /** Batches being handled: close() waits for them. */
  private readonly batches = new Set<Promise<void>>();

  private consumer!: Consumer;

  constructor(
    private readonly newConsumer: () => Consumer,
    private readonly bus: KafkaBus,
    private readonly options: SubscribeOptions<unknown>,
    private readonly retry: RetryPolicy,
    private readonly concurrency: number,
    private readonly keyConcurrency: number,
  ) {}

  async start(): Promise<void> {
    // A new consumer (first start, or after a crash) holds nothing yet: what an old one held is
    // redelivered from the last commit.
    for (const w of this.windows.values()) this.drop(w);
    const consumer = (this.consumer = this.newConsumer());
    // kafkajs restarts a consumer after a retriable crash by itself; after any other one (seen when
    // every broker of a cluster died and came back) it stays stopped: start a new one then.
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart && !this.closing && this.consumer === consumer) void this.recover(consumer);
    });
    consumer.on(consumer.events.REBALANCING, () => {
      if (this.consumer === consumer) this.rebalancing = true;
    });
    // The assignment after a (re)join: windows of partitions no longer ours are dropped (their
    // unfinished records are the next owner's, from the last commit); kept ones go on.
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      if (this.consumer !== consumer) return;
      const mine = new Set((payload.memberAssignment[this.options.topic] ?? []).map(String));
      for (const w of this.windows.values()) if (!mine.has(String(w.partition))) this.drop(w);
      this.rebalancing = false;
      this.pumpAll();
    });
    await this.consumer.connect();
    // A new group starts at the oldest retained message, like the embedded bus.
    await this.consumer.subscribe({ topic: this.options.topic, fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.concurrency,
      eachBatch: async (payload) => {
        const run = this.batch(payload);
        this.batches.add(run);
        try {
          await run;
        } finally {
          this.batches.delete(run);
        }
      },
    });
  }

  private async recover(crashed: Consumer): Promise<void> {
    await crashed.disconnect().catch(() => {});
    for (let delay = 500; !this.closing; delay = Math.min(delay * 2, 10_000)) {
      await sleep(delay);
      if (this.closing) return;
      try {
        await this.start();
        return;
      } catch {
        await this.consumer.disconnect().catch(() => {});
      }
    }
  }

  private drop(w: PartitionWindow): void {
    w.dropped = true;
    clearTimeout(w.retryCommit);
    this.windows.delete(`${w.topic}/${w.partition}`);
    if (w.paused) {
      w.paused = false;
      consumerPaused.set({ topic: w.topic, group: groupLabel(this.options.groupId), partition: String(w.partition) }, 0);
      try {
        this.consumer.resume([{ topic: w.topic, partitions: [w.partition] }]);
      } catch {
        // not running (any more): nothing is paused
      }
    }
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const w of this.waiters) w();
  }

  /** Records with an order promise: a rebalance must wait for them (see the class comment). */
  private orderBound(t: Task): boolean {
    return this.keyConcurrency === 1 || t.ordered;
  }

  /** Takes one fetched batch into its partition's window and starts what may start; returns at once unless order-bound records of the window are unfinished. */
  // kafkajs hands these as closures over the batch (no `this`), so taking them apart is safe.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  private async batch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    if (batch.messages.length === 0 || this.closing) return;
    const id = `${topic}/${partition}`;
    let w = this.windows.get(id);
    if (!w) {
      w = {
        topic,
        partition,
        tasks: [],
        next: null,
        committed: -1n,
        committing: undefined,
        retryCommit: undefined,
        runningByKey: new Map(),
        running: 0,
        paused: false,
        dropped: false,
      };
      this.windows.set(id, w);
    }
    for (const message of batch.messages) {
      const offset = BigInt(message.offset);
      // After a rejoin kafkajs fetches again from the last commit: records already held are not taken twice.
      if (w.next !== null && offset < w.next) continue;
      w.tasks.push({ offset, key: message.key?.toString() ?? '', ordered: message.headers?.[ORDERED_HEADER] !== undefined, message, state: 'waiting' });
      w.next = offset + 1n;
    }
    // The next fetch of this partition starts after this batch; what is committed stays the lowest unfinished record.
    resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
    // Records from this batch's first to the partition's end (docs/observability.md, consumer lag).
    consumerLag.set({ topic, group: groupLabel(this.options.groupId), partition: String(partition) }, Number(batch.offsetLagLow()) + 1);
    if (w.tasks.length >= MAX_WINDOW && !w.paused) {
      w.paused = true;
      this.consumer.pause([{ topic, partitions: [partition] }]);
      consumerPaused.set({ topic, group: groupLabel(this.options.groupId), partition: String(partition) }, 1);
    }
    this.pumpAll();
    const window = w;
    const stopped = () => window.dropped || this.closing || this.rebalancing || !isRunning() || isStale();
    const holding = () => window.tasks.some((t) => this.orderBound(t) && (t.state === 'running' || (t.state === 'waiting' && !stopped())));
    let lastBeat = Date.now();
    while (holding()) {
      await new Promise<void>((r) => {
        const wake = () => {
          this.waiters.delete(wake);
          r();
        };
        this.waiters.add(wake);
        setTimeout(wake, 1_000).unref();
      });
      if (Date.now() - lastBeat >= 1_000 && !this.closing) {
        lastBeat = Date.now();
        await within(heartbeat(), BROKER_CALL_MS, 'heartbeat').catch(() => {});
      }
    }
  }

  /** Starts records of every window while slots are free, partitions in turn. */
  private pumpAll(): void {
    if (this.closing || this.rebalancing) return;
    const windows = [...this.windows.values()];
    // Rotate the start so one busy partition does not always take the freed slots first.
    const from = windows.length > 0 ? this.rotation++ % windows.length : 0;
    for (let i = 0; i < windows.length && this.running < this.concurrency; i++) this.pump(windows[(from + i) % windows.length]!);
  }
  private rotation = 0;

  private pump(w: PartitionWindow): void {
    if (w.dropped) return;
    const blocked = new Set<string>();
    for (const t of w.tasks) {
      if (this.running >= this.concurrency) break;
      if (t.state !== 'waiting' || blocked.has(t.key)) continue;
      const r = w.runningByKey.get(t.key);
      // A key's records start in offset order: once one cannot start, none after it of its key
      // does. Next to a running record only a plain one may start (keyConcurrency > 1), never
      // an ordered one, and nothing next to a running ordered one.
      const free = !r || (!t.ordered && !r.ordered && r.n < this.keyConcurrency);
      if (!free) {
        blocked.add(t.key);
        continue;
      }
      this.begin(w, t, r);
    }
  }

  private begin(w: PartitionWindow, t: Task, r: { n: number; ordered: boolean } | undefined): void {
    t.state = 'running';
    this.running++;
    w.running++;
    w.runningByKey.set(t.key, { n: (r?.n ?? 0) + 1, ordered: t.ordered });
    void this.handle(w.topic, w.partition, t.message!).then((done) => {
      this.running--;
      w.running--;
      const k = w.runningByKey.get(t.key)!;
      k.n--;
      if (k.n === 0) w.runningByKey.delete(t.key);
      if (done) {
        t.state = 'done';
        t.message = null;
        this.scheduleCommit(w);
      } else {
        t.state = 'waiting'; // closing during a backoff: left for the next owner
      }
      this.pumpAll();
      this.wakeAll();
    });
  }

  /** The partition's commit point: its lowest unfinished record, or past the last one taken. */
  private commitPoint(w: PartitionWindow): bigint {
    for (const t of w.tasks) if (t.state !== 'done') return t.offset;
    return w.next ?? 0n;
  }

  private scheduleCommit(w: PartitionWindow): void {
    if (w.dropped || w.committing) return;
    w.committing = (async () => {
      await nextTurn(); // one commit for every record finished in this turn
      await this.commit(w);
    })().finally(() => {
      w.committing = undefined;
      if (!w.dropped && !this.closing && this.commitPoint(w) > w.committed && !w.retryCommit) this.scheduleCommit(w);
    });
  }

  private async commit(w: PartitionWindow): Promise<void> {
    while (!w.dropped && this.commitPoint(w) > w.committed) {
      const point = this.commitPoint(w);
      try {
        // Bounded: with the brokers gone kafkajs would retry for minutes, holding close().
        await within(this.consumer.commitOffsets([{ topic: w.topic, partition: w.partition, offset: point.toString() }]), BROKER_CALL_MS, 'commit');
      } catch {
        // The group is rebalancing, or the brokers are gone: nothing is lost (the next owner, maybe
        // this consumer after rejoining, starts from the last commit that made it). Try again in a
        // second unless the partition has been revoked meanwhile.
        if (!w.dropped && !this.closing && !w.retryCommit)
          w.retryCommit = setTimeout(() => {
            w.retryCommit = undefined;
            this.scheduleCommit(w);
          }, 1_000).unref();
        return;
      }
      w.committed = point;
      // Finished records below the commit point are no longer needed.
      let n = 0;
      while (n < w.tasks.length && w.tasks[n]!.offset < point) n++;
      if (n > 0) w.tasks.splice(0, n);
      if (w.paused && w.tasks.length < MAX_WINDOW / 2) {
        w.paused = false;
        this.consumer.resume([{ topic: w.topic, partitions: [w.partition] }]);
        consumerPaused.set({ topic: w.topic, group: groupLabel(this.options.groupId), partition: String(w.partition) }, 0);
      }
    }
  }

  /** Runs the handler with retries; true once the message is handled or dead-lettered. */
  private async handle(topic: string, partition: number, message: KafkaMessage): Promise<boolean> {
    let base: Omit<ReceivedMessage, 'attempt'>;
    try {
      base = {
        id: `${topic}/${partition}/${message.offset}`,
        topic,
        key: message.key?.toString() ?? '',
        value: JSON.parse(message.value?.toString() ?? 'null'),
        headers: textHeaders(message.headers),
        publishedAt: new Date(Number(message.timestamp)),
      };
    } catch (err) {
      return this.deadLetter(topic, partition, message, err, 0);
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await this.options.handler({ ...base, attempt });
        return true;
      } catch (err) {
        if (attempt >= this.retry.maxAttempts) return this.deadLetter(topic, partition, message, err, attempt);
        const until = Date.now() + backoffMs(this.retry, attempt);
        while (Date.now() < until) {
          if (this.closing) return false;
          await sleep(Math.min(100, until - Date.now()));
        }
        if (this.closing) return false;
      }
    }
  }

  /** To `<topic>.dlq` with the error; true once the DLQ acknowledged it (else it stays unfinished). */
  private async deadLetter(topic: string, partition: number, message: KafkaMessage, err: unknown, attempts: number): Promise<boolean> {
    const headers = textHeaders(message.headers);
    for (;;) {
      try {
        await this.bus.enqueue(dlqTopicOf(topic), [
          {
            key: message.key,
            value: message.value,
            headers: {
              ...headers,
              [DLQ_HEADERS.error]: errorSummary(err),
              [DLQ_HEADERS.attempts]: String(attempts),
              [DLQ_HEADERS.originalTopic]: topic,
              [DLQ_HEADERS.originalId]: `${topic}/${partition}/${message.offset}`,
              [DLQ_HEADERS.groupId]: this.options.groupId,
            },
          },
        ]);
        deadLettered.inc({ topic, group: groupLabel(this.options.groupId) });
        return true;
      } catch {
        if (this.closing) return false;
        await sleep(500);
      }
    }
  }

  /** Starts nothing new, waits for the running records and commits what finished; then leaves the group. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      this.wakeAll();
      while (this.running > 0 || this.batches.size > 0) {
        await new Promise<void>((r) => {
          const wake = () => {
            this.waiters.delete(wake);
            r();
          };
          this.waiters.add(wake);
          setTimeout(wake, 100).unref();
        });
      }
      for (const w of this.windows.values()) {
        clearTimeout(w.retryCommit);
        while (w.committing) await w.committing;
        await this.commit(w);
      }
      // Leaving the group needs a broker; when none answers (kafkajs would retry for long), the
      // group's session timeout hands the partitions over anyway: do not hold a shutdown for it.
      const consumer = this.consumer;
      await Promise.race([
        (async () => {
          await consumer.stop();
          await consumer.disconnect();
        })().catch(() => {}),
        sleep(10_000),
      ]);
      if (this.options.ephemeral) await this.bus.deleteGroup(this.options.groupId);
    })();
    return this.closed;
  }
}
