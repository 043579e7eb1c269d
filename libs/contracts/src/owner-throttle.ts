import Type, { type Static } from 'typebox';

/**
 * Fairness across owners (docs/workflow-engine.md, "Fairness across owners"): the engine tells intake
 * which owners' backlog passed their share. While `throttled` and before `until`, webhook-ingest
 * answers that owner's workflows 429 with `Retry-After: retryAfterSeconds` (the time the owner's queue
 * needs to drain under the bound at its measured rate); others' are not affected. The engine refreshes
 * a throttle while it lasts, so a lost "lifted" event or a stopped engine lets it lapse at `until`.
 * Keyed by owner id; the latest event of an owner wins.
 */
export const OWNER_THROTTLE_TOPIC = 'workflow.owner-throttle.v1';

export const OwnerThrottle = Type.Object(
  {
    ownerId: Type.String({ format: 'uuid' }),
    throttled: Type.Boolean(),
    /** The owner's queued runs when this was decided. */
    backlog: Type.Integer({ minimum: 0 }),
    retryAfterSeconds: Type.Integer({ minimum: 0, maximum: 3600 }),
    /** When intake stops applying it without a newer event (ISO 8601). */
    until: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type OwnerThrottle = Static<typeof OwnerThrottle>;

/**
 * Why an owner's runs are held back now:
 * - `backlog`: the owner's queue passed ENGINE_OWNER_MAX_BACKLOG, intake answers its webhooks 429;
 * - `in_flight`: the owner is at its cap of runs in flight (ENGINE_OWNER_CONCURRENCY), new events queue;
 * - `sandbox_budget`: the owner used its sandbox time for the minute (ENGINE_SANDBOX_BUDGET_MS_PER_MINUTE),
 *   its Code steps and expressions wait.
 */
export const ThrottleReason = Type.Union([Type.Literal('backlog'), Type.Literal('in_flight'), Type.Literal('sandbox_budget')]);
export type ThrottleReason = Static<typeof ThrottleReason>;

export const ThrottleState = Type.Object(
  {
    reason: ThrottleReason,
    /** The limit's setting (an environment variable of the engine, docs/workflow-engine.md "Limits"). */
    setting: Type.String(),
    /** A sentence for a person: what is held back and why. */
    message: Type.String(),
    /** When it is expected to ease, in seconds from `checkedAt` (null: when runs in flight end). */
    retryAfterSeconds: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  },
  { additionalProperties: false },
);
export type ThrottleState = Static<typeof ThrottleState>;

/** A start of a run by a run that a quota refused (domain/quotas.ts). */
export const StartRefusal = Type.Object(
  {
    at: Type.String({ format: 'date-time' }),
    /** depth, child_runs_per_run or starts_per_minute. */
    quota: Type.String(),
    /** The limit's setting: RUN_WORKFLOW_MAX_DEPTH, MAX_CHILD_RUNS_PER_RUN or WORKFLOW_STARTS_PER_MINUTE. */
    setting: Type.String(),
    /** The error the step failed with (it names the limit). */
    message: Type.String({ maxLength: 1000 }),
  },
  { additionalProperties: false },
);
export type StartRefusal = Static<typeof StartRefusal>;
/** Refusals kept per owner for the usage API. */
export const RECENT_REFUSALS = 20;

/** An owner's sandbox time (Code steps, sandboxed expressions) on the answering replica. */
export const OwnerSandboxUsage = Type.Object(
  {
    /** Sandbox time used in the last minute (of the budget's token bucket), ms. */
    usedMsPerMinute: Type.Integer({ minimum: 0 }),
    budgetMsPerMinute: Type.Integer({ minimum: 1 }),
    /** Sandbox time since the replica started, ms. */
    totalMs: Type.Integer({ minimum: 0 }),
    jobs: Type.Integer({ minimum: 0 }),
    /** Jobs stopped at their time limit, and jobs whose worker ran out of memory. */
    timeouts: Type.Integer({ minimum: 0 }),
    memoryKills: Type.Integer({ minimum: 0 }),
    /** Jobs waiting now (for a worker, or for the budget). */
    waiting: Type.Integer({ minimum: 0 }),
    /** Past the budget now: jobs wait until it refills. */
    overBudget: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type OwnerSandboxUsage = Static<typeof OwnerSandboxUsage>;

/** One workflow's throttle state: its runs wait in the owner's queue. */
export const WorkflowThrottle = Type.Object(
  {
    workflowId: Type.String({ format: 'uuid' }),
    /** Its runs waiting in the owner's queue. */
    queued: Type.Integer({ minimum: 0 }),
    /** backlog when the owner's webhooks are refused (429), else in_flight. */
    reason: ThrottleReason,
    retryAfterSeconds: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  },
  { additionalProperties: false },
);
export type WorkflowThrottle = Static<typeof WorkflowThrottle>;

/**
 * GET /api/v1/workflow-runs/usage (the workflow engine): the caller's share of the engine, so the
 * console can show when and why its workflows are throttled. Counters are the answering replica's
 * since it started; `queued` is the owner's whole queue.
 */
export const OwnerUsage = Type.Object(
  {
    ownerId: Type.String({ format: 'uuid' }),
    /** When the answering replica read this (ISO 8601): retryAfterSeconds count from here. */
    checkedAt: Type.String({ format: 'date-time' }),
    /** Runs started by the answering replica (delivered under the cap, or from the queue). */
    runs: Type.Integer({ minimum: 0 }),
    /** Trigger events that found the owner at its in-flight cap and were queued. */
    throttled: Type.Integer({ minimum: 0 }),
    /** Starts of runs by runs that a quota refused, by quota (depth, child_runs_per_run, starts_per_minute). */
    refused: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
    inFlight: Type.Integer({ minimum: 0 }),
    ownerConcurrency: Type.Integer({ minimum: 1 }),
    queued: Type.Integer({ minimum: 0 }),
    maxBacklog: Type.Integer({ minimum: 0 }),
    /** Intake answers this owner's webhooks 429 while true. */
    intakeThrottled: Type.Boolean(),
    retryAfterSeconds: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    /** Runs that ended on the answering replica (started ones still going are `runs − runsFinished`). */
    runsFinished: Type.Integer({ minimum: 0 }),
    sandbox: OwnerSandboxUsage,
    /** Whether the owner is throttled now, and every reason (none when not). */
    throttle: Type.Object({ active: Type.Boolean(), reasons: Type.Array(ThrottleState, { maxItems: 3 }) }, { additionalProperties: false }),
    /** The owner's latest refused starts on the answering replica, newest first. */
    recentRefusals: Type.Array(StartRefusal, { maxItems: RECENT_REFUSALS }),
    /** The owner's workflows with runs waiting in the queue (at most 100, the longest queues first). */
    workflows: Type.Array(WorkflowThrottle, { maxItems: 100 }),
  },
  { additionalProperties: false },
);
export type OwnerUsage = Static<typeof OwnerUsage>;
