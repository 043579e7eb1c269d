import Type, { type TSchema } from 'typebox';
import { StringEnum } from '../common.ts';
import { TriggerType } from '../entities/workflows.ts';
import { NODE_TYPES, nodeDefinition, type AnyNodeDefinition, type FieldHint } from '../nodes/index.ts';

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

/**
 * One node object for all node types (a union of objects with optional fields does not convert to
 * strict mode): `type` says which params apply; workspace-api checks each type's required params.
 * Derived from the node registry (../nodes/): each param once, described with the types it belongs
 * to; a param whose API schema is not strict takes its hint's `mcp` form.
 */
function mcpParams(): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  const owners: Record<string, string[]> = {};
  for (const definition of NODE_TYPES as readonly AnyNodeDefinition[]) {
    const required = new Set((definition.params as { required?: string[] }).required ?? []);
    for (const [key, schema] of Object.entries(definition.params.properties as Record<string, TSchema>)) {
      const hint = (definition.fields as Record<string, FieldHint>)[key]!;
      if (hint.mcp === false) continue;
      const own = `${definition.type}${required.has(key) ? ', required' : ''}`;
      // A templated string's maxLength is left to workspace-api (its 400 names the field): tools/list
      // stays under its 10,000-token budget as node types are added.
      const { maxLength: _limit, ...open } = schema as TSchema & { maxLength?: number };
      const mcp = hint.mcp ? { ...hint.mcp.schema, description: hint.mcp.description } : { ...(hint.template ? open : schema), description: `${own}.` };
      const existing = out[key];
      if (existing) {
        // Two types share a param name: one schema, both named in its description.
        const { description: _a, ...a } = existing as { description?: string };
        const { description: _b, ...b } = mcp as { description?: string };
        if (JSON.stringify(a) !== JSON.stringify(b))
          throw new Error(`node param "${key}" has different schemas in ${owners[key]!.join(', ')} and ${definition.type}`);
        owners[key]!.push(own);
        out[key] = Type.Optional({ ...mcp, description: `${owners[key]!.join('; ')}.` });
      } else {
        owners[key] = [own];
        out[key] = Type.Optional(mcp);
      }
    }
  }
  return out;
}

export const McpWorkflowNode = Type.Object(
  {
    id: NodeId('Unique node id.'),
    type: StringEnum(
      NODE_TYPES.map((d) => d.type),
      { description: 'Step kind.' },
    ),
    name: Type.Optional(Type.String({ maxLength: 200, description: 'Label.' })),
    params: Type.Object(mcpParams(), {
      ...strict,
      description:
        "Params of the node's type (each says which). Strings may hold {{trigger.x}}, {{nodes.<id>.x}}, {{credentials.<name>}} (a secret saved in Settings → Credentials; never the secret itself).",
    }),
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

/** create_workflow / update_workflow arguments → the workspace-api body (each param's MCP form → the API's). */
export function workflowArgsToApi(args: Args): Args {
  const graph = args.graph as { nodes: Args[]; edges: unknown[] } | undefined;
  if (!graph) return args;
  const nodes = graph.nodes.map((node, i) => {
    const definition = nodeDefinition(String(node.type));
    if (!definition) return node;
    const params = { ...(node.params as Args) };
    for (const [key, hint] of Object.entries(definition.fields as Record<string, FieldHint>)) {
      if (!hint.mcp || params[key] === undefined) continue;
      try {
        params[key] = hint.mcp.toApi(params[key]);
      } catch (err) {
        throw new ToolArgumentError(`graph.nodes[${i}].params.${key}`, (err as Error).message);
      }
    }
    return { ...node, params };
  });
  return { ...args, graph: { ...graph, nodes } };
}
