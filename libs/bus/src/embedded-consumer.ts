import { randomUUID } from 'node:crypto';
import type { MessageHandler, RetryPolicy, Subscription } from './bus.ts';
import type { ClaimedRow, EmbeddedStore } from './embedded-store.ts';
import { backoffMs, errorSummary, errorText } from './retry.ts';

export interface ConsumerSettings {
  topic: string;
  groupId: string;
  handler: MessageHandler<unknown>;
  concurrency: number;
  retry: RetryPolicy;
  pollIntervalMs: number;
  leaseMs: number;
  onError: (err: unknown) => void;
  /** Called after a dead-letter publish, so in-process subscribers of the DLQ topic wake up. */
  notify: (topic: string) => void;
}

/**
 * One subscriber: a single pump claims as many deliveries as it has free slots and runs their
 * handlers; it sleeps until woken (publish in this process, a handler finishing, a backoff
 * expiring) or the poll interval passes (work published by another process).
 */
export class EmbeddedConsumer implements Subscription {
  readonly id = randomUUID();
  private readonly inflight = new Map<string, Promise<void>>();
  private closing = false;
  private closed: Promise<void> | undefined;
  private woken = false;
  private wakeSleeper: (() => void) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly loop: Promise<void>;
  private readonly renewTimer: NodeJS.Timeout;

  constructor(
    private readonly store: EmbeddedStore,
    private readonly s: ConsumerSettings,
  ) {
    this.renewTimer = setInterval(() => {
      this.store.renew(s.groupId, [...this.inflight.keys()], this.id, s.leaseMs).catch(s.onError);
    }, Math.max(10, Math.floor(s.leaseMs / 3)));
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
    while (!this.closing) {
      const free = this.s.concurrency - this.inflight.size;
      let claimed: ClaimedRow[] = [];
      if (free > 0) {
        try {
          claimed = await this.store.claim(this.s.topic, this.s.groupId, this.id, free, this.s.leaseMs);
        } catch (err) {
          this.s.onError(err);
          await this.sleep(this.s.pollIntervalMs);
          continue;
        }
        if (this.closing) {
          // close() began while claiming: these never started, so hand them straight back.
          await this.store.release(this.s.groupId, claimed.map((c) => c.sequence), this.id).catch(this.s.onError);
          break;
        }
        for (const row of claimed) this.start(row);
      }
      if (free === 0 || claimed.length < free) await this.sleep(this.s.pollIntervalMs);
    }
  }

  private start(row: ClaimedRow): void {
    const run = this.handle(row)
      .catch(this.s.onError)
      .finally(() => {
        this.inflight.delete(row.sequence);
        this.wake(); // a slot is free, and the key's next message may now be eligible
      });
    this.inflight.set(row.sequence, run);
  }

  private async handle({ sequence, message }: ClaimedRow): Promise<void> {
    const { store, s } = this;
    try {
      await s.handler(message);
    } catch (err) {
      if (message.attempt >= s.retry.maxAttempts) {
        await store.deadLetter(s.topic, s.groupId, sequence, this.id, message.attempt, errorText(err), errorSummary(err));
        s.notify(`${s.topic}.dlq`);
        return;
      }
      const delay = backoffMs(s.retry, message.attempt);
      await store.retryLater(s.groupId, sequence, this.id, delay, errorText(err));
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.wake();
      }, delay + 1);
      this.timers.add(timer);
      return;
    }
    // Only now is the message done; if this fails the lease runs out and it is delivered again.
    await store.ack(s.groupId, sequence, this.id);
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      this.wake();
      await this.loop;
      await Promise.all(this.inflight.values());
      clearInterval(this.renewTimer);
      for (const t of this.timers) clearTimeout(t);
    })();
    return this.closed;
  }
}
