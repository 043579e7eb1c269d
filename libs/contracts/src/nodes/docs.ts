/**
 * docs/workflow-engine.md's node table, generated from the registry (npm run docs:nodes); the
 * contracts test fails when the committed page differs from withNodeTable(page).
 */
import { formFields, NODE_TYPES, RetryPolicySchema, type AnyNodeDefinition } from './index.ts';

export const NODE_TABLE_START = '<!-- node table: generated from libs/contracts/src/nodes by `npm run docs:nodes`; do not edit -->';
export const NODE_TABLE_END = '<!-- end of node table -->';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function paramsOf(definition: AnyNodeDefinition): string {
  return formFields(definition)
    .map((f) => {
      const notes = [f.required ? 'required' : '', f.hint.template ? 'templated' : '', f.options ? f.options.map((o) => o.value).join(' / ') : '']
        .filter(Boolean)
        .join(', ');
      return `\`${f.key}\`${notes ? ` (${notes})` : ''}`;
    })
    .join(', ');
}

export function renderNodeTable(): string {
  const rows = (NODE_TYPES as readonly AnyNodeDefinition[]).map((d) =>
    [`**${d.label}** (\`${d.type}\`)`, d.description, paramsOf(d), d.branches ? d.branches.map((b) => `\`${b}\``).join(', ') : '—', d.output]
      .map(cell)
      .join(' | '),
  );
  return [
    NODE_TABLE_START,
    '| Node | What it does | Params | Branches | Output `{{nodes.<id>.…}}` |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
    NODE_TABLE_END,
  ].join('\n');
}

/** The page with its node table replaced by the registry's (the markers must be there once). */
export function withNodeTable(page: string): string {
  const start = page.indexOf(NODE_TABLE_START);
  const end = page.indexOf(NODE_TABLE_END);
  if (start < 0 || end < start) throw new Error('docs/workflow-engine.md has no node table markers');
  return page.slice(0, start) + renderNodeTable() + page.slice(end + NODE_TABLE_END.length);
}

interface ParamSchema {
  type?: string;
  enum?: unknown[];
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  pattern?: string;
  items?: ParamSchema;
  properties?: Record<string, ParamSchema>;
  required?: string[];
  patternProperties?: Record<string, ParamSchema>;
  anyOf?: ParamSchema[];
}

/** A param's schema in a few words: `"GET" | "POST"`, `string ≤ 2000`, `[{ name, value }] ≤ 100`, `object name → string`. */
function shapeOf(s: ParamSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (s.anyOf) return s.anyOf.map(shapeOf).join(' | ');
  switch (s.type) {
    case 'string':
      return `string${s.maxLength !== undefined ? ` ≤ ${s.maxLength} chars` : ''}`;
    case 'integer':
    case 'number':
      return `${s.type}${s.minimum !== undefined ? ` ${s.minimum}–${s.maximum ?? '∞'}` : ''}`;
    case 'boolean':
      return 'boolean';
    case 'array': {
      const item = s.items ?? {};
      const inner = item.properties
        ? `{ ${Object.entries(item.properties)
            .map(([k, v]) => `${k}${item.required?.includes(k) ? '' : '?'}: ${shapeOf(v)}`)
            .join(', ')} }`
        : shapeOf(item);
      return `[${inner}]${s.maxItems !== undefined ? ` (≤ ${s.maxItems})` : ''}`;
    }
    case 'object':
      if (s.patternProperties) return `object of name → ${shapeOf(Object.values(s.patternProperties)[0] ?? {})}`;
      if (s.properties) return shapeOf({ type: 'array', items: s }).slice(1, -1);
      return 'object';
    default:
      return 'any JSON';
  }
}

/**
 * The node catalogue for MCP clients (resource flowdesk://docs/workflow-nodes, Markdown), generated
 * from the registry: what create_workflow and update_workflow take as each node's `params` JSON text.
 * The tools' schemas carry only the type enum, so tools/list stays the same size as types are added.
 */
