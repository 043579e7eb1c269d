import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { ConditionOperator, HttpMethod, TriggerType, WorkflowEdge } from '../entities/workflows.ts';

/**
 * The workflow shapes as MCP tools take them. The REST API's graph has two open parts — an HTTP
 * node's `headers` (a map) and `body` (any JSON) — and `triggerConfig` is any object; strict tool
 * schemas (OpenAI structured outputs, the Agents SDK's strict mode) cannot express open objects. So
 * the tools take headers as a list of { name, value }, the body as JSON text, and triggerConfig with
 * its one known key; workflowArgsToApi turns them into the API's shapes. What get_workflow returns
 * is the API's shape.
 */
const strict = { additionalProperties: false } as const;
const NodeId = Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$' });
const tmpl = (maxLength: number, description: string) => Type.String({ maxLength, description });

/**
 * One node object for all node types (a union of objects with optional fields does not convert to
 * strict mode): `type` says which params apply; workspace-api checks each type's required params.
 */
export const McpWorkflowNode = Type.Object(
  {
    id: NodeId,
    type: StringEnum(['http_request', 'create_task', 'condition']),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    params: Type.Object(
      {
        method: Type.Optional(HttpMethod),
        url: Type.Optional(tmpl(2_000, 'http_request, required.')),
        headers: Type.Optional(
          Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), value: Type.String({ maxLength: 4_000 }) }, strict), {
            maxItems: 50,
            description: 'http_request.',
          }),
        ),
        body: Type.Optional(Type.String({ maxLength: 100_000, description: 'http_request: JSON text of the body.' })),
        timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
        title: Type.Optional(tmpl(500, 'create_task, required.')),
        projectId: Type.Optional(tmpl(200, 'create_task.')),
        dueDate: Type.Optional(tmpl(200, 'create_task.')),
        notes: Type.Optional(tmpl(20_000, 'create_task.')),
        left: Type.Optional(tmpl(2_000, 'condition, required.')),
        operator: Type.Optional(ConditionOperator),
        right: Type.Optional(tmpl(2_000, 'condition.')),
      },
      {
        ...strict,
        description:
          'http_request: method, url, headers, body, timeoutMs. create_task: title, projectId, dueDate, notes. condition: left, operator, right. Strings may hold {{trigger.x}} or {{nodes.<id>.body.x}}; put secrets in credentials (console Settings → Credentials) and write {{credentials.<name>}}, never the secret itself.',
      },
    ),
  },
  strict,
);

export const McpWorkflowGraph = Type.Object(
  {
    nodes: Type.Array(McpWorkflowNode, { maxItems: 100 }),
    edges: Type.Array(WorkflowEdge, { maxItems: 200, description: 'from "trigger" or a node id; branch "true"/"false" only after a condition.' }),
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
