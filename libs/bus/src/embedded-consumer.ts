import { randomUUID } from 'node:crypto';
import { deadLettered } from './telemetry.ts';
import { groupLabel } from './group-id.ts';
import type { MessageHandler, RetryPolicy, Subscription } from './bus.ts';
import type { Ack, ClaimedRow, EmbeddedStore } from './embedded-store.ts';
import { backoffMs, errorSummary, errorText } from './retry.ts';

export interface ConsumerSettings {
  topic: string;
  groupId: string;
  handler: MessageHandler<unknown>;
  concurrency: number;
  /** Deliveries of one key in flight at once, across the group (SubscribeOptions.keyConcurrency). */
  keyConcurrency: number;
  retry: RetryPolicy;
  pollIntervalMs: number;
  leaseMs: number;
  /** How often the group is marked alive (subscription.seen_at) while this consumer runs. */
  heartbeatMs: number;
  onError: (err: unknown) => void;
  /** Called after a dead-letter publish or a release, so the topic's subscribers (here and elsewhere) wake up. */
  notify: (topic: string) => void;
}

/** Lets the rest of the current event-loop turn run first (handlers finishing in it join the batch). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One subscriber: a single pump, one database round trip at a time, which acknowledges the handlers
 * that resolved since its last trip and, in the same statement text and commit, claims as many
 * deliveries as it then has free slots (EmbeddedStore.ackAndClaim), then runs their handlers. It
 * sleeps until woken (a publish — in this process directly, from another bus by its notification —
 * a handler finishing, a backoff expiring) or the safety poll's interval passes (a notification
 * lost, a dead consumer's lease run out). A delivery is acknowledged only after its
 * handler resolved: the handler's completion is what queues it.
 */
export class EmbeddedConsumer implements Subscription {
  readonly id = randomUUID();
  /** Deliveries taken and not yet recorded (handler running, or resolved and waiting for its ack). */
  private readonly inflight = new Map<string, { key: string; run: Promise<void> }>();
  /** Handlers that resolved, waiting for the pump's next trip; `recorded` runs once it committed. */
  private acks: { ack: Ack; recorded: () => void }[] = [];
  private closing = false;
  private closed: Promise<void> | undefined;
  private woken = false;
  private wakeSleeper: (() => void) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly loop: Promise<void>;
  private readonly renewTimer: NodeJS.Timeout;
  private readonly heartbeatTimer: NodeJS.Timeout;

  constructor(
    private readonly store: EmbeddedStore,
    private readonly s: ConsumerSettings,
  ) {
    this.renewTimer = setInterval(
      () => {
        const refs = [...this.inflight].map(([sequence, { key }]) => ({ sequence, key }));
        this.store.renew(s.topic, s.groupId, refs, this.id, s.leaseMs).catch(s.onError);
      },
      Math.max(10, Math.floor(s.leaseMs / 3)),
    );
    const heartbeat = () => void this.store.heartbeat(s.topic, s.groupId).catch(s.onError);
    heartbeat();
    this.heartbeatTimer = setInterval(heartbeat, s.heartbeatMs);
    this.loop = this.pump();
  }

  /** Ends the current or next sleep of the pump; remembered if the pump is busy, so no wake-up is lost. */
  wake(): void {
    this.woken = true;
    this.wakeSleeper?.();
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        this.woken = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeSleeper = done;
    });
  }

  private async pump(): Promise<void> {
    // After close() began the pump only records what is in flight, then ends.
    while (!this.closing || this.inflight.size > 0) {
      await nextTurn();
      const acks = this.acks.splice(0);
      // Slots of the deliveries acknowledged in this trip are free for its claim.
      const free = this.closing ? 0 : this.s.concurrency - this.inflight.size + acks.length;
      let claimed: ClaimedRow[] = [];
      if (free > 0 || acks.length > 0) {
        try {
          claimed = await this.store.ackAndClaim(
            this.s.topic,
            this.s.groupId,
            this.id,
            acks.map((a) => a.ack),
            free,
            this.s.leaseMs,
            this.s.keyConcurrency,
          );
        } catch (err) {
          // Not recorded: the leases run out and the messages are delivered again (at-least-once).
          this.s.onError(err);
          for (const a of acks) a.recorded();
          await this.sleep(this.s.pollIntervalMs);
          continue;
        }
        for (const a of acks) a.recorded();
        if (this.closing && claimed.length > 0) {
          // close() began while claiming: these never started, so hand them straight back.
          const refs = claimed.map((c) => ({ sequence: c.sequence, key: c.message.key }));
          await this.store.release(this.s.topic, this.s.groupId, refs, this.id).catch(this.s.onError);
          this.s.notify(this.s.topic); // the group's other consumers may take them now
          claimed = [];
        }
        for (const row of claimed) this.start(row);
      }
      if (free <= 0 || claimed.length < free) await this.sleep(this.s.pollIntervalMs);
    }
  }

  private start(row: ClaimedRow): void {
    const run = this.handle(row)
      .catch(this.s.onError)
      .finally(() => {
        this.inflight.delete(row.sequence);
        this.wake(); // a slot is free, and the key's next message may now be eligible
      });
    this.inflight.set(row.sequence, { key: row.message.key, run });
  }

  private async handle({ sequence, message }: ClaimedRow): Promise<void> {
    const { store, s } = this;
    try {
      await s.handler(message);
    } catch (err) {
      if (message.attempt >= s.retry.maxAttempts) {
        await store.deadLetter(s.topic, s.groupId, { sequence, key: message.key }, this.id, message.attempt, errorText(err), errorSummary(err));
        s.notify(`${s.topic}.dlq`);
        deadLettered.inc({ topic: s.topic, group: groupLabel(s.groupId) });
        return;
      }
      const delay = backoffMs(s.retry, message.attempt);
      await store.retryLater(s.topic, s.groupId, { sequence, key: message.key }, this.id, delay, errorText(err));
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.wake();
      }, delay + 1);
      this.timers.add(timer);
      return;
    }
    // Only now is the message done: queued for the pump's next trip, which acknowledges every handler
    // that resolved meanwhile in one statement. If that fails the lease runs out and it is delivered again.
    await new Promise<void>((recorded) => {
      this.acks.push({ ack: { sequence, key: message.key }, recorded });
      this.wake();
    });
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      this.wake();
      await this.loop; // ends once every delivery in flight is recorded
      await Promise.all([...this.inflight.values()].map((f) => f.run));
      clearInterval(this.renewTimer);
      clearInterval(this.heartbeatTimer);
      for (const t of this.timers) clearTimeout(t);
    })();
    return this.closed;
  }
}
