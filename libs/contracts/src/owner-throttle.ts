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
 * GET /api/v1/workflow-runs/usage (the workflow engine): the caller's share of the engine, so the
 * console can show when and why its workflows are throttled. Counters are the answering replica's
 * since it started; `queued` is the owner's whole queue.
 */
export const OwnerUsage = Type.Object(
  {
    ownerId: Type.String({ format: 'uuid' }),
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
  },
  { additionalProperties: false },
);
export type OwnerUsage = Static<typeof OwnerUsage>;
