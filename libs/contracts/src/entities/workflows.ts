import Type, { type Static } from 'typebox';
import { DateTime, PageQuery, SearchText, StringEnum, Tags, Uuid } from '../common.ts';
import { TriggerType } from '../trigger-types.ts';
import { ResponseMode } from '../webhook-reply.ts';
import { FormTriggerConfig } from '../forms.ts';
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
  /** Requests must carry x-webhook-secret equal to the trigger's secret (false for a signed trigger, which needs no header, and for a signature-gated graph). */
  requireSecret: Type.Boolean(),
  /**
   * How a delivery is authenticated: `standard-webhooks` (a webhook-signature with the trigger's secret,
   * no x-webhook-secret), `provider-signature` (the graph starts with Verify signature: the provider's
   * signature with a credential, checked by the workflow, no x-webhook-secret), `secret-header`
   * (x-webhook-secret), or `none` (anyone holding the URL).
   */
  authentication: StringEnum(['standard-webhooks', 'provider-signature', 'secret-header', 'none']),
});

/**
 * A graph whose every path starts with a Verify signature check (docs/webhooks.md, "Provider
 * signatures without x-webhook-secret"): the trigger has at least one edge, each to a
 * `verify_signature` node that fails the run on an error (no `onError`, or `fail`). Such a workflow
 * is authenticated by the provider's signature, keyed with a credential, over the raw body, so its
 * deliveries need no `x-webhook-secret`; what runs after the check is on the node's `true` branch.
 * The same rule is computed by Postgres for ingest's lookup (workspace-api migration
 * 20270301000000, `workspace.signature_gated`); a workspace-api test holds the two to one answer.
 */
export function signatureGated(graph: {
  nodes: readonly { id: string; type: string; onError?: string }[];
  edges: readonly { from: string; to: string }[];
}): boolean {
  const fromTrigger = graph.edges.filter((e) => e.from === 'trigger');
  if (fromTrigger.length === 0) return false;
  return fromTrigger.every((e) => graph.nodes.some((n) => n.id === e.to && n.type === 'verify_signature' && (n.onError === undefined || n.onError === 'fail')));
}

/**
 * A workflow's own run history retention (docs/operations.md, "Run history retention"): keep its
 * finished runs `days` days and/or its `runs` newest finished runs. A field left out follows the
 * engine's global setting (RUN_RETENTION_DAYS, RUN_RETENTION_PER_WORKFLOW); null: the global setting.
 */
export const WorkflowRetention = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'Keep finished runs this many days (1-3650)' })),
    runs: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Keep this many newest finished runs (1-1000000)' })),
  },
  { additionalProperties: false },
);
export type WorkflowRetention = Static<typeof WorkflowRetention>;

/**
 * Where a workflow's pinned sample came from (docs/console.md, "Pinned sample"): a recorded run's
 * trigger data (`delivery`), the template it was made from, JSON typed in the editor, or a workflow
 * file / n8n pinData (`import`).
 */
export const SampleSource = StringEnum(['delivery', 'template', 'typed', 'import']);
export type SampleSource = Static<typeof SampleSource>;

/** The longest sample that can be pinned, as JSON (UTF-8 bytes): 256 KiB. A larger one is 413. */
export const SAMPLE_PAYLOAD_MAX_BYTES = 256 * 1024;

/** A pinned sample's origin: while pinned, deliveries no longer replace `samplePayload`. */
export const SamplePin = Type.Object({
  source: SampleSource,
  pinnedAt: DateTime,
  /** The run whose trigger data was pinned (source `delivery`), else null. */
  runId: Type.Union([Uuid, Type.Null()]),
});
export type SamplePin = Static<typeof SamplePin>;

