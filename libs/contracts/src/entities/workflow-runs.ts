import Type, { type Static } from 'typebox';
import { DateTime, PageQuery, StringEnum, Uuid } from '../common.ts';
import { TriggerType } from '../trigger-types.ts';

/**
 * `cancelled`: stopped by a person (POST /workflow-runs/:id/cancel) while queued, running or waiting.
 * `waiting`: parked until a timer or a resume (durable runs, docs/workflow-engine.md); cancellable.
 */
export const RunStatus = StringEnum(['queued', 'running', 'waiting', 'succeeded', 'failed', 'skipped', 'cancelled']);
/** The statuses a run can still be cancelled in. */
export const CANCELLABLE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'waiting'];
export type RunStatus = Static<typeof RunStatus>;

export const RunStep = Type.Object({
  nodeId: Type.String(),
  type: Type.String(),
  /** `waiting`: the step parked its run (a Wait node, a long retry delay); it becomes succeeded when the run resumes. */
  status: StringEnum(['succeeded', 'failed', 'skipped', 'waiting']),
  input: Type.Unknown(),
  output: Type.Unknown(),
  error: Type.Union([Type.String(), Type.Null()]),
  startedAt: DateTime,
  durationMs: Type.Number(),
  /** Inside a For each's loop body: the position of the item this step ran for (0-based); absent elsewhere. */
  item: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Attempts made under the node's retry policy (docs/workflow-engine.md, "Retries"); absent: one. */
  attempts: Type.Optional(Type.Integer({ minimum: 1 })),
  /** The errors of the attempts before the last (at most 10, each cut at 500 characters); `error` is the last one's. */
  attemptErrors: Type.Optional(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 10 })),
  /** A `waiting` step parked until its next retry (a long delay): when it is tried again. */
  retryAt: Type.Optional(DateTime),
  /** The step is disabled (WorkflowNode.disabled): recorded `skipped`, not executed; its input passed on as its output. */
  disabled: Type.Optional(Type.Literal(true)),
});
export type RunStep = Static<typeof RunStep>;

export const WorkflowRun = Type.Object(
  {
    id: Uuid,
    workflowId: Uuid,
    eventId: Type.String(),
    status: RunStatus,
    triggerPayload: Type.Record(Type.String(), Type.Unknown()),
    steps: Type.Array(RunStep),
    warnings: Type.Array(Type.String()),
    error: Type.Union([Type.String(), Type.Null()]),
    createdAt: DateTime,
    startedAt: Type.Union([DateTime, Type.Null()]),
    finishedAt: Type.Union([DateTime, Type.Null()]),
    durationMs: Type.Union([Type.Number(), Type.Null()]),
    /** What started the run (TriggerEvent.source): `manual` for Run now and run again. */
    triggerType: TriggerType,
    /** The user who started the run by hand (run now, run again); null for runs of trigger events. */
    startedBy: Type.Optional(Type.Union([Uuid, Type.Null()])),
    /** The run this one repeats (POST /workflow-runs/:id/rerun), else null. */
    rerunOf: Type.Optional(Type.Union([Uuid, Type.Null()])),
    /**
     * The W3C trace id of the run's trace (webhook request → bus event → run → nodes,
     * docs/observability.md): look it up in Jaeger/Tempo. Null when tracing was off for the run.
     */
    traceId: Type.Optional(Type.Union([Type.String({ pattern: '^[0-9a-f]{32}$' }), Type.Null()])),
    /**
     * The workflow version the run ran (docs/workflow-versions.md; GET /workflows/:id/versions/:n): the
     * newest version when the engine took the run. Null for runs recorded before versions were carried
     * to the engine, and for a run not started yet (queued).
     */
    workflowVersion: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    /**
     * A `waiting` run's wait (docs/workflow-engine.md, "Parking"): the step that parked it, when its
     * timer fires (null: only a resume wakes it) and whether a resume URL or Approve / Reject wakes it.
     */
    wait: Type.Optional(
      Type.Union([Type.Object({ nodeId: Type.String(), until: Type.Union([DateTime, Type.Null()]), resumable: Type.Boolean() }), Type.Null()]),
    ),
  },
  { $id: 'WorkflowRun' },
);
export type WorkflowRun = Static<typeof WorkflowRun>;

export const ListRunsQuery = Type.Object({ ...PageQuery, status: Type.Optional(RunStatus) }, { additionalProperties: false });
export type ListRunsQuery = Static<typeof ListRunsQuery>;

