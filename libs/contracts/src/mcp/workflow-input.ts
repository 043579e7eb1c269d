import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { TriggerType } from '../entities/workflows.ts';
import { NODE_TYPES, ON_ERROR, RetryPolicySchema } from '../nodes/index.ts';

/**
 * The workflow shapes as MCP tools take them. Strict tool schemas (OpenAI structured outputs, the
 * Agents SDK's strict mode) cannot express open objects, and listing every node type's params in the
 * schema grew tools/list with every type (create_workflow and update_workflow each carried them). So
 * a node's `params` is the JSON text of its params object, in the API's own shape (what get_workflow
 * returns), documented per type in the resource flowdesk://docs/workflow-nodes (generated from the
 * registry, ../nodes/docs.ts); workspace-api checks each type's params and its 400 names the field.
 * `triggerConfig` takes its one known key. workflowArgsToApi turns the tools' shapes into the API's.
 */
const strict = { additionalProperties: false } as const;
const NODE_ID = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';
const NodeId = (description: string) => Type.String({ pattern: NODE_ID, description });

/** The resource with every node type's params, branches and output (the tools' descriptions point to it). */
export const NODE_CATALOGUE_URI = 'flowdesk://docs/workflow-nodes';

/** The registry's retry policy with terse descriptions (tools/list has a token budget); same fields and limits. */
function McpRetry() {
  const p = RetryPolicySchema.properties;
  const d = (schema: object, description: string) => ({ ...schema, description });
  return Type.Object(
    {
      attempts: d(p.attempts, '1-10, first included.'),
      backoff: Type.Optional(d(p.backoff, 'Default exponential.')),
      delayMs: Type.Optional(d(p.delayMs, 'Default 1000.')),
      maxDelayMs: Type.Optional(d(p.maxDelayMs, 'Default 30000.')),
      jitter: Type.Optional(d(p.jitter, 'Default true.')),
      on: Type.Optional(d(p.on, 'Default all but any.')),
    } as unknown as typeof p,
    { ...strict, description: 'Retries (POST/PATCH only with Idempotency-Key).' },
  );
}

export const McpWorkflowNode = Type.Object(
  {
    id: NodeId('Unique node id.'),
    type: StringEnum(
      NODE_TYPES.map((d) => d.type),
      { description: 'Step kind.' },
    ),
    name: Type.Optional(Type.String({ maxLength: 200, description: 'Label.' })),
    onError: Type.Optional(
      StringEnum(ON_ERROR, { description: 'On failure: fail the run (default), continue with {error} as output, or take its error edges.' }),
    ),
    retry: Type.Optional(McpRetry()),
    params: Type.String({
      maxLength: 200_000,
      description: `JSON text of the type's params object, e.g. "{\\"title\\":\\"Call {{trigger.name}}\\"}"; each type's params: resource ${NODE_CATALOGUE_URI}.`,
    }),
  },
  strict,
);

/** An edge as the tools take it: the REST API's WorkflowEdge, each field described. */
const McpWorkflowEdge = Type.Object(
  {
    from: Type.Union([Type.Literal('trigger'), Type.String({ pattern: NODE_ID })], { description: '"trigger" or a node id.' }),
    to: NodeId('Node id.'),
    branch: Type.Optional(Type.String({ maxLength: 64, description: "A branch of the from node's type (condition: true/false), or error (onError: branch)." })),
  },
  strict,
);

export const McpWorkflowGraph = Type.Object(
  {
    nodes: Type.Array(McpWorkflowNode, { maxItems: 100, description: 'Steps.' }),
    edges: Type.Array(McpWorkflowEdge, { maxItems: 200, description: 'Connections.' }),
  },
  { ...strict, description: 'Nodes and edges; replaces the whole graph.' },
);

export const McpTriggerConfig = Type.Object(
  { signature: Type.Optional(StringEnum(['none', 'standard-webhooks'], { description: 'standard-webhooks: deliveries must be signed.' })) },
  { ...strict, description: 'Webhook options.' },
);

export const McpCreateWorkflow = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    triggerType: TriggerType,
    active: Type.Optional(Type.Boolean()),
    graph: Type.Optional(McpWorkflowGraph),
    triggerConfig: Type.Optional(McpTriggerConfig),
    requireWebhookSecret: Type.Optional(Type.Boolean()),
  },
  strict,
);

/** Refused tool arguments that the schema could not catch (params are not JSON); `field` names the place (empty: the message does). */
export class ToolArgumentError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(field ? `${field} ${message}` : message);
    this.name = 'ToolArgumentError';
  }
}

type Args = Record<string, unknown>;

/** create_workflow / update_workflow arguments → the workspace-api body (each node's params JSON text → the object). */
export function workflowArgsToApi(args: Args): Args {
  const graph = args.graph as { nodes: Args[]; edges: unknown[] } | undefined;
  if (!graph) return args;
  const nodes = graph.nodes.map((node, i) => {
    let params: unknown;
    try {
      params = JSON.parse(String(node.params));
    } catch {
      params = undefined;
    }
    if (params === null || typeof params !== 'object' || Array.isArray(params))
      throw new ToolArgumentError(
        `graph.nodes[${i}].params`,
        `must be the JSON text of an object (the params of ${String(node.type)}: see ${NODE_CATALOGUE_URI})`,
      );
    return { ...node, params };
  });
  return { ...args, graph: { ...graph, nodes } };
}