/** PUT /workflows/:id/sample: pins `payload` as the workflow's sample ({{trigger.…}} for previews, Run now, Run this step). */
export const PinSample = Type.Object(
  {
    payload: Type.Record(Type.String(), Type.Unknown(), { description: 'The trigger data to pin, a JSON object (at most 256 KiB as JSON).' }),
    source: Type.Optional(StringEnum(['delivery', 'template', 'typed'], { description: 'Where it comes from (default typed).' })),
    runId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
export type PinSample = Static<typeof PinSample>;

export const Workflow = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    /** Labels the owner files it under (the Workflows list's filter); not part of its definition (no version). */
    tags: Type.Array(Type.String()),
    triggerType: TriggerType,
    active: Type.Boolean(),
    graph: WorkflowGraph,
    triggerConfig: Type.Record(Type.String(), Type.Unknown()),
    executionOrder: ExecutionOrder,
    /** The workflow started when a run of this one fails (another workflow of the owner), else null. */
    errorWorkflowId: Type.Optional(Type.Union([Uuid, Type.Null()])),
    /** This workflow's run history retention; null: the engine's global setting. */
    retention: Type.Optional(Type.Union([WorkflowRetention, Type.Null()])),
    webhook: Type.Union([WebhookEndpoint, Type.Null()]),
    samplePayload: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    samplePayloadAt: Type.Union([DateTime, Type.Null()]),
    /** Set while `samplePayload` is pinned (deliveries do not replace it); null: it is the last delivery's. */
    samplePin: Type.Optional(Type.Union([SamplePin, Type.Null()])),
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
    tags: Type.Optional(Tags),
    triggerType: TriggerType,
    active: Type.Optional(Type.Boolean()),
    graph: Type.Optional(WorkflowGraph),
    triggerConfig: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    requireWebhookSecret: Type.Optional(Type.Boolean()),
    executionOrder: Type.Optional(ExecutionOrder),
    /** Another workflow of yours, started with {workflow, run, failedNode, error} when a run of this one fails; null: none. */
    errorWorkflowId: Type.Optional(Type.Union([Uuid, Type.Null()])),
    /** Run history kept for this workflow ({days?, runs?}); null: the global setting. */
    retention: Type.Optional(Type.Union([WorkflowRetention, Type.Null()])),
    /** A sample pinned at creation (a template's); PUT /workflows/:id/sample later. */
    sample: Type.Optional(PinSample),
  },
  { additionalProperties: false },
);
export type CreateWorkflow = Static<typeof CreateWorkflow>;

