import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { ConditionOperator, HttpMethod, TriggerType } from '../entities/workflows.ts';

/**
 * The workflow shapes as MCP tools take them. The REST API's graph has two open parts — an HTTP
 * node's `headers` (a map) and `body` (any JSON) — and `triggerConfig` is any object; strict tool
 * schemas (OpenAI structured outputs, the Agents SDK's strict mode) cannot express open objects. So
 * the tools take headers as a list of { name, value }, the body as JSON text, and triggerConfig with
 * its one known key; workflowArgsToApi turns them into the API's shapes. What get_workflow returns
 * is the API's shape.
 */
const strict = { additionalProperties: false } as const;
const NODE_ID = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';
const NodeId = (description: string) => Type.String({ pattern: NODE_ID, description });
const tmpl = (maxLength: number, description: string) => Type.String({ maxLength, description });

/**
 * One node object for all node types (a union of objects with optional fields does not convert to
 * strict mode): `type` says which params apply; workspace-api checks each type's required params.
 */
export const McpWorkflowNode = Type.Object(
  {
    id: NodeId('Unique node id.'),
    type: StringEnum(['http_request', 'create_task', 'condition'], { description: 'Step kind.' }),
    name: Type.Optional(Type.String({ maxLength: 200, description: 'Label.' })),
    params: Type.Object(
      {
        method: Type.Optional({ ...HttpMethod, description: 'http_request.' }),
        url: Type.Optional(tmpl(2_000, 'http_request, required.')),
        headers: Type.Optional(
          Type.Array(
            Type.Object(
              {
                name: Type.String({ minLength: 1, maxLength: 200, description: 'Header name.' }),
                value: Type.String({ maxLength: 4_000, description: 'Header value.' }),
              },
              strict,
            ),
            { maxItems: 50, description: 'http_request.' },
          ),
        ),
        body: Type.Optional(Type.String({ maxLength: 100_000, description: 'http_request: JSON text of the body.' })),
        timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000, description: 'http_request.' })),
        title: Type.Optional(tmpl(500, 'create_task, required.')),
        projectId: Type.Optional(tmpl(200, 'create_task.')),
        dueDate: Type.Optional(tmpl(200, 'create_task.')),
        notes: Type.Optional(tmpl(20_000, 'create_task.')),
        left: Type.Optional(tmpl(2_000, 'condition, required.')),
        operator: Type.Optional({ ...ConditionOperator, description: 'condition, required.' }),
        right: Type.Optional(tmpl(2_000, 'condition.')),
      },
      {
        ...strict,
        description:
          "The type's params (each says which). Strings may hold {{trigger.x}} or {{nodes.<id>.body.x}}; put secrets in credentials (console Settings → Credentials) and write {{credentials.<name>}}, never the secret itself.",
      },
    ),
  },
  strict,
);

/** An edge as the tools take it: the REST API's WorkflowEdge, each field described. */
const McpWorkflowEdge = Type.Object(
  {
    from: Type.Union([Type.Literal('trigger'), Type.String({ pattern: NODE_ID })], { description: '"trigger" or a node id.' }),
    to: NodeId('Node id.'),
    branch: Type.Optional(StringEnum(['true', 'false'], { description: 'Only after a condition.' })),
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

/** Refused tool arguments that the schema could not catch (the body is not JSON); `field` names the place. */
export class ToolArgumentError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field} ${message}`);
    this.name = 'ToolArgumentError';
  }
}

type Args = Record<string, unknown>;

/** create_workflow / update_workflow arguments → the workspace-api body (headers map, parsed body). */
export function workflowArgsToApi(args: Args): Args {
  const graph = args.graph as { nodes: Args[]; edges: unknown[] } | undefined;
  if (!graph) return args;
  const nodes = graph.nodes.map((node, i) => {
    if (node.type !== 'http_request') return node;
    const params = { ...(node.params as Args) };
    const at = `graph.nodes[${i}].params`;
    if (params.headers !== undefined) {
      params.headers = Object.fromEntries((params.headers as { name: string; value: string }[]).map((h) => [h.name, h.value]));
    }
    if (params.body !== undefined) {
      try {
        params.body = JSON.parse(params.body as string);
      } catch {
        throw new ToolArgumentError(`${at}.body`, 'must be JSON text, e.g. "{\\"text\\": \\"{{trigger.message}}\\"}"');
      }
    }
    return { ...node, params };
  });
  return { ...args, graph: { ...graph, nodes } };
}
