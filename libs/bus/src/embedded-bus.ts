import { fileURLToPath } from 'node:url';
import { migrate, type Database, type MigrationResult } from '@flowdesk/db';
import type { EventBus, OutgoingMessage, RetryPolicy, SubscribeOptions, Subscription } from './bus.ts';
import { EmbeddedConsumer } from './embedded-consumer.ts';
import { EmbeddedStore } from './embedded-store.ts';
import { resolveRetry } from './retry.ts';

export interface EmbeddedBusOptions {
  /** How often an idle subscriber looks for work published by another process. Default 250 ms. */
  pollIntervalMs?: number;
  /** How long a claimed message stays with a consumer without renewal (renewed every third of it). Default 30 s. */
  leaseMs?: number;
  /** Default retry policy; a subscription can override it. */
  retry?: Partial<RetryPolicy>;
  /** Apply the `bus` schema migrations first. Default true. */
  migrate?: boolean;
  /** Errors the bus cannot hand to a caller (a lost database connection while polling). Default: console.error. */
  onError?: (err: unknown) => void;
}

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

/** Creates or updates the `bus` schema (libs/bus/migrations). */
export function migrateBus(db: Database): Promise<MigrationResult> {
  return migrate(db, MIGRATIONS_DIR, 'bus');
}

/**
 * The bus on the service's own database (PGlite for `npm start`, or Postgres): as durable as the
 * database, consumer groups across processes via leases. See docs/event-bus.md.
 */
export async function createEmbeddedBus(db: Database, options: EmbeddedBusOptions = {}): Promise<EventBus> {
  if (options.migrate !== false) await migrateBus(db);
  return new EmbeddedBus(new EmbeddedStore(db), options);
}

/** Publish calls stored together at most, per statement. */
const MAX_GROUP_COMMIT = 256;

interface PendingPublish {
  messages: OutgoingMessage[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

class EmbeddedBus implements EventBus {
  private readonly consumers = new Set<{ topic: string; consumer: EmbeddedConsumer }>();
  private readonly pending = new Map<string, PendingPublish[]>();
  private readonly flushing = new Set<string>();
  private closed = false;

  constructor(
    private readonly store: EmbeddedStore,
    private readonly options: EmbeddedBusOptions,
  ) {}

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (this.closed) throw new Error('bus is closed');
    if (messages.length === 0) return;
    return new Promise<void>((resolve, reject) => {
      const queue = this.pending.get(topic) ?? [];
      queue.push({ messages, resolve, reject });
      this.pending.set(topic, queue);
      if (!this.flushing.has(topic)) void this.flush(topic);
    });
  }

  /**
   * Group commit: publishes that arrive while a write to the topic is under way are stored together
   * in the next single statement, in call order (so per-key order holds), and each resolves only once
   * that statement has committed. An idle bus writes at once; a busy one writes fewer, larger batches.
   */
  private async flush(topic: string): Promise<void> {
    this.flushing.add(topic);
    try {
      for (let queue = this.pending.get(topic); queue?.length; queue = this.pending.get(topic)) {
        const batch = queue.splice(0, MAX_GROUP_COMMIT);
        if (queue.length === 0) this.pending.delete(topic);
        try {
          await this.store.publish(topic, batch.flatMap((p) => p.messages));
          for (const p of batch) p.resolve();
          this.notify(topic);
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.flushing.delete(topic);
    }
  }

  /** In-process wake-up: subscribers of the topic look now instead of at their next poll. */
  private notify(topic: string): void {
    for (const c of this.consumers) if (c.topic === topic) c.consumer.wake();
  }

  async subscribe<T>(options: SubscribeOptions<T>): Promise<Subscription> {
    if (this.closed) throw new Error('bus is closed');
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be an integer >= 1');
    await this.store.register(options.topic, options.groupId);
    const consumer = new EmbeddedConsumer(this.store, {
      topic: options.topic,
      groupId: options.groupId,
      handler: options.handler as SubscribeOptions<unknown>['handler'],
      concurrency,
      retry: resolveRetry(this.options.retry, options.retry),
      pollIntervalMs: this.options.pollIntervalMs ?? 250,
      leaseMs: this.options.leaseMs ?? 30_000,
      onError: this.options.onError ?? ((err) => console.error('[bus]', err)),
      notify: (t) => this.notify(t),
    });
    const entry = { topic: options.topic, consumer };
    this.consumers.add(entry);
    return {
      close: async () => {
        await consumer.close();
        this.consumers.delete(entry);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.consumers].map((c) => c.consumer.close()));
    this.consumers.clear();
  }
}