// A save never carries the sample: it is pinned on its own (PUT /workflows/:id/sample), not a definition change.
const { sample: _sample, ...updatable } = CreateWorkflow.properties;
export const UpdateWorkflow = Type.Partial(
  Type.Object({
    ...updatable,
    /** A note kept with the version this save makes (docs/workflow-versions.md). */
    versionMessage: Type.String({ minLength: 1, maxLength: 500 }),
  }),
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateWorkflow = Static<typeof UpdateWorkflow>;

/** Returned when a secret is created or regenerated, and by the reveal endpoint (write scope). */
export const WebhookSecret = Type.Object({ workflowId: Uuid, secret: Type.String(), url: Type.String() });
export type WebhookSecret = Static<typeof WebhookSecret>;

/**
 * A Standard Webhooks signing secret: `whsec_` and the base64 (or base64url) of 24 to 64 random bytes, as
 * Svix, Clerk, Resend and Flowdesk itself issue them (docs/webhooks.md, "A signing secret of the sender's choosing").
 */
export const SIGNING_SECRET_PATTERN = '^whsec_[A-Za-z0-9+/_-]{32,88}={0,2}$';
/** Whether a signing secret decodes to 24–64 bytes (the pattern bounds its characters, this its key). */
export function signingSecretProblem(secret: string): string | null {
  if (!new RegExp(SIGNING_SECRET_PATTERN).test(secret)) return 'A signing secret is whsec_ followed by base64 (the provider shows it as whsec_…)';
  const body = secret.slice('whsec_'.length).replace(/=+$/, '');
  const bytes = Math.floor((body.length * 3) / 4);
  if (bytes < 24 || bytes > 64) return 'A signing secret holds 24 to 64 bytes after whsec_';
  return null;
}

/** PUT /workflows/:id/webhook-secret: the trigger's secret becomes one the sender chose (Svix, Clerk, Resend…). */
export const SetWebhookSecret = Type.Object(
  { secret: Type.String({ minLength: 1, maxLength: 200, description: 'The whsec_… signing secret the sending system shows.' }) },
  { additionalProperties: false },
);
export type SetWebhookSecret = Static<typeof SetWebhookSecret>;
/** The answer to setting a secret: never the secret itself, only its last four characters. */
export const WebhookSecretSet = Type.Object({ workflowId: Uuid, url: Type.String(), secretEnding: Type.String() });
export type WebhookSecretSet = Static<typeof WebhookSecretSet>;

/**
 * The orders of the workflows list (docs/workspace-api.md, "Pagination"): `created` (newest first, the
 * default), `updated` (last changed first), `name` (A–Z). Each pages by keyset on its own key and the id.
 */
export const WORKFLOW_LIST_ORDERS = ['created', 'updated', 'name'] as const;
export type WorkflowListOrder = (typeof WORKFLOW_LIST_ORDERS)[number];

export const ListWorkflowsQuery = Type.Object(
  {
    ...PageQuery,
    active: Type.Optional(Type.Boolean()),
    triggerType: Type.Optional(TriggerType),
    q: Type.Optional(SearchText),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    sort: Type.Optional(StringEnum(WORKFLOW_LIST_ORDERS, { description: 'created (default), updated or name.' })),
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
  /** Publish the raw body with the event (a Verify signature node in the graph, or triggerConfig.rawBody); absent: no. */
  rawBody: Type.Optional(Type.Boolean()),
  /** triggerConfig.responseMode; absent: `immediately` (docs/webhooks.md, "Answering the caller"). */
  responseMode: Type.Optional(ResponseMode),
});
export type WebhookTriggerLookup = Static<typeof WebhookTriggerLookup>;

/**
 * What webhook-ingest learns about a workflow's hosted form (GET /internal/v1/form-triggers/:id of
 * workspace-api, for the webhook-ingest service only; docs/triggers.md, "Form"): 404 there for a
 * workflow that does not exist or has another trigger type.
 */
export const FormTriggerLookup = Type.Object({
  workflowId: Uuid,
  ownerId: Uuid,
  active: Type.Boolean(),
  /** `ordered`: ingest publishes the workflow's events with the bus's `ordered` flag. */
  executionOrder: Type.Optional(ExecutionOrder),
  /** The form as saved (triggerConfig, checked on save by formConfigProblem). */
  form: FormTriggerConfig,
});
export type FormTriggerLookup = Static<typeof FormTriggerLookup>;

/**
 * What one version of a workflow holds (docs/workflow-versions.md): the definition as saved, never the
 * webhook secret (not part of the definition) and never a credential's value (nodes name credentials).
 */
export const WorkflowVersionDefinition = Type.Object({
  name: Type.String(),
  description: Type.String(),
  triggerType: TriggerType,
  triggerConfig: Type.Record(Type.String(), Type.Unknown()),
  graph: WorkflowGraph,
  requireWebhookSecret: Type.Boolean(),
  executionOrder: ExecutionOrder,
  errorWorkflowId: Type.Union([Uuid, Type.Null()]),
  retention: Type.Union([WorkflowRetention, Type.Null()]),
});
export type WorkflowVersionDefinition = Static<typeof WorkflowVersionDefinition>;

/** A version in the history list: who saved it, when, with which message. */
export const WorkflowVersionSummary = Type.Object({
  workflowId: Uuid,
  number: Type.Integer({ minimum: 1 }),
  message: Type.Union([Type.String(), Type.Null()]),
  /** The user whose save it was, and the client (API key / OAuth client, MCP client, service) it came through, if any. */
  author: Type.Object({ userId: Uuid, client: Type.Union([Type.String(), Type.Null()]) }),
  createdAt: DateTime,
});
export type WorkflowVersionSummary = Static<typeof WorkflowVersionSummary>;

export const WorkflowVersion = Type.Object({ ...WorkflowVersionSummary.properties, definition: WorkflowVersionDefinition });
export type WorkflowVersion = Static<typeof WorkflowVersion>;

export const WorkflowVersionParams = Type.Object({ id: Uuid, n: Type.Integer({ minimum: 1 }) });
export const ListWorkflowVersionsQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
