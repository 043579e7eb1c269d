/**
 * Run control (docs/workflow-engine.md): cancelling runs in flight, and run history retention.
 * Neither costs the hot path a query: a run in flight is a map entry, looked up at each step boundary.
 */
import type { LogPort } from './ports.ts';

export interface RunKey {
  ownerId: string;
  workflowId: string;
  eventId: string;
}
const keyOf = (k: Pick<RunKey, 'workflowId' | 'eventId'>) => `${k.workflowId}/${k.eventId}`;

/**
 * The runs this replica is executing, and which of them were cancelled. A cancel through this
 * replica's API is seen at once (markCancelled); one through another replica is seen by a poll every
 * `pollMs`, which asks only about runs that have been running longer than that (a short run never
 * costs a query). A cancelled run stops at its next step boundary.
 */
export class RunCancellations {
  private readonly inFlight = new Map<string, RunKey & { since: number }>();
  private readonly cancelled = new Set<string>();
  /** Signals asked for by runs waiting to retry (made on demand: a run that never waits costs none). */
  private readonly signals = new Map<string, AbortController>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly lookup: { cancelledAmong(runs: readonly RunKey[]): Promise<Set<string>> },
    private readonly log: LogPort,
    private readonly pollMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** A run starts executing here; call the returned function when it ended. */
  track(run: RunKey): () => void {
    const key = keyOf(run);
    this.inFlight.set(key, { ...run, since: this.now() });
    return () => {
      this.inFlight.delete(key);
      this.cancelled.delete(key);
      this.signals.delete(key);
    };
  }

  isCancelled(run: Pick<RunKey, 'workflowId' | 'eventId'>): boolean {
    return this.cancelled.size > 0 && this.cancelled.has(keyOf(run));
  }

  /** Aborted when the run is cancelled: interrupts a retry's delay. */
  signalOf(run: Pick<RunKey, 'workflowId' | 'eventId'>): AbortSignal {
    const key = keyOf(run);
    let controller = this.signals.get(key);
    if (!controller) {
      controller = new AbortController();
      if (this.cancelled.has(key)) controller.abort(new Error('the run was cancelled'));
      else if (this.inFlight.has(key)) this.signals.set(key, controller);
    }
    return controller.signal;
  }

  /** The run was cancelled (its row already says so): if it runs here, it stops at its next step. */
  markCancelled(run: Pick<RunKey, 'workflowId' | 'eventId'>): void {
    this.cancel(keyOf(run));
  }

  private cancel(key: string): void {
    if (!this.inFlight.has(key)) return;
    this.cancelled.add(key);
    this.signals.get(key)?.abort(new Error('the run was cancelled'));
  }

  /** Asks the store about the runs in flight for longer than pollMs. */
  async poll(): Promise<void> {
    if (this.polling) return;
    const old = this.now() - this.pollMs;
    const runs = [...this.inFlight.values()].filter((r) => r.since <= old && !this.cancelled.has(keyOf(r)));
    if (runs.length === 0) return;
    this.polling = true;
    try {
      for (const key of await this.lookup.cancelledAmong(runs)) this.cancel(key);
    } catch (err) {
      this.log.warn({ err }, 'cancelled runs could not be checked; trying again');
    } finally {
      this.polling = false;
    }
  }

  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * Run history retention (docs/operations.md): finished runs older than `maxAgeDays` (RUN_RETENTION_DAYS,
 * default 30) and beyond the `keepPerWorkflow` newest of each workflow (RUN_RETENTION_PER_WORKFLOW,
 * default unlimited) are deleted every `intervalMs` (RUN_RETENTION_INTERVAL_SECONDS, default 300 s), in
 * batches of `batchSize` (each its own short transaction, the event loop free between them), at
 * most `maxBatches` per round: a large backlog is worked off over several rounds, never in one burst.
 */
export interface RetentionPolicy {
  /** null: runs are not pruned by age. */
  maxAgeDays: number | null;
  /** null: no per-workflow count. */
  keepPerWorkflow: number | null;
  intervalMs: number;
  batchSize: number;
  maxBatches: number;
}

export const DEFAULT_RETENTION: RetentionPolicy = { maxAgeDays: 30, keepPerWorkflow: null, intervalMs: 300_000, batchSize: 500, maxBatches: 20 };

export class RunRetention {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<number> | undefined;

  constructor(
    private readonly store: { prune(rule: { before: Date | null; keepPerWorkflow: number | null }, limit: number): Promise<number> },
    private readonly policy: RetentionPolicy,
    private readonly clock: () => Date,
    private readonly log: LogPort,
  ) {}

  get enabled(): boolean {
    return this.policy.maxAgeDays !== null || this.policy.keepPerWorkflow !== null;
  }

  /** One round: batches until one deletes less than a batch (or maxBatches). Returns the runs deleted. */
  pruneOnce(): Promise<number> {
    this.round ??= this.runRound().finally(() => (this.round = undefined));
    return this.round;
  }

  private async runRound(): Promise<number> {
    if (!this.enabled) return 0;
    const { maxAgeDays, keepPerWorkflow, batchSize, maxBatches } = this.policy;
    const before = maxAgeDays === null ? null : new Date(this.clock().getTime() - maxAgeDays * 86_400_000);
    let total = 0;
    for (let i = 0; i < maxBatches; i++) {
      const n = await this.store.prune({ before, keepPerWorkflow }, batchSize);
      total += n;
      if (n < batchSize) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (total > 0) this.log.info({ deleted: total }, 'run history pruned');
    return total;
  }

  start(): void {
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => {
      this.pruneOnce().catch((err: unknown) => this.log.warn({ err }, 'run history could not be pruned; trying again next round'));
    }, this.policy.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.round?.catch(() => {});
  }
}
