/**
 * The event bus every service talks to: one interface, two implementations (embedded on the
 * database for `npm start`, Kafka in production) that pass the same contract suite
 * (test/contract.ts). Guarantees, as the engine relies on them:
 *
 * - publish resolves only once the messages are durable (Kafka acks=all, or committed rows), so an
 *   HTTP 200 sent after it never loses an event;
 * - at-least-once delivery per consumer group: a message is done only after its handler resolves;
 * - per-key order: messages with the same key are handled in publish order, never concurrently;
 * - a throwing handler is retried with backoff, then the message goes to `<topic>.dlq` with the
 *   error in its headers, and the consumer moves on.
 */

export interface OutgoingMessage {
  /** Ordering and partitioning key (the workflow id for trigger events). */
  key: string;
  /** Any JSON-serialisable object. */
  value: object;
  headers?: Record<string, string>;
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
  /** Messages handled at once by this subscriber (different keys only). Default 1. */
  concurrency?: number;
  retry?: Partial<RetryPolicy>;
}

export interface Subscription {
  /** Stops taking messages, waits for in-flight handlers, records their outcome, then resolves. */
  close(): Promise<void>;
}

export interface EventBus {
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe<T = unknown>(options: SubscribeOptions<T>): Promise<Subscription>;
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
