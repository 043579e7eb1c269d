import Type, { type Static } from 'typebox';
import { WorkflowNode } from '../nodes/index.ts';
import { RunStep } from './workflow-runs.ts';

/** At most this many earlier nodes' outputs in one step test (a graph holds at most 100 nodes). */
export const STEP_TEST_MAX_NODES = 100;

/**
 * POST /workflows/:id/test-step (Run this step, docs/workflow-engine.md): one node, as the editor
 * holds it (saved or not), run once against a sample. Nothing is recorded; the workflow may be
 * inactive. Side-effecting nodes (HTTP Request, Create Task) do their work for real.
 */
export const TestStep = Type.Object(
  {
    node: WorkflowNode,
    /** `{{trigger.…}}`: the workflow's sample payload (default {}). */
    payload: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The trigger data, as {{trigger.<path>}}.' })),
    /** `{{nodes.<id>.…}}`: earlier nodes' outputs (from the last run, or nothing), by node id. */
    nodes: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
        maxProperties: STEP_TEST_MAX_NODES,
        description: 'Earlier nodes’ outputs by node id, as {{nodes.<id>.<path>}}.',
      }),
    ),
    /** A step of a For each body: the item and its position it is tried with. */
    item: Type.Optional(Type.Unknown({ description: 'Inside a For each body: the item, as {{item}} (default: none).' })),
    index: Type.Optional(Type.Integer({ minimum: 0, description: 'Inside a For each body: the position, as {{index}} (default 0 with an item).' })),
  },
  { additionalProperties: false },
);
export type TestStep = Static<typeof TestStep>;

/** The step as a run would record it (input as masked, output or error), and the run's warnings about it. */
export const StepTestResult = Type.Object(
  {
    step: RunStep,
    /** The branch a node with branches took (condition, switch, `error`), else absent. */
    branch: Type.Optional(Type.String()),
    warnings: Type.Array(Type.String()),
  },
  { $id: 'StepTestResult' },
);
export type StepTestResult = Static<typeof StepTestResult>;

/** Step tests per owner: at most this many in STEP_TEST_RATE_WINDOW_MS (429 with Retry-After beyond). */
export const STEP_TEST_RATE_LIMIT = 20;
export const STEP_TEST_RATE_WINDOW_MS = 60_000;
/** Recorded step tests are kept this many days. */
export const STEP_TEST_RETENTION_DAYS = 30;

/** One recorded step test (GET /workflows/:id/step-tests): what ran in the owner's name, newest first. */
export const StepTestEntry = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    workflowId: Type.String({ format: 'uuid' }),
    nodeId: Type.String(),
    nodeType: Type.String(),
    status: Type.String({ description: "The step's status: succeeded, failed, …" }),
    error: Type.Union([Type.String(), Type.Null()]),
    /** HTTP Request: `POST https://…` as recorded (secrets masked); null for other nodes. */
    request: Type.Union([Type.String(), Type.Null()]),
    durationMs: Type.Integer(),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'StepTestEntry' },
);
export type StepTestEntry = Static<typeof StepTestEntry>;
