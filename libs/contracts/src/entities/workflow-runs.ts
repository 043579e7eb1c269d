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
  },
  { $id: 'WorkflowRun' },
);
export type WorkflowRun = Static<typeof WorkflowRun>;

export const ListRunsQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(RunStatus) },
  { additionalProperties: false },
);
export type ListRunsQuery = Static<typeof ListRunsQuery>;
