import Type, { type Static } from 'typebox';
import { DateTime, PageQuery, SearchText, StringEnum, Uuid } from '../common.ts';
import { TriggerType } from '../trigger-types.ts';
import { ResponseMode } from '../webhook-reply.ts';
import { condition } from '../nodes/condition.ts';
import { createTask } from '../nodes/create-task.ts';
import { httpRequest } from '../nodes/http-request.ts';
import { BRANCH_NAMES, NodeId, nodeSchema, Position, WorkflowNode } from '../nodes/index.ts';

// Defined in the trigger registry; re-exported for the modules that read it with the workflow schemas.
export { TriggerType };

// The node types live in ../nodes/ (one module each, registered in nodes/index.ts); the graph's
// union is derived from that registry.
export const HttpRequestNode = nodeSchema(httpRequest);
export const CreateTaskNode = nodeSchema(createTask);
export const ConditionNode = nodeSchema(condition);

export const WorkflowEdge = Type.Object(
  {
    /** `trigger` is the start of every graph. */
    from: Type.Union([Type.Literal('trigger'), NodeId]),
    to: NodeId,
    /**
     * Only on edges leaving a node with branches (a condition's true/false, a switch's 1–4/default),
     * naming one of its own, or `error`: the path taken when a node with `onError: "branch"` fails
     * (nodes/define.ts).
     */
    branch: Type.Optional(StringEnum([...BRANCH_NAMES(), 'error'])),
  },
  { additionalProperties: false },
);
export type WorkflowEdge = Static<typeof WorkflowEdge>;

export const WorkflowGraph = Type.Object(
  {
    nodes: Type.Array(WorkflowNode, { maxItems: 100 }),
    edges: Type.Array(WorkflowEdge, { maxItems: 200 }),
    /** Where the editor draws the trigger node. */
    triggerPosition: Type.Optional(Position),
  },
  { additionalProperties: false },
);
export type WorkflowGraph = Static<typeof WorkflowGraph>;

/**
 * How one workflow's runs are scheduled: `parallel` (default) runs its deliveries concurrently, bounded
 * by the engine's per-workflow and per-engine limits; `ordered` runs them one at a time, in the order
 * they were accepted.
 */
export const ExecutionOrder = StringEnum(['parallel', 'ordered']);
export type ExecutionOrder = Static<typeof ExecutionOrder>;

/** A workflow's webhook endpoint as its owner sees it (Workflow.webhook; null for other trigger types). */
export const WebhookEndpoint = Type.Object({
  /** {PUBLIC_BASE_URL}/functions/v1/webhook-trigger/<workflow_id> */
  url: Type.String(),
  /** Requests must carry x-webhook-secret equal to the trigger's secret. */
  requireSecret: Type.Boolean(),
});

export const Workflow = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    triggerType: TriggerType,
    active: Type.Boolean(),
    graph: WorkflowGraph,
    triggerConfig: Type.Record(Type.String(), Type.Unknown()),
    executionOrder: ExecutionOrder,
    /** The workflow started when a run of this one fails (another workflow of the owner), else null. */
    errorWorkflowId: Type.Optional(Type.Union([Uuid, Type.Null()])),
    webhook: Type.Union([WebhookEndpoint, Type.Null()]),
    samplePayload: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    samplePayloadAt: Type.Union([DateTime, Type.Null()]),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Workflow' },
);
export type Workflow = Static<typeof Workflow>;

export const CreateWorkflow = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    triggerType: TriggerType,
    active: Type.Optional(Type.Boolean()),
    graph: Type.Optional(WorkflowGraph),
    triggerConfig: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    requireWebhookSecret: Type.Optional(Type.Boolean()),
    executionOrder: Type.Optional(ExecutionOrder),
    /** Another workflow of yours, started with {workflow, run, failedNode, error} when a run of this one fails; null: none. */
    errorWorkflowId: Type.Optional(Type.Union([Uuid, Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateWorkflow = Static<typeof CreateWorkflow>;

export const UpdateWorkflow = Type.Partial(CreateWorkflow, { additionalProperties: false, minProperties: 1 });
export type UpdateWorkflow = Static<typeof UpdateWorkflow>;

/** Returned when a secret is created or regenerated, and by the reveal endpoint (write scope). */
export const WebhookSecret = Type.Object({ workflowId: Uuid, secret: Type.String(), url: Type.String() });
export type WebhookSecret = Static<typeof WebhookSecret>;

export const ListWorkflowsQuery = Type.Object(
  {
    ...PageQuery,
    active: Type.Optional(Type.Boolean()),
    triggerType: Type.Optional(TriggerType),
    q: Type.Optional(SearchText),
  },
  { additionalProperties: false },
);
export type ListWorkflowsQuery = Static<typeof ListWorkflowsQuery>;

/** The answer to creating a workflow: the webhook secret is included once, for a webhook trigger. */
export const CreatedWorkflow = Type.Intersect([Workflow, Type.Object({ webhookSecret: Type.Union([Type.String(), Type.Null()]) })]);
export type CreatedWorkflow = Static<typeof CreatedWorkflow>;

/**
 * What webhook-ingest learns about a workflow's webhook trigger (GET /internal/v1/webhook-triggers/:id
 * of workspace-api, for the webhook-ingest service only). Signed deliveries are opted into with
 * `triggerConfig.signature: "standard-webhooks"`.
 */
export const WebhookTriggerLookup = Type.Object({
  workflowId: Uuid,
  ownerId: Uuid,
  active: Type.Boolean(),
  requireSecret: Type.Boolean(),
  signature: StringEnum(['none', 'standard-webhooks']),
  secret: Type.Union([Type.String(), Type.Null()]),
  /** `ordered`: ingest publishes the workflow's events with the bus's `ordered` flag. */
  executionOrder: Type.Optional(ExecutionOrder),
  /** Accepted deliveries per second for this workflow (triggerConfig.rateLimitPerSecond); absent: the ingest default. */
  rateLimitPerSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  /** triggerConfig.responseMode; absent: `immediately` (docs/webhooks.md, "Answering the caller"). */
  responseMode: Type.Optional(ResponseMode),
});
export type WebhookTriggerLookup = Static<typeof WebhookTriggerLookup>;
