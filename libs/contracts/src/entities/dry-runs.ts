import Type, { type Static } from 'typebox';
import { StringEnum } from '../common.ts';
import { WorkflowGraph } from './workflows.ts';

/**
 * POST /workflows/:id/dry-run (docs/workflow-engine.md, "Dry run"): the editor's graph (saved or
 * not) walked on a sample to fill later steps' previews and the variable picker. Only steps that
 * change nothing execute; an action (a node whose registry definition has `action: true`: HTTP
 * Request, Send Email, Create Task, …), a Wait and a Verify signature are not executed.
 */
export const DryRun = Type.Object(
  {
    graph: WorkflowGraph,
    /** `{{trigger.…}}`: the workflow's sample (default {}). */
    payload: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The trigger data, as {{trigger.<path>}}.' })),
    /** What a step that is not executed stands for ({{nodes.<id>.…}}), by node id: the console sends the last run's outputs. */
    assumed: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
        maxProperties: 100,
        description: 'Outputs to assume for the steps a dry run does not execute (actions), by node id.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DryRun = Static<typeof DryRun>;

/**
 * One step of a dry run. `not_run`: not executed (an action; a Wait, which would park; a Verify
 * signature, a sample having no signed bytes): `output` is the assumed one (or null when none was
 * given: unknown) and the walk goes on past it (a Wait as resumed, a Verify signature as valid).
 */
export const DryRunStep = Type.Object({
  nodeId: Type.String(),
  type: Type.String(),
  status: StringEnum(['succeeded', 'failed', 'skipped', 'not_run']),
  output: Type.Unknown(),
  error: Type.Union([Type.String(), Type.Null()]),
  /** The branch taken (Condition, Switch, `error`), else absent. */
  branch: Type.Optional(Type.String()),
  /** Inside a For each's loop body: the item's position (0-based). */
  item: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type DryRunStep = Static<typeof DryRunStep>;

export const DryRunResult = Type.Object(
  {
    steps: Type.Array(DryRunStep),
    warnings: Type.Array(Type.String()),
    /** Why the walk stopped early (the time limit, a limit of the run), else null. */
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'DryRunResult' },
);
export type DryRunResult = Static<typeof DryRunResult>;

/** Dry runs per owner: at most this many in DRY_RUN_RATE_WINDOW_MS (429 with Retry-After beyond); the editor runs one per change, debounced. */
export const DRY_RUN_RATE_LIMIT = 30;
export const DRY_RUN_RATE_WINDOW_MS = 60_000;
/** A dry run answers within this (ms): the walk stops at the next step after it, and answers what it has. */
export const DRY_RUN_TIMEOUT_MS = 10_000;