export function renderNodeCatalogue(): string {
  const out = [
    '# Workflow node types',
    '',
    'A graph is `{ nodes, edges }`. A node is `{ id, type, name?, onError?, retry?, disabled?, params }`; create_workflow and update_workflow take `params` as the',
    "JSON text of the type's params object below (the shape get_workflow returns). An edge is `{ from, to, branch? }`: `from` is",
    '`"trigger"` or a node id; an edge leaving a node with branches names one. Nodes run in the order of the edges from the trigger.',
    "Templated strings may hold `{{trigger.a.b}}` (the trigger payload), `{{nodes.<id>.x}}` (an earlier node's output) and",
    '`{{credentials.<name>}}` (a secret saved in Settings → Credentials; never write the secret itself) and `{{wait.<id>.resumeUrl}}`',
    "(a resume Wait's link, usable before the Wait, e.g. to mail an approver).",
    'To compute, write a JSONata expression: `{{= trigger.qty * trigger.price }}`, `{{= $sum(trigger.lines.(qty * price)) }}`,',
    '`{{= $dateAdd(now, 3, "days") }}`, `{{= "vip" in trigger.labels }}` (in scope: trigger, headers, nodes, item, index,',
    'now). A string that is exactly one expression keeps its JSON type (a number stays a number); a syntax error is refused on save.',
    '',
    'Example node: `{ "id": "notify", "type": "http_request", "params": "{\\"method\\":\\"POST\\",\\"url\\":\\"https://example.com/hook\\",\\"body\\":{\\"text\\":\\"{{trigger.title}}\\"}}" }`',
    '',
    '## Retry policy (any node)',
    '',
    "A node's `retry` (JSON text, like `params`) repeats a failed step with the same input and idempotency key before its `onError`",
    'decides. POST and PATCH requests are repeated only when they send their Idempotency-Key. Fields:',
    ...Object.entries(RetryPolicySchema.properties).map(
      ([key, schema]) =>
        `- \`${key}\` (${(RetryPolicySchema as { required?: string[] }).required?.includes(key) ? 'required' : 'optional'}): ${shapeOf(schema as ParamSchema)}. ${(schema as { description?: string }).description ?? ''}`,
    ),
    '',
    'Example: `"retry": "{\\"attempts\\":4,\\"backoff\\":\\"exponential\\",\\"delayMs\\":2000,\\"on\\":[\\"5xx\\",\\"429\\"]}"`',
    '',
    '## Disabled steps (any node)',
    '',
    '`"disabled": true` keeps a step, its params and edges, but runs skip it: its input (the output of the step before it, or the',
    "trigger's payload) becomes its output, and the run goes on by its first branch (a Condition's `true`, a For each's `done`).",
    'A Verify signature step cannot be disabled.',
  ];
  for (const d of NODE_TYPES as readonly AnyNodeDefinition[]) {
    out.push('', `## ${d.label} (\`${d.type}\`)`, '', d.description, '', 'Params:');
    const properties = d.params.properties as Record<string, ParamSchema>;
    for (const f of formFields(d)) {
      const notes = [f.required ? 'required' : 'optional', f.hint.template ? 'templated' : ''].filter(Boolean).join(', ');
      const about = [f.hint.label, f.hint.description, f.hint.default !== undefined ? `default ${JSON.stringify(f.hint.default)}` : '']
        .filter((part): part is string => Boolean(part))
        .map((part) => part.replace(/\.$/, ''))
        .join('. ');
      out.push(`- \`${f.key}\` (${notes}): ${shapeOf(properties[f.key] ?? {})}. ${about}.`);
    }
    if (d.branches) out.push('', `Branches: ${d.branches.map((b) => `\`${b}\``).join(', ')} (each outgoing edge names one).`);
    out.push('', `Output \`{{nodes.<id>.…}}\`: ${d.output}`);
  }
  return out.join('\n') + '\n';
}