/** GET /workflow-runs/summary: runs in a window (default the last 24 h), per workflow and in total. */
export const RunsSummaryQuery = Type.Object(
  { hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 24 * 30, default: 24 })) },
  { additionalProperties: false },
);
export const WorkflowRunsSummary = Type.Object({
  workflowId: Uuid,
  runs: Type.Integer(),
  failed: Type.Integer(),
  /** The workflow's newest run, of any age. */
  lastRun: Type.Union([Type.Object({ id: Uuid, status: RunStatus, createdAt: DateTime }), Type.Null()]),
});
export type WorkflowRunsSummary = Static<typeof WorkflowRunsSummary>;
export const RunsSummary = Type.Object(
  { since: DateTime, runs: Type.Integer(), failed: Type.Integer(), workflows: Type.Array(WorkflowRunsSummary) },
  { $id: 'RunsSummary' },
);
export type RunsSummary = Static<typeof RunsSummary>;

/**
 * GET /workflow-runs/health: the run pipeline as one user sees it (their workflows only), for the
 * console's Overview (docs/observability.md, "Pipeline health in the console"). A window of the last
 * hours (default 1).
 */
export const RunsHealthQuery = Type.Object({ hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 24, default: 1 })) }, { additionalProperties: false });
const count = Type.Integer({ minimum: 0 });
export const RunsHealth = Type.Object(
  {
    checkedAt: DateTime,
    /** The window's start: `byStatus`, `failingWorkflows` and `deadLettered` count runs created since. */
    since: DateTime,
    byStatus: Type.Object({ queued: count, running: count, succeeded: count, failed: count, skipped: count }),
    /** Workflows with failed runs in the window, most failures first (at most 10). */
    failingWorkflows: Type.Array(
      Type.Object({
        workflowId: Uuid,
        runs: count,
        failed: count,
        lastFailure: Type.Object({ runId: Uuid, at: DateTime, error: Type.Union([Type.String(), Type.Null()]) }),
      }),
    ),
    backlog: Type.Object({
      /**
       * Trigger events accepted for your workflows and not yet processed by the engine (in flight
       * included), each workflow counted up to 1000; null where the bus cannot count per workflow (Kafka:
       * see the consumer lag in Grafana instead).
       */
      waitingEvents: Type.Union([count, Type.Null()]),
      /** When the oldest of them was accepted; null when none waits (or the bus cannot tell). */
      oldestWaitingAt: Type.Union([DateTime, Type.Null()]),
      /** Runs queued or running now, of any age. */
      unfinishedRuns: count,
      oldestUnfinishedAt: Type.Union([DateTime, Type.Null()]),
    }),
    /** Trigger events the engine gave up on after its retries (dead-lettered), recorded as failed runs. */
    deadLettered: Type.Object({ count, last: Type.Union([Type.Object({ runId: Uuid, at: DateTime, error: Type.String() }), Type.Null()]) }),
  },
  { $id: 'RunsHealth' },
);
export type RunsHealth = Static<typeof RunsHealth>;

/** GET /workflow-runs/stream: Server-Sent Events of the user's runs, optionally of one workflow. */
export const RunStreamQuery = Type.Object({ workflowId: Type.Optional(Uuid) }, { additionalProperties: false });

/** The `data` of a `run` event of the stream: a run was queued, claimed or finished. */
export const RunStreamEvent = Type.Object({
  workflowId: Uuid,
  eventId: Type.String(),
  status: RunStatus,
  startedAt: Type.Union([DateTime, Type.Null()]),
  finishedAt: Type.Union([DateTime, Type.Null()]),
});
export type RunStreamEvent = Static<typeof RunStreamEvent>;

/** POST /workflows/:id/runs (Run now): the trigger data of a run started by hand. */
export const StartRun = Type.Union([
  Type.Object(
    {
      /** Available to the nodes as {{trigger.<path>}}, as a webhook's body is; default {}. */
      payload: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The run’s trigger data, as {{trigger.<path>}}.' })),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type StartRun = Static<typeof StartRun>;

/** How a parked run was woken (TriggerEvent.resume, the Wait node's `resumedBy`). */
export const RESUMED_BY = ['timer', 'resume', 'approve', 'reject', 'timeout'] as const;
export type ResumedBy = (typeof RESUMED_BY)[number];

/** POST /workflow-runs/:id/resume: Approve or Reject a run waiting for a resume (a Wait node in mode `resume`). */
export const ResumeRun = Type.Object(
  {
    action: StringEnum(['approve', 'reject']),
    /** Becomes the Wait node's `body` output. */
    body: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false, $id: 'ResumeRun' },
);
export type ResumeRun = Static<typeof ResumeRun>;
