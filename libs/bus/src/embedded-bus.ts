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

class EmbeddedBus implements EventBus {
  private readonly consumers = new Set<{ topic: string; consumer: EmbeddedConsumer }>();
  private closed = false;

  constructor(
    private readonly store: EmbeddedStore,
    private readonly options: EmbeddedBusOptions,
  ) {}

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (this.closed) throw new Error('bus is closed');
    await this.store.publish(topic, messages);
    this.notify(topic);
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
