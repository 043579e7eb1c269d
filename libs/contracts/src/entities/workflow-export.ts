/**
 * A workflow as a file (docs/workflow-export.md): `GET /workflows/:id/export` answers it and
 * `POST /workflows/import` takes it. One JSON document, `format` "flowdesk.workflow" and
 * `formatVersion` 1, holding what makes the workflow (graph with its layout, trigger settings, retry and
 * error settings, retention, the pinned sample) and never a secret: credentials are named, their values
 * stay where they are; inline secrets in HTTP Request nodes are masked (workflow-secrets.ts); the
 * webhook secret is not part of it (an imported webhook workflow gets its own URL and secret).
 *
 * `WorkflowExport` is the file's JSON Schema (TypeBox schemas are JSON Schema; the OpenAPI document
 * carries it as the export's answer). The import's body is the same document read leniently
 * (`WorkflowImportBody`): a node of a type this server does not know, a format version it does not
 * read, are answered with reasons rather than a bare schema error.
 */
import Type, { type Static } from 'typebox';
import { DateTime, StringEnum, Tags, Uuid } from '../common.ts';
import { TriggerType } from '../trigger-types.ts';
import { NodeId, Position } from '../nodes/index.ts';
import { CreatedWorkflow, ExecutionOrder, WorkflowEdge, WorkflowGraph, WorkflowRetention } from './workflows.ts';

export const WORKFLOW_EXPORT_FORMAT = 'flowdesk.workflow';
/** Raised when a change to the file could be misread by a server reading an older one. */
export const WORKFLOW_EXPORT_FORMAT_VERSION = 1;
/** The largest file `POST /workflows/import` takes (bytes of the request body); larger is 413. */
export const WORKFLOW_IMPORT_MAX_BYTES = 1024 * 1024;

/** The file name of a workflow's export: its name in safe characters, `.flowdesk.json`. */
export const workflowFileName = (name: string) =>
  `${
    name
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'workflow'
  }.flowdesk.json`;

/** The credentials a workflow's steps use, by name: where it is imported, credentials of these names are used. */
export const WorkflowCredentialUse = Type.Object(
  {
    name: Type.String({ maxLength: 200 }),
    /** The steps naming it. */
    nodeIds: Type.Array(NodeId, { maxItems: 100 }),
  },
  { additionalProperties: false },
);
export type WorkflowCredentialUse = Static<typeof WorkflowCredentialUse>;

const SamplePayload = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
  description: 'The pinned sample trigger data the editor shows ({{trigger.…}}), or null',
});

const exportedWorkflow = (graph: typeof WorkflowGraph | typeof LenientGraph) =>
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      description: Type.String({ maxLength: 10_000 }),
      /** The workflow's tags (absent: none; left out of a file of a workflow without tags, which older servers read). */
      tags: Type.Optional(Tags),
      triggerType: TriggerType,
      triggerConfig: Type.Record(Type.String(), Type.Unknown()),
      /** Nodes (params, retry and error settings, positions), edges and the trigger's position. */
      graph,
      requireWebhookSecret: Type.Boolean(),
      executionOrder: ExecutionOrder,
      /** The workflow started when a run fails: kept on import only if the importer has a workflow of that id. */
      errorWorkflowId: Type.Union([Uuid, Type.Null()]),
      retention: Type.Union([WorkflowRetention, Type.Null()]),
      samplePayload: SamplePayload,
    },
    { additionalProperties: false },
  );

/** A graph whose nodes are read by their id and type only: each is checked against its type on import. */
const LenientGraph = Type.Object(
  {
    nodes: Type.Array(
      Type.Object(
        { id: NodeId, type: Type.String({ minLength: 1, maxLength: 100 }) },
        { additionalProperties: true, description: 'A node (checked against its type)' },
      ),
      { maxItems: 100 },
    ),
    edges: Type.Array(WorkflowEdge, { maxItems: 200 }),
    triggerPosition: Type.Optional(Position),
  },
  { additionalProperties: false },
);

export const WorkflowExport = Type.Object(
  {
    format: Type.Literal(WORKFLOW_EXPORT_FORMAT),
    formatVersion: Type.Literal(WORKFLOW_EXPORT_FORMAT_VERSION),
    exportedAt: DateTime,
    workflow: exportedWorkflow(WorkflowGraph),
    /** Every credential the steps name (`{{credentials.<name>}}`, Verify signature's credential), never a value. */
    credentials: Type.Array(WorkflowCredentialUse, { maxItems: 200 }),
  },
  { $id: 'WorkflowExport', additionalProperties: false, description: 'A Flowdesk workflow file (docs/workflow-export.md)' },
);
export type WorkflowExport = Static<typeof WorkflowExport>;

/** POST /workflows/import's body: a WorkflowExport, with `format`, `formatVersion` and the nodes checked by the handler (clear reasons). */
export const WorkflowImportBody = Type.Object(
  {
    format: Type.String({ maxLength: 100 }),
    formatVersion: Type.Integer(),
    exportedAt: Type.Optional(Type.String({ maxLength: 100 })),
    workflow: exportedWorkflow(LenientGraph),
    credentials: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 200 })),
  },
  { additionalProperties: false },
);
export type WorkflowImportBody = Static<typeof WorkflowImportBody>;

/** What an import could not take as it was, per step (`nodeId`) or for the workflow (`nodeId` null). */
export const WorkflowImportProblem = Type.Object({
  nodeId: Type.Union([Type.String(), Type.Null()]),
  /** `left_out`: the step (or setting) is not in the new workflow; `needs_attention`: it is, but needs a change before it can run. */
  kind: StringEnum(['left_out', 'needs_attention']),
  message: Type.String(),
});
export type WorkflowImportProblem = Static<typeof WorkflowImportProblem>;

/** The answer to an import: the new workflow (always inactive; a webhook trigger's new secret shown once), and what needs a look. */
export const WorkflowImportResult = Type.Object({
  workflow: CreatedWorkflow,
  problems: Type.Array(WorkflowImportProblem),
  /**
   * The credentials its steps name. workspace-api does not hold credentials (the engine does), so it
   * cannot tell which exist: compare with GET /credentials (the console lists the missing ones).
   */
  credentials: Type.Array(WorkflowCredentialUse),
});
export type WorkflowImportResult = Static<typeof WorkflowImportResult>;
