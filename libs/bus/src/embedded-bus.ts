import { fileURLToPath } from 'node:url';
import { instrumentBus } from './telemetry.ts';
import { migrate, type Database, type MigrationResult } from '@flowdesk/db';
import type { EventBus, OutgoingMessage, RetryPolicy, SubscribeOptions, Subscription } from './bus.ts';
import { EmbeddedConsumer } from './embedded-consumer.ts';
import { randomUUID } from 'node:crypto';
import { BUS_CHANNEL, EmbeddedStore, type EncodedMessage } from './embedded-store.ts';
import { resolveRetry } from './retry.ts';

export interface EmbeddedBusOptions {
  /**
   * The safety poll: how often an idle subscriber looks for work nobody told it about (BUS_POLL_MS).
   * A publish wakes the topic's subscribers at once — in this process directly, in others by
   * LISTEN/NOTIFY on Postgres (PGlite: one process, its own LISTEN) — so this only bounds how late
   * a lost notification or an expired lease (a consumer that died) is noticed. Default 10 s.
   */
  pollIntervalMs?: number;
  /** How long a claimed message stays with a consumer without renewal (renewed every third of it). Default 30 s. */
  leaseMs?: number;
  /** Default retry policy; a subscription can override it. */
  retry?: Partial<RetryPolicy>;
  /** Apply the `bus` schema migrations first. Default true. */
  migrate?: boolean;
  /** Errors the bus cannot hand to a caller (a lost database connection while polling). Default: console.error. */
  onError?: (err: unknown) => void;
  /**
   * Messages delivered to every group they were fanned out to are deleted once older than this
   * (BUS_RETENTION_MS). Default 24 h. `Infinity` keeps them.
   */
  retentionMs?: number;
  /**
   * A consumer group that no consumer has marked alive for this long is dropped with its pending
   * deliveries (BUS_GROUP_EXPIRY_MS; an mcp-gateway replica's group after a restart). Default 7 days,
   * as Kafka's offsets.retention.minutes. `Infinity` keeps every group.
   */
  groupExpiryMs?: number;
  /** How often the sweeper runs (retention, group expiry). Default: a tenth of retentionMs, between 1 s and 60 s. */
  sweepIntervalMs?: number;
  /** Messages deleted per statement (each its own short transaction). Default 1000. */
  sweepBatch?: number;
  /** How often a running consumer marks its group alive. Default: 60 s, or a quarter of groupExpiryMs if less. */
  heartbeatMs?: number;
}

export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_GROUP_EXPIRY_MS = 7 * 24 * 60 * 60 * 1000;
/** Statements of one topic per sweep at most, so one sweep's work is bounded; the rest waits for the next. */
const MAX_SWEEP_BATCHES = 20;

/** The embedded bus: the EventBus plus its sweeper, callable directly (tests, an operator's script). */
export interface EmbeddedEventBus extends EventBus {
  /** Drops expired groups and deletes delivered messages past the retention, now (the timer does it periodically). */
  sweep(): Promise<{ deleted: number; expired: number }>;
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
export async function createEmbeddedBus(db: Database, options: EmbeddedBusOptions = {}): Promise<EmbeddedEventBus> {
  if (options.migrate !== false) await migrateBus(db);
  for (const name of ['retentionMs', 'groupExpiryMs', 'sweepIntervalMs', 'sweepBatch', 'heartbeatMs'] as const) {
    const v = options[name];
    if (v !== undefined && !(typeof v === 'number' && v >= 0 && (Number.isInteger(v) || v === Infinity)))
      throw new RangeError(`${name} must be a non-negative integer or Infinity`);
  }
  const id = randomUUID();
  const bus = new EmbeddedBus(new EmbeddedStore(db, id), options);
  // Another bus's commit (another process, or another service's bus in this one): wake the topic's
  // subscribers here. '' (the listener reconnected): anything may have been missed, all look.
  bus.unlisten = await db.listen(BUS_CHANNEL, (payload) => {
    if (payload === '') return bus.wakeAll();
    const space = payload.indexOf(' ');
    if (payload.slice(0, space) !== id) bus.wakeTopic(payload.slice(space + 1));
  });
  return instrumentBus(bus);
}

/** The safety poll's default (EmbeddedBusOptions.pollIntervalMs). */
export const DEFAULT_POLL_INTERVAL_MS = 10_000;

/** Publish calls stored together at most, per statement. */
const MAX_GROUP_COMMIT = 256;
/**
 * Encoded characters per statement beyond which a batch is cut (a single larger publish still goes
 * alone): 256 one-MiB webhook bodies must not become one quarter-gigabyte statement.
 */
const MAX_GROUP_CHARS = 4 * 1024 * 1024;

interface PendingPublish {
  messages: EncodedMessage[];
  chars: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Serialises a message in its publisher's own call, so that a value that cannot be stored (not
 * serialisable, a bad key) fails that publish alone instead of the batch it would have joined, and
 * the batch statement is assembled from ready text. A NUL cannot appear in the SQL text (Postgres
 * would cut the statement there); JSON.stringify escapes it in values and headers, keys are checked.
 */
function encode(topic: string, m: OutgoingMessage): EncodedMessage {
  if (typeof m.key !== 'string' || m.key.includes('\0')) throw new TypeError(`publish to ${topic}: a message key must be a string without NUL characters`);
  const value = JSON.stringify(m.value);
  if (typeof value !== 'string') throw new TypeError(`publish to ${topic}: a message value must be JSON-serialisable`);
  return { key: m.key, value, headers: m.headers ? JSON.stringify(m.headers) : '{}', ordered: m.ordered === true };
}

/**
 * A statement the database refused because of what one message contains (SQLSTATE class 22, data
 * exception: a \u0000 in a JSON string, which jsonb cannot hold; class 54: too large). The server
 * answered, so the implicit transaction was rolled back and nothing of the batch is stored.
 */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('54'));
}

