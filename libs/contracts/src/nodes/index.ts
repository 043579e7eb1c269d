/**
 * The node registry: every node type a workflow graph may hold, one module each in this folder,
 * registered by one line in NODE_TYPES. Everything else is derived from it (define.ts says what).
 * The order is the order of the graph union, the MCP schema's params and the console's add-step menu.
 */
import Type, { type Static } from 'typebox';
import { StringEnum } from '../common.ts';
import { FIELD_WIDGETS, nodeSchema, type FieldHint, type FieldWidget, type NodeDefinition } from './define.ts';
import { code } from './code.ts';
import { condition } from './condition.ts';
import { createTask } from './create-task.ts';
import { httpRequest } from './http-request.ts';
import { setFields } from './set-fields.ts';
import { switchNode } from './switch.ts';
import { filter } from './filter.ts';
import { stop } from './stop.ts';
import { verifySignature } from './verify-signature.ts';
import { wait } from './wait.ts';
import { respond } from './respond.ts';
import { forEach } from './for-each.ts';
import { aggregate } from './aggregate.ts';
import { updateTask } from './update-task.ts';
import { findTasks } from './find-tasks.ts';
import { getProject } from './get-project.ts';
import { getTask } from './get-task.ts';
import { createNote } from './create-note.ts';
import { createCalendarEntry } from './create-calendar-entry.ts';
import { addComment } from './add-comment.ts';
import { runWorkflow } from './run-workflow.ts';
import { sendEmail } from './send-email.ts';
import { slack } from './slack.ts';
import { discord } from './discord.ts';
import { teams } from './teams.ts';
import { telegram } from './telegram.ts';
import { ai } from './ai.ts';

export * from './define.ts';
export { HttpMethod } from './http-request.ts';
export {
  CONDITION_COMBINATORS,
  CONDITION_MAX_RULES,
  CONDITION_OPERATOR_OPTIONS,
  CONDITION_OPERATORS,
  ConditionOperator,
  type ConditionOperatorName,
  type ConditionParams,
  ConditionRule,
  isUnaryOperator,
  LegacyConditionParams,
  UNARY_OPERATORS,
  upgradeConditionParams,
} from './condition.ts';
export { SWITCH_BRANCHES, SWITCH_MAX_RULES } from './switch.ts';
export { LegacyFilterParams, upgradeFilterParams } from './filter.ts';
export * from './verify-signature.ts';
export { WAIT_BRANCHES, WAIT_MAX_MS, WAIT_UNITS } from './wait.ts';
export { FOR_EACH_MAX_CONCURRENCY, FOR_EACH_MAX_ITEMS, loopBodies, type LoopBody } from './for-each.ts';
export { FIND_TASKS_MAX } from './find-tasks.ts';
export { RUN_WORKFLOW_MAX_DEPTH, RUN_WORKFLOW_MAX_TIMEOUT_MS } from './run-workflow.ts';
export { SEND_EMAIL_LIMITS } from './send-email.ts';
export { SLACK_LIMITS, SLACK_MODES } from './slack.ts';
export { DISCORD_LIMITS } from './discord.ts';
export { TEAMS_LIMITS } from './teams.ts';
export { TELEGRAM_LIMITS, TELEGRAM_PARSE_MODES } from './telegram.ts';
export { AI_FLOWDESK_TOOL_NAMES, AI_FLOWDESK_TOOLS, AI_LIMITS, type AiCost, type AiStepOutput, type AiTranscriptEntry, type AiUsage } from './ai.ts';

/** Every branch name a registered node type has (an edge's `branch` is one of them). */
export const BRANCH_NAMES = (): string[] => [...new Set(NODE_TYPES.flatMap((d) => (d as { branches?: readonly string[] }).branches ?? []))];

export const NODE_TYPES = [
  httpRequest,
  sendEmail,
  slack,
  discord,
  teams,
  telegram,
  ai,
  createTask,
  updateTask,
  findTasks,
  getTask,
  getProject,
  createNote,
  createCalendarEntry,
  addComment,
  condition,
  setFields,
  switchNode,
  filter,
  forEach,
  aggregate,
  wait,
  runWorkflow,
  respond,
  verifySignature,
  stop,
  code,
] as const;

type Definitions = typeof NODE_TYPES;
export type NodeType = Definitions[number]['type'];
/** Any node definition, for code that walks the registry. */
export type AnyNodeDefinition = NodeDefinition<string, Definitions[number]['params']> | Definitions[number];

