import { DEFAULT_RETRY_PARK_MS, DEFAULT_RUN_LIMITS, type RunLimits } from './domain/executor.ts';
import { DEFAULT_RETENTION, type RetentionPolicy } from './domain/run-control.ts';
import { sandboxPoolOptionsFromEnv, type SandboxPoolOptions } from './adapters/sandbox-pool.ts';
import { DEFAULT_START_QUOTAS, type StartQuotaLimits } from './domain/quotas.ts';
import { DEFAULT_FAIRNESS, type FairnessLimits } from './domain/fairness.ts';

/**
 * How many runs a replica handles and how often it looks for schedule ticks (docs/configuration.md):
 * ENGINE_CONCURRENCY, ENGINE_WORKFLOW_CONCURRENCY, SCHEDULER_POLL_MS (0: this replica fires no
 * schedules), and how long run history is kept (RUN_RETENTION_*). Read by the service's main and by the embedded start alike.
 */
export interface EngineTuning {
  concurrency: number;
  workflowConcurrency: number;
  scheduler: { pollMs: number };
  /** Run history retention: RUN_RETENTION_DAYS, RUN_RETENTION_PER_WORKFLOW, RUN_RETENTION_INTERVAL_SECONDS. */
  retention: RetentionPolicy;
  /** Parked runs: WAIT_POLL_MS (default 10 s, a safety poll: notifications wake it; 0: this replica wakes no runs). */
  waits: { pollMs: number };
  /** RETRY_PARK_MS (default 5000): a retry delay at least this long parks the run. */
  retryParkMs: number;
  /** Per-run limits set by the environment: MAX_LOOP_ITEMS_PER_RUN (For each items per run). */
  limits: Partial<RunLimits>;
  /**
   * The sandbox's pool: ENGINE_SANDBOX_WORKERS, ENGINE_SANDBOX_OWNER_WORKERS, ENGINE_SANDBOX_BUDGET_MS_PER_MINUTE,
   * ENGINE_SANDBOX_PARK_AFTER_MS, ENGINE_SANDBOX_WORKER_HEAP_MB.
   */
  sandbox: Partial<SandboxPoolOptions>;
  /** Runs that start runs (docs/workflow-engine.md, "Limits"): RUN_WORKFLOW_MAX_DEPTH, MAX_CHILD_RUNS_PER_RUN, WORKFLOW_STARTS_PER_MINUTE. */
  quotas: StartQuotaLimits;
  /** Fairness across owners: ENGINE_OWNER_CONCURRENCY (default half of ENGINE_CONCURRENCY), ENGINE_OWNER_MAX_BACKLOG (default 1000; 0: intake never refuses). */
  fairness: Pick<FairnessLimits, 'ownerConcurrency' | 'maxBacklog'>;
  /** ENGINE_METRICS_TOP_OWNERS (opt-in: unset or 0, no per-owner series on /metrics; at most 100). */
  metricsTopOwners: number;
}

export const positiveInteger = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => {
  const v = Number(env[name] || fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
};

export function engineTuningFromEnv(env: NodeJS.ProcessEnv): EngineTuning {
  const concurrency = positiveInteger(env, 'ENGINE_CONCURRENCY', 256);
  const maxBacklog = env.ENGINE_OWNER_MAX_BACKLOG === '0' ? 0 : positiveInteger(env, 'ENGINE_OWNER_MAX_BACKLOG', DEFAULT_FAIRNESS.maxBacklog);
  return {
    concurrency,
    workflowConcurrency: positiveInteger(env, 'ENGINE_WORKFLOW_CONCURRENCY', 128),
    scheduler: { pollMs: env.SCHEDULER_POLL_MS === '0' ? 0 : positiveInteger(env, 'SCHEDULER_POLL_MS', 10_000) },
    waits: { pollMs: env.WAIT_POLL_MS === '0' ? 0 : positiveInteger(env, 'WAIT_POLL_MS', 10_000) },
    retryParkMs: positiveInteger(env, 'RETRY_PARK_MS', DEFAULT_RETRY_PARK_MS),
    retention: {
      ...DEFAULT_RETENTION,
      // 0 keeps runs of any age; unset keeps any number of runs per workflow.
      maxAgeDays: env.RUN_RETENTION_DAYS === '0' ? null : positiveInteger(env, 'RUN_RETENTION_DAYS', DEFAULT_RETENTION.maxAgeDays!),
      keepPerWorkflow: env.RUN_RETENTION_PER_WORKFLOW ? positiveInteger(env, 'RUN_RETENTION_PER_WORKFLOW', 1) : null,
      intervalMs: positiveInteger(env, 'RUN_RETENTION_INTERVAL_SECONDS', DEFAULT_RETENTION.intervalMs / 1000) * 1000,
    },
    limits: { maxLoopItemsPerRun: positiveInteger(env, 'MAX_LOOP_ITEMS_PER_RUN', DEFAULT_RUN_LIMITS.maxLoopItemsPerRun) },
    sandbox: sandboxPoolOptionsFromEnv(env),
    metricsTopOwners:
      !env.ENGINE_METRICS_TOP_OWNERS || env.ENGINE_METRICS_TOP_OWNERS === '0' ? 0 : Math.min(100, positiveInteger(env, 'ENGINE_METRICS_TOP_OWNERS', 1)),
    fairness: { ownerConcurrency: positiveInteger(env, 'ENGINE_OWNER_CONCURRENCY', Math.max(1, Math.floor(concurrency / 2))), maxBacklog },
    quotas: {
      maxDepth: positiveInteger(env, 'RUN_WORKFLOW_MAX_DEPTH', DEFAULT_START_QUOTAS.maxDepth),
      maxChildRunsPerRun: positiveInteger(env, 'MAX_CHILD_RUNS_PER_RUN', DEFAULT_START_QUOTAS.maxChildRunsPerRun),
      startsPerMinute: positiveInteger(env, 'WORKFLOW_STARTS_PER_MINUTE', DEFAULT_START_QUOTAS.startsPerMinute),
    },
  };
}
