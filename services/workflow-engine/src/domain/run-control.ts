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
 * A workflow with its own retention (`retention: { days?, runs? }`, set by its owner; a field left out
 * follows the global one) is pruned by that instead, in the same round: the global rule leaves it out
 * and a rule of its own follows.
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

/** A workflow's own retention, from its definition (the engine's cache of every workflow). */
export interface WorkflowRetentionOverride {
  ownerId: string;
  workflowId: string;
  days?: number;
  runs?: number;
}

type PruneRule = {
  before: Date | null;
  keepPerWorkflow: number | null;
  workflow?: { ownerId: string; workflowId: string };
  except?: readonly string[];
};

export const DEFAULT_RETENTION: RetentionPolicy = { maxAgeDays: 30, keepPerWorkflow: null, intervalMs: 300_000, batchSize: 500, maxBatches: 20 };

export class RunRetention {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<number> | undefined;

  constructor(
    private readonly store: { prune(rule: PruneRule, limit: number): Promise<number> },
    private readonly policy: RetentionPolicy,
    private readonly clock: () => Date,
    private readonly log: LogPort,
    /** The workflows with their own retention, asked at each round (never on the hot path). */
    private readonly overrides: () => Iterable<WorkflowRetentionOverride> = () => [],
  ) {}

  /** Whether the global rule prunes anything (a workflow's own retention is applied even when not). */
  get enabled(): boolean {
    return this.policy.maxAgeDays !== null || this.policy.keepPerWorkflow !== null;
  }

  /** One round: batches until one deletes less than a batch (or maxBatches). Returns the runs deleted. */
  pruneOnce(): Promise<number> {
    this.round ??= this.runRound().finally(() => (this.round = undefined));
    return this.round;
  }

  /** Where the next round starts among the workflows with their own retention (so none waits forever behind others). */
  private cursor = 0;

  private async runRound(): Promise<number> {
    const { maxAgeDays, keepPerWorkflow, batchSize, maxBatches } = this.policy;
    const own = [...this.overrides()].filter((o) => o.days !== undefined || o.runs !== undefined);
    const before = (days: number | null) => (days === null ? null : new Date(this.clock().getTime() - days * 86_400_000));
    const rules: PruneRule[] = [];
    if (this.enabled) rules.push({ before: before(maxAgeDays), keepPerWorkflow, ...(own.length > 0 ? { except: own.map((o) => o.workflowId) } : {}) });
    const start = own.length > 0 ? this.cursor % own.length : 0;
    for (const o of [...own.slice(start), ...own.slice(0, start)]) {
      const rule = { before: before(o.days ?? maxAgeDays), keepPerWorkflow: o.runs ?? keepPerWorkflow };
      if (rule.before !== null || rule.keepPerWorkflow !== null) rules.push({ ...rule, workflow: { ownerId: o.ownerId, workflowId: o.workflowId } });
    }
    // At most maxBatches full batches per round; a workflow's rule that deletes less than a batch
    // costs one short query.
    let total = 0;
    let full = 0;
    let visited = 0;
    for (const rule of rules) {
      if (full >= maxBatches) break;
      if (rule.workflow) visited++;
      for (;;) {
        const n = await this.store.prune(rule, batchSize);
        total += n;
        await new Promise((resolve) => setImmediate(resolve));
        if (n < batchSize || ++full >= maxBatches) break;
      }
    }
    this.cursor = start + visited;
    if (total > 0) this.log.info({ deleted: total }, 'run history pruned');
    return total;
  }

  start(): void {
    if (this.timer) return;
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