/** Lets the rest of the current event-loop turn's I/O callbacks run first (they may publish). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

class EmbeddedBus implements EmbeddedEventBus {
  private readonly consumers = new Set<{ topic: string; consumer: EmbeddedConsumer; drop?: () => Promise<void> }>();
  private readonly pending = new Map<string, PendingPublish[]>();
  private readonly flushing = new Set<string>();
  private closed = false;
  private readonly sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private readonly retentionMs: number;
  private readonly groupExpiryMs: number;
  unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly store: EmbeddedStore,
    private readonly options: EmbeddedBusOptions,
  ) {
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.groupExpiryMs = options.groupExpiryMs ?? DEFAULT_GROUP_EXPIRY_MS;
    if (Number.isFinite(this.retentionMs) || Number.isFinite(this.groupExpiryMs)) {
      const base = Number.isFinite(this.retentionMs) ? this.retentionMs / 10 : 60_000;
      const every = options.sweepIntervalMs ?? Math.min(60_000, Math.max(1_000, Math.round(base)));
      this.sweepTimer = setInterval(
        () => {
          this.sweeping ??= this.sweep()
            .then(() => {})
            .catch((err) => (options.onError ?? ((e) => console.error('[bus]', e)))(err))
            .finally(() => (this.sweeping = undefined));
        },
        Math.max(10, every),
      );
      this.sweepTimer.unref(); // the sweeper alone keeps no process alive
    }
  }

  /**
   * One sweep: drops expired groups, then deletes delivered messages older than the retention, per
   * topic, in statements of sweepBatch messages, at most MAX_SWEEP_BATCHES per topic (bounded work;
   * the rest waits for the next sweep).
   */
  async sweep(): Promise<{ deleted: number; expired: number }> {
    let expired = 0;
    let deleted = 0;
    if (Number.isFinite(this.groupExpiryMs)) expired = (await this.store.expireGroups(this.groupExpiryMs)).length;
    if (Number.isFinite(this.retentionMs)) {
      const batch = this.options.sweepBatch ?? 1000;
      for (const topic of await this.store.topics()) {
        for (let i = 0; i < MAX_SWEEP_BATCHES && !this.closed; i++) {
          const n = await this.store.sweep(topic, this.retentionMs, batch);
          deleted += n;
          if (n < batch) break;
        }
      }
    }
    return { deleted, expired };
  }

  backlog(topic: string, groupId: string, keys: string[], atMost: number): Promise<Map<string, number>> {
    return this.store.backlog(topic, groupId, keys, atMost);
  }

  oldestUnprocessed(topic: string, groupId: string, keys: string[]): Promise<Date | null> {
    return this.store.oldestUnprocessed(topic, groupId, keys);
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (this.closed) throw new Error('bus is closed');
    if (typeof topic !== 'string' || topic.includes('\0')) throw new TypeError('a topic must be a string without NUL characters');
    if (messages.length === 0) return;
    const encoded = messages.map((m) => encode(topic, m));
    let chars = 0;
    for (const m of encoded) chars += m.key.length + m.value.length + m.headers.length;
    return new Promise<void>((resolve, reject) => {
      const queue = this.pending.get(topic) ?? [];
      queue.push({ messages: encoded, chars, resolve, reject });
      this.pending.set(topic, queue);
      if (!this.flushing.has(topic)) {
        this.flushing.add(topic);
        void this.flush(topic);
      }
    });
  }

  /**
   * Group commit: one write per topic in flight; publishes that arrive meanwhile are stored together
   * in the next single statement, in call order (so per-key order holds), and each resolves only once
   * that statement has committed. One at a time keeps the rows of a topic committed in sequence order,
   * which the claim relies on (a key's later message is never visible before an earlier one).
   *
   * Before cutting each batch the flush waits for the current event-loop turn to end (setImmediate),
   * so every request read in that turn has published and joins: without it the first delivery of a
   * turn would start a write alone, and on PGlite, whose queries run on this thread, every write
   * would carry one event. The wait is one turn, not a timer: an idle bus still writes at once.
   */
  private async flush(topic: string): Promise<void> {
    try {
      for (;;) {
        await nextTurn();
        const queue = this.pending.get(topic);
        if (!queue?.length) return;
        let n = 0;
        let chars = 0;
        while (n < queue.length && n < MAX_GROUP_COMMIT && (n === 0 || chars + queue[n]!.chars <= MAX_GROUP_CHARS)) chars += queue[n++]!.chars;
        const batch = queue.splice(0, n);
        if (queue.length === 0) this.pending.delete(topic);
        await this.write(topic, batch);
      }
    } finally {
      this.flushing.delete(topic);
    }
  }

  /** Stores one batch; every publisher of it resolves after the commit, or rejects. */
  private async write(topic: string, batch: PendingPublish[]): Promise<void> {
    try {
      await this.store.publish(topic, batch.length === 1 ? batch[0]!.messages : batch.flatMap((p) => p.messages));
    } catch (err) {
      if (batch.length > 1 && isDataError(err)) {
        // One publisher's content must not fail the deliveries that merely shared its statement:
        // nothing was stored, so each is written again on its own, in order, and only the
        // offending one rejects.
        for (const p of batch) await this.write(topic, [p]);
        return;
      }
      for (const p of batch) p.reject(err);
      return;
    }
    for (const p of batch) p.resolve();
    this.notify(topic);
  }

  /** In-process wake-up: subscribers of the topic look now instead of at their next poll. */
  private notify(topic: string): void {
    for (const c of this.consumers) if (c.topic === topic) c.consumer.wake();
  }

  /** Another bus on the database made deliveries of `topic` claimable. */
  wakeTopic(topic: string): void {
    this.notify(topic);
  }

  wakeAll(): void {
    for (const c of this.consumers) c.consumer.wake();
  }

  private onError(err: unknown): void {
    (this.options.onError ?? ((e) => console.error('[bus]', e)))(err);
  }

  async subscribe<T>(options: SubscribeOptions<T>): Promise<Subscription> {
    if (this.closed) throw new Error('bus is closed');
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be an integer >= 1');
    const keyConcurrency = options.keyConcurrency ?? 1;
    if (!Number.isInteger(keyConcurrency) || keyConcurrency < 1) throw new RangeError('keyConcurrency must be an integer >= 1');
    await this.store.register(options.topic, options.groupId);
    const consumer = new EmbeddedConsumer(this.store, {
      topic: options.topic,
      groupId: options.groupId,
      handler: options.handler as SubscribeOptions<unknown>['handler'],
      concurrency,
      keyConcurrency,
      retry: resolveRetry(this.options.retry, options.retry),
      pollIntervalMs: this.options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      leaseMs: this.options.leaseMs ?? 30_000,
      heartbeatMs: this.options.heartbeatMs ?? Math.min(60_000, Math.max(10, Math.floor(this.groupExpiryMs / 4))),
      onError: this.options.onError ?? ((err) => console.error('[bus]', err)),
      notify: (t) => {
        this.notify(t);
        this.store.signal(t).catch((err: unknown) => this.onError(err));
      },
    });
    const entry = { topic: options.topic, consumer, drop: options.ephemeral ? () => this.dropEphemeral(options.topic, options.groupId) : undefined };
    this.consumers.add(entry);
    return {
      close: async () => {
        await consumer.close();
        this.consumers.delete(entry);
        await entry.drop?.();
      },
    };
  }

  /** An ephemeral group goes with its subscriber; if that fails, the sweeper's group expiry takes it later. */
  private async dropEphemeral(topic: string, groupId: string): Promise<void> {
    await this.store.dropGroup(topic, groupId).catch((err: Error) => (this.options.onError ?? ((e) => console.error('[bus]', e)))(err));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    await this.unlisten?.().catch((err: unknown) => this.onError(err));
    await this.sweeping;
    await Promise.all(
      [...this.consumers].map(async (c) => {
        await c.consumer.close();
        await c.drop?.();
      }),
    );
    this.consumers.clear();
  }
}
