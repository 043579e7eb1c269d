/**
 * Quotas on runs that start runs (docs/workflow-engine.md, "Limits"): the Run workflow node and error
 * workflows. Three bounds, each configurable: how deep a chain of runs may go, how many child runs
 * one run may start, and how many runs an owner's workflows may start per minute (a token bucket per
 * owner, in this replica's memory). Together they keep For each × Run workflow from multiplying: the
 * per-run cap bounds each level's fan-out, the owner's rate bounds the total whatever the shape.
 */
import { RUN_WORKFLOW_MAX_DEPTH } from '@flowdesk/contracts';
import { NodeFailedError } from './errors.ts';

export interface StartQuotaLimits {
  /** A run at this depth starts no other (RUN_WORKFLOW_MAX_DEPTH, default 5; a person's or an outside event's run is at 0). */
  maxDepth: number;
  /** Child runs one run may start with Run workflow steps (MAX_CHILD_RUNS_PER_RUN, default 100). */
  maxChildRunsPerRun: number;
  /** Runs an owner's workflows may start per minute, Run workflow and error workflows together (WORKFLOW_STARTS_PER_MINUTE, default 1,000). */
  startsPerMinute: number;
}

export const DEFAULT_START_QUOTAS: StartQuotaLimits = { maxDepth: RUN_WORKFLOW_MAX_DEPTH, maxChildRunsPerRun: 100, startsPerMinute: 1_000 };

/** Which start quota refused: the label of the refusals counter and of the owner's usage. */
export type StartQuota = 'depth' | 'child_runs_per_run' | 'starts_per_minute';

/** Each quota's setting (the environment variable that sets it). */
export const START_QUOTA_SETTINGS: Record<StartQuota, string> = {
  depth: 'RUN_WORKFLOW_MAX_DEPTH',
  child_runs_per_run: 'MAX_CHILD_RUNS_PER_RUN',
  starts_per_minute: 'WORKFLOW_STARTS_PER_MINUTE',
};

/**
 * A start a quota refused: the step fails with this (its message names the limit and its setting).
 * `status` 429 and `retryAfter` (seconds) for the owner's rate, so a node retry policy on 429 waits
 * until the bucket has a token again; the other two are final whatever the retry policy says
 * retries on (`other` only with `any`).
 */
export class StartQuotaError extends NodeFailedError {
  override readonly name = 'StartQuotaError';
  constructor(
    message: string,
    readonly quota: StartQuota,
    readonly status?: number,
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Owners' buckets kept at most; beyond, full buckets (owners idle for a minute) are forgotten first. */
const MAX_BUCKETS = 50_000;

/**
 * The start quotas of one replica. `checkDepth` and `childRun` are per run (the depth travels on the
 * event, the count with the execution); `takeStart` is the owner's bucket: capacity `startsPerMinute`,
 * refilled at `startsPerMinute` per minute. Per replica (in memory): with R replicas an owner may start
 * up to R × the rate; a refusal costs no database write.
 */
export class StartQuotas {
  readonly limits: StartQuotaLimits;
  private readonly buckets = new Map<string, Bucket>();
  constructor(
    limits: Partial<StartQuotaLimits> = {},
    private readonly now: () => number = Date.now,
    private readonly refused?: (ownerId: string, quota: StartQuota, message: string) => void,
  ) {
    this.limits = { ...DEFAULT_START_QUOTAS, ...limits };
  }

  /** Throws when a run at `depth` (its child would be at depth + 1) may start no other run. */
  checkDepth(ownerId: string, depth: number): void {
    if (depth + 1 <= this.limits.maxDepth) return;
    throw this.refuse(
      ownerId,
      new StartQuotaError(
        `workflows may start workflows at most ${this.limits.maxDepth} levels deep (RUN_WORKFLOW_MAX_DEPTH); this run is at depth ${depth}`,
        'depth',
      ),
    );
  }

  /** Throws when a run that started `started` child runs already may start no other. */
  checkChildRuns(ownerId: string, started: number): void {
    if (started < this.limits.maxChildRunsPerRun) return;
    throw this.refuse(
      ownerId,
      new StartQuotaError(
        `this run started ${started} child runs, the most one run may start (MAX_CHILD_RUNS_PER_RUN = ${this.limits.maxChildRunsPerRun})`,
        'child_runs_per_run',
      ),
    );
  }

  /** Takes one start from the owner's bucket; throws (429, Retry-After) when it is empty. */
  takeStart(ownerId: string): void {
    const rate = this.limits.startsPerMinute;
    const t = this.now();
    let b = this.buckets.get(ownerId);
    if (!b) {
      if (this.buckets.size >= MAX_BUCKETS) this.forgetFull(t);
      this.buckets.set(ownerId, (b = { tokens: rate, at: t }));
    } else {
      b.tokens = Math.min(rate, b.tokens + ((t - b.at) * rate) / 60_000);
      b.at = t;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return;
    }
    const retryAfter = Math.max(1, Math.ceil(((1 - b.tokens) * 60) / rate));
    throw this.refuse(
      ownerId,
      new StartQuotaError(
        `this owner's workflows started more than ${rate} runs in a minute (WORKFLOW_STARTS_PER_MINUTE); retry in ${retryAfter} s`,
        'starts_per_minute',
        429,
        String(retryAfter),
      ),
    );
  }

  /** Counts the refusal (metrics, the owner's usage) and hands the error back to throw. */
  private refuse(ownerId: string, err: StartQuotaError): StartQuotaError {
    this.refused?.(ownerId, err.quota, err.message);
    return err;
  }

  private forgetFull(t: number): void {
    const rate = this.limits.startsPerMinute;
    for (const [owner, b] of this.buckets) if (b.tokens + ((t - b.at) * rate) / 60_000 >= rate) this.buckets.delete(owner);
    if (this.buckets.size >= MAX_BUCKETS) this.buckets.clear();
  }
}