type SchemaOf<D> = D extends NodeDefinition<infer T, infer P, infer L> ? ReturnType<typeof nodeSchema<T, P, L>> : never;
type SchemasOf<Ds extends readonly unknown[]> = { -readonly [K in keyof Ds]: SchemaOf<Ds[K]> };
type NodeSchemas = SchemasOf<Definitions>;
/** The graph's node schemas, one per registered type, in registry order. */
export const NODE_SCHEMAS = NODE_TYPES.map((d) => nodeSchema(d as NodeDefinition)) as unknown as NodeSchemas;
export const WorkflowNode = Type.Union(NODE_SCHEMAS);
export type WorkflowNode = Static<typeof WorkflowNode>;
/** The params of one node type, as stored in the graph. */
export type NodeParams<T extends NodeType> = Extract<WorkflowNode, { type: T }>['params'];

export const NodeTypeKey = StringEnum(NODE_TYPES.map((d) => d.type));

const byType = new Map<string, AnyNodeDefinition>(NODE_TYPES.map((d) => [d.type, d]));
/** The definition of a node type, or undefined for a type no longer (or not yet) registered. */
export const nodeDefinition = (type: string): AnyNodeDefinition | undefined => byType.get(type);
/**
 * The branch a disabled step passes its input on by (n8n passes a deactivated node's input to its first
 * output): a node without branches takes none; a For each skips its loop (`done`); any other its first
 * branch (a Condition's and Verify signature's `true`, a Switch's `1`, a Wait's `resumed`).
 */
export function disabledBranch(type: string): string | undefined {
  if (type === 'for_each') return 'done';
  return byType.get(type)?.branches?.[0];
}
/** The node type's label ("HTTP Request"), or the raw type for an unknown one. */
export const nodeLabel = (type: string): string => byType.get(type)?.label ?? type;

export interface FormField {
  key: string;
  hint: FieldHint;
  widget: FieldWidget;
  required: boolean;
  /** The storage of a key-value field: a map or a list of { name, value }. */
  rows?: 'map' | 'list';
  /** The values of a select, with their labels. */
  options?: readonly { value: string; label: string }[];
  /** A `rows` field: one field per property of a row (text or select), in the schema's order. */
  columns?: FormField[];
  /** A `rows` field: at most this many rows. */
  maxRows?: number;
}

interface SchemaLike {
  type?: string;
  enum?: unknown[];
  patternProperties?: unknown;
  maxItems?: number;
  items?: { properties?: Record<string, SchemaLike>; required?: string[] };
}

/**
 * The generated form of a node type: one field per param, its widget resolved from the hint and
 * the schema. Throws when a param cannot be edited by any widget (the registry test walks this).
 */
export function formFields(definition: AnyNodeDefinition): FormField[] {
  const properties = definition.params.properties as Record<string, SchemaLike>;
  const required = new Set((definition.params as { required?: string[] }).required ?? []);
  const hints = definition.fields as Record<string, FieldHint | undefined>;
  return Object.entries(properties).map(([key, schema]) =>
    formField(`node type ${definition.type}: param "${key}"`, key, schema, hints[key], required.has(key)),
  );
}

function formField(where: string, key: string, schema: SchemaLike, hint: FieldHint | undefined, required: boolean, inRow = false): FormField {
  if (!hint) throw new Error(`${where} has no field hint`);
  const widget: FieldWidget =
    hint.widget ??
    (schema.enum ? 'select' : schema.type === 'boolean' ? 'switch' : key === 'credential' && schema.type === 'string' && !inRow ? 'credential' : 'text');
  if (!FIELD_WIDGETS.includes(widget)) throw new Error(`${where} has an unknown widget "${widget}"`);
  const field: FormField = { key, hint, widget, required };
  if (widget === 'select') {
    const values = (schema.enum ?? []).map(String);
    if (values.length === 0) throw new Error(`${where} is a select without enum values`);
    field.options = hint.options ?? values.map((value) => ({ value, label: value }));
  }
  if (widget === 'text' && schema.type !== 'string') throw new Error(`${where} is not a string; give it a widget`);
  if (widget === 'credential' && schema.type !== 'string') throw new Error(`${where} is a credential but not a string`);
  if (widget === 'switch' && schema.type !== 'boolean') throw new Error(`${where} is a switch but not a boolean`);
  if (widget === 'key-value') {
    if (schema.type === 'array' && schema.items?.properties?.name && schema.items.properties.value) field.rows = 'list';
    else if (schema.type === 'object' && schema.patternProperties) field.rows = 'map';
    else throw new Error(`${where} is neither a map nor a list of { name, value }`);
  }
  if (widget === 'rows') {
    const columns = schema.type === 'array' ? schema.items?.properties : undefined;
    if (!columns) throw new Error(`${where} is a rows field but not a list of objects`);
    const inRow = new Set(schema.items?.required ?? []);
    field.columns = Object.entries(columns).map(([column, s]) => {
      const f = formField(`${where}, column "${column}"`, column, s, hint.columns?.[column], inRow.has(column), true);
      if (f.widget !== 'text' && f.widget !== 'select') throw new Error(`${where}, column "${column}": a row holds text and selects only`);
      return f;
    });
    if (schema.maxItems !== undefined) field.maxRows = schema.maxItems;
  }
  return field;
}
