import Type, { type TSchema } from 'typebox';
import { StringEnum, Tags } from '../common.ts';
import { TriggerType } from '../entities/workflows.ts';
import { ON_ERROR } from '../nodes/index.ts';

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

/**
 * A node as the tools take it. Both create_workflow and update_workflow take the node's type as text
 * (workspace-api refuses an unknown one, naming it, and the catalogue resource lists them): an enum
 * grows with every node type and cost ~90 tokens in each tool of tools/list's 10,000 budget.
 */
const workflowNode = <T extends TSchema>(type: T) =>
  Type.Object(
    {
      id: NodeId('Unique node id, e.g. n1.'),
      type,
      name: Type.Optional(Type.String({ maxLength: 200, description: 'Label.' })),
      onError: Type.Optional(StringEnum(ON_ERROR, { description: 'On failure: fail (default), continue with {error}, or take error edges.' })),
      // JSON text like params (the catalogue resource lists its fields): a structured retry object cost
      // 170 tokens in each of create_workflow and update_workflow.
      retry: Type.Optional(Type.String({ maxLength: 2_000, description: `JSON text of its retry policy (resource ${NODE_CATALOGUE_URI}).` })),
      disabled: Type.Optional(Type.Boolean({ description: 'Runs skip it, passing its input on.' })),
      params: Type.String({
        maxLength: 200_000,
        description: `JSON text of its params (resource ${NODE_CATALOGUE_URI}).`,
      }),
    },
    strict,
  );

export const McpWorkflowNode = workflowNode(Type.String({ maxLength: 64, description: 'Node type.' }));

/** An edge as the tools take it: the REST API's WorkflowEdge, each field described. */
const McpWorkflowEdge = Type.Object(
  {
    // Ids are checked on save (workspace-api names the edge); the pattern is said once, on the node's id.
    from: Type.String({ maxLength: 64, description: '"trigger" or a node id.' }),
    to: Type.String({ maxLength: 64, description: 'Node id.' }),
    branch: Type.Optional(Type.String({ maxLength: 64, description: 'A branch of the from node (true/false…), or error.' })),
  },
  strict,
);

const workflowGraph = <T extends TSchema>(node: T) =>
  Type.Object(
    {
      nodes: Type.Array(node, { maxItems: 100, description: 'Steps.' }),
      edges: Type.Array(McpWorkflowEdge, { maxItems: 200, description: 'Connections.' }),
    },
    { ...strict, description: 'Nodes and edges; replaces the whole graph.' },
  );

export const McpWorkflowGraph = workflowGraph(McpWorkflowNode);
/** update_workflow's graph: the same as create_workflow's. */
export const McpUpdateWorkflowGraph = McpWorkflowGraph;

export const McpTriggerConfig = Type.Object(
  { signature: Type.Optional(StringEnum(['none', 'standard-webhooks'], { description: 'standard-webhooks: deliveries must be signed.' })) },
  { ...strict, description: 'Webhook options.' },
);

export const McpCreateWorkflow = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    tags: Type.Optional(Tags),
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

/** create_workflow / update_workflow arguments → the workspace-api body (each node's params and retry JSON text → the objects). */
export function workflowArgsToApi(args: Args): Args {
  const graph = args.graph as { nodes: Args[]; edges: unknown[] } | undefined;
  if (!graph) return args;
  const nodes = graph.nodes.map((node, i) => {
    const params = jsonObject(node.params, `graph.nodes[${i}].params`, `the params of ${String(node.type)}`);
    if (node.retry === undefined) return { ...node, params };
    return { ...node, params, retry: jsonObject(node.retry, `graph.nodes[${i}].retry`, 'a retry policy') };
  });
  return { ...args, graph: { ...graph, nodes } };
}

/** The object a JSON text field holds; a ToolArgumentError naming the field otherwise. */
function jsonObject(text: unknown, field: string, what: string): Args {
  let value: unknown;
  try {
    value = JSON.parse(String(text));
  } catch {
    value = undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ToolArgumentError(field, `must be the JSON text of an object (${what}: see ${NODE_CATALOGUE_URI})`);
  return value as Args;
}
