import Type, { type Static } from 'typebox';
import { DateTime, PageQuery, StringEnum, Uuid } from '../common.ts';

export const RunStatus = StringEnum(['queued', 'running', 'succeeded', 'failed', 'skipped']);
export type RunStatus = Static<typeof RunStatus>;

export const RunStep = Type.Object({
  nodeId: Type.String(),
  type: Type.String(),
  status: StringEnum(['succeeded', 'failed', 'skipped']),
  input: Type.Unknown(),
  output: Type.Unknown(),
  error: Type.Union([Type.String(), Type.Null()]),
  startedAt: DateTime,
  durationMs: Type.Number(),
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
    /** The user who started the run by hand (run again); null for runs of trigger events. */
    startedBy: Type.Optional(Type.Union([Uuid, Type.Null()])),
    /** The run this one repeats (POST /workflow-runs/:id/rerun), else null. */
    rerunOf: Type.Optional(Type.Union([Uuid, Type.Null()])),
  },
  { $id: 'WorkflowRun' },
);
export type WorkflowRun = Static<typeof WorkflowRun>;

export const ListRunsQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(RunStatus) },
  { additionalProperties: false },
);
export type ListRunsQuery = Static<typeof ListRunsQuery>;

/**
 * The workflow engine records a run (PUT /internal/v1/workflows/:id/runs/:eventId, as the workflow's
 * owner, engine only). The event id makes it idempotent: the first PUT creates the run, later ones
 * update it while it is unfinished; a finished run is never changed again.
 */
export const RecordRun = Type.Object(
  {
    status: RunStatus,
    triggerPayload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    steps: Type.Optional(Type.Array(RunStep)),
    warnings: Type.Optional(Type.Array(Type.String())),
    error: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    startedAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
    finishedAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
  },
  { additionalProperties: false },
);
export type RecordRun = Static<typeof RecordRun>;

export const RecordedRun = Type.Object({
  run: WorkflowRun,
  /** false when the run was already finished: the engine must not execute the event again. */
  changed: Type.Boolean(),
});
export type RecordedRun = Static<typeof RecordedRun>;

export const RunEventParams = Type.Object({ id: Uuid, eventId: Type.String({ minLength: 1, maxLength: 200 }) });

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
