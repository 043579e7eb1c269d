import type { WebhookReply } from '@flowdesk/contracts';

/** How long a webhook whose workflow answers later holds the request by default, and at most (RESPOND_TIMEOUT_MS). */
export const DEFAULT_RESPOND_TIMEOUT_MS = 10_000;
export const MAX_RESPOND_TIMEOUT_MS = 30_000;
/** Requests one replica holds at once; above, a delivery is answered at once with the poll link. */
export const MAX_WAITING = 10_000;

export type Answer = Pick<WebhookReply, 'status' | 'headers' | 'body'>;

/**
 * The requests this replica holds, by event id, until the engine's answer arrives on the reply topic
 * or their wait runs out. An answer for an event nobody waits for here (a timeout passed, a replica
 * restarted) is dropped: the caller has its poll link.
 */
export class ReplyWaiter {
  private readonly waiting = new Map<string, (answer: Answer | null) => void>();
  /** The reply topic's partition this replica reads (set once subscribed on Kafka; the trigger event's `replyTo.partition`). */
  partition: number | undefined;
  constructor(
    readonly replica: string,
    readonly timeoutMs: number,
    private readonly maxWaiting = MAX_WAITING,
  ) {}

  /** Whether one more request may wait (else it is answered at once with the poll link). */
  canWait(): boolean {
    return this.waiting.size < this.maxWaiting;
  }

  /**
   * Registers the wait before the event is published (an answer can never arrive before its waiter);
   * `wait()` resolves with the answer, or null when `timeoutMs` passes; `cancel()` forgets it.
   */
  register(eventId: string): { wait(): Promise<Answer | null>; cancel(): void } {
    let settle!: (answer: Answer | null) => void;
    const promise = new Promise<Answer | null>((resolve) => (settle = resolve));
    // Two deliveries with one idempotency key: the later one waits, the earlier one gets the poll link.
    this.waiting.get(eventId)?.(null);
    this.waiting.set(eventId, settle);
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      if (this.waiting.get(eventId) === settle) this.waiting.delete(eventId);
    };
    return {
      wait: () => {
        timer = setTimeout(() => settle(null), this.timeoutMs);
        return promise.finally(done);
      },
      cancel: () => {
        done();
        settle(null);
      },
    };
  }

  /** An answer from the reply topic: resolves its waiter, if this replica holds one. */
  deliver(reply: WebhookReply): void {
    if (reply.replica !== this.replica) return;
    const settle = this.waiting.get(reply.eventId);
    if (!settle) return;
    this.waiting.delete(reply.eventId);
    settle({ status: reply.status, headers: reply.headers, body: reply.body });
  }

  /** Ends every wait (the service closes): each caller gets the poll link at once. */
  close(): void {
    for (const settle of this.waiting.values()) settle(null);
    this.waiting.clear();
  }
}

/** RESPOND_TIMEOUT_MS: a whole number of milliseconds, 1 to MAX_RESPOND_TIMEOUT_MS. */
export function respondTimeoutFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.RESPOND_TIMEOUT_MS;
  if (!raw) return DEFAULT_RESPOND_TIMEOUT_MS;
  const v = Number(raw);
  if (!Number.isSafeInteger(v) || v < 1 || v > MAX_RESPOND_TIMEOUT_MS)
    throw new Error(`RESPOND_TIMEOUT_MS must be a whole number of milliseconds from 1 to ${MAX_RESPOND_TIMEOUT_MS}`);
  return v;
}

/** Highest REPLY_PARTITION accepted (the contract's bound on `replyTo.partition`). */
export const MAX_REPLY_PARTITION = 10_000;

/**
 * REPLY_PARTITION: this replica's partition of the reply topic, a whole number from 0 (default: one
 * replica, or the embedded start, needs nothing). In k8s the StatefulSet's pod index (docs/event-bus.md,
 * "Reply topic").
 */
export function replyPartitionFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.REPLY_PARTITION;
  if (!raw) return 0;
  const v = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(v) || v > MAX_REPLY_PARTITION)
    throw new Error(`REPLY_PARTITION must be a whole number from 0 to ${MAX_REPLY_PARTITION} (this replica's partition of the reply topic)`);
  return v;
}
