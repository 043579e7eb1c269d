/**
 * The event bus every service talks to: one interface, two implementations (embedded on the
 * database for `npm start`, Kafka in production) that pass the same contract suite
 * (test/contract.ts). Guarantees, as the engine relies on them:
 *
 * - publish resolves only once the messages are durable (Kafka acks=all, or committed rows), so an
 *   HTTP 200 sent after it never loses an event;
 * - at-least-once delivery per consumer group: a message is done only after its handler resolves;
 * - per-key order by default: messages with the same key are handled in publish order, never
 *   concurrently. A subscriber may allow `keyConcurrency` > 1 (a workflow's runs in parallel); then
 *   only messages published with `ordered: true` keep their place in their key's order (see below),
 *   and on Kafka offsets are committed only up to the lowest unfinished record of a partition;
 * - a throwing handler is retried with backoff, then the message goes to `<topic>.dlq` with the
 *   error in its headers, and the consumer moves on.
 */

export interface OutgoingMessage {
  /** Ordering and partitioning key (the workflow id for trigger events). */
  key: string;
  /** Any JSON-serialisable object. */
  value: object;
  headers?: Record<string, string>;
  /**
   * Matters only to subscribers with `keyConcurrency` > 1: this message starts only after every
   * earlier message with the same key has finished, and no later message of its key starts before
   * it finishes (a workflow set to "one at a time, in order"). Subscribers with the default
   * keyConcurrency 1 keep every key in order anyway. Default false.
   */
  ordered?: boolean;
  /**
   * Kafka: the record goes to this partition of the topic instead of the key's (a reply to the one
   * subscriber pinned to it with `SubscribeOptions.partitions`). The embedded bus has no partitions
   * and ignores it.
   */
  partition?: number;
}

export interface ReceivedMessage<T = unknown> {
  /** Unique per message within the bus (embedded: a UUID; Kafka: topic/partition/offset). */
  id: string;
  topic: string;
  key: string;
  value: T;
  headers: Record<string, string>;
  /** 1 on first delivery; higher after a failed attempt (or a consumer that died mid-way). */
  attempt: number;
  publishedAt: Date;
}

export type MessageHandler<T = unknown> = (message: ReceivedMessage<T>) => Promise<void> | void;

export interface RetryPolicy {
  /** Handler attempts before the message is dead-lettered (1 = no retry). */
  maxAttempts: number;
  /** Delay after the first failure; doubles on each further failure, up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export interface SubscribeOptions<T = unknown> {
  topic: string;
  /** Consumers sharing a group id share the work; every group gets every message. */
  groupId: string;
  handler: MessageHandler<T>;
  /** Messages handled at once by this subscriber, all keys together. Default 1. */
  concurrency?: number;
  /**
   * Messages of one key handled at once by this subscriber. Default 1: strict per-key order. Above 1,
   * a key's messages run concurrently (bounded by this and `concurrency`), except those published
   * with `ordered: true`. The contract suite checks both modes on every implementation.
   */
  keyConcurrency?: number;
  retry?: Partial<RetryPolicy>;
  /**
   * The group belongs to this one subscriber (e.g. a replica's cache that needs every message, with a
   * group id of its own per process): close() deletes the group, so restarts leave no group behind
   * that would keep receiving (embedded bus) or keep its offsets (Kafka). A subscriber that dies
   * without closing leaves it to the group expiry (BUS_GROUP_EXPIRY_MS; Kafka:
   * offsets.retention.minutes). Default false.
   */
  ephemeral?: boolean;
  /**
   * Kafka: a static assignment. This subscriber reads only these partitions of the topic, not a share
   * handed out by the group (webhook-ingest's reply waiter, pinned to its replica's partition). Its
   * group should be its own (`ephemeral`): every member of the group gets these same partitions.
   * Subscribing fails with a RangeError when the topic has no such partition. The embedded bus has
   * no partitions and ignores it (its subscriber reads the whole topic).
   */
  partitions?: number[];
}

export interface Subscription {
  /** Stops taking messages, waits for in-flight handlers, records their outcome, then resolves. */
  close(): Promise<void>;
}

export interface EventBus {
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe<T = unknown>(options: SubscribeOptions<T>): Promise<Subscription>;
  /**
   * Readiness of the bus for publishing: throws while publishes cannot succeed (Kafka: no broker
   * answers, or a topic written to has a partition without a leader). Optional: the embedded bus
   * lives in the service's database, whose own readiness check covers it.
   */
  ready?(): Promise<void>;
  /**
   * Unprocessed messages (published, not yet acknowledged by `groupId`; in flight included) per key,
   * each counted up to `atMost`, in one query. Optional: the embedded bus knows its lanes; on Kafka
   * there is no per-key count (webhook-ingest then admits by rate only, docs/webhooks.md).
   */
  backlog?(topic: string, groupId: string, keys: string[], atMost: number): Promise<Map<string, number>>;
  /**
   * When the oldest message of these keys that `groupId` has not yet acknowledged (in flight
   * included) was published; null when none is pending. Optional, like `backlog` (the embedded bus
   * knows its lanes; Kafka has no per-key view): the console's pipeline health reads it.
   */
  oldestUnprocessed?(topic: string, groupId: string, keys: string[]): Promise<Date | null>;
  /**
   * How many partitions the topic has (Kafka). Optional: the embedded bus has no partitions. A
   * subscriber pinned with `partitions` sizes itself by it (webhook-ingest's replica index).
   */
  partitionCount?(topic: string): Promise<number>;
  /** Closes every subscription of this bus (gracefully) and its own connections, not the database. */
  close(): Promise<void>;
}

/** Headers a dead-lettered message carries besides its original ones. */
export const DLQ_HEADERS = {
  error: 'x-dlq-error',
  attempts: 'x-dlq-attempts',
  originalTopic: 'x-dlq-original-topic',
  originalId: 'x-dlq-original-id',
  groupId: 'x-dlq-group-id',
} as const;

export const dlqTopicOf = (topic: string): string => `${topic}.dlq`;
