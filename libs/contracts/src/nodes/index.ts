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
import { createNote } from './create-note.ts';
import { createCalendarEntry } from './create-calendar-entry.ts';
import { addComment } from './add-comment.ts';
import { runWorkflow } from './run-workflow.ts';

export * from './define.ts';
export { HttpMethod } from './http-request.ts';
export { ConditionOperator } from './condition.ts';
export { SWITCH_BRANCHES, SWITCH_MAX_RULES } from './switch.ts';
export * from './verify-signature.ts';
export { WAIT_BRANCHES, WAIT_MAX_MS, WAIT_UNITS } from './wait.ts';
export { FOR_EACH_MAX_CONCURRENCY, FOR_EACH_MAX_ITEMS, loopBodies, type LoopBody } from './for-each.ts';
export { FIND_TASKS_MAX } from './find-tasks.ts';
export { RUN_WORKFLOW_MAX_DEPTH, RUN_WORKFLOW_MAX_TIMEOUT_MS } from './run-workflow.ts';

/** Every branch name a registered node type has (an edge's `branch` is one of them). */
export const BRANCH_NAMES = (): string[] => [...new Set(NODE_TYPES.flatMap((d) => (d as { branches?: readonly string[] }).branches ?? []))];

export const NODE_TYPES = [
  httpRequest,
  createTask,
  updateTask,
  findTasks,
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

type SchemaOf<D> = D extends NodeDefinition<infer T, infer P> ? ReturnType<typeof nodeSchema<T, P>> : never;
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
}

interface SchemaLike {
  type?: string;
  enum?: unknown[];
  patternProperties?: unknown;
  items?: { properties?: Record<string, unknown> };
}

/**
 * The generated form of a node type: one field per param, its widget resolved from the hint and
 * the schema. Throws when a param cannot be edited by any widget (the registry test walks this).
 */
export function formFields(definition: AnyNodeDefinition): FormField[] {
  const properties = definition.params.properties as Record<string, SchemaLike>;
  const required = new Set((definition.params as { required?: string[] }).required ?? []);
  return Object.entries(properties).map(([key, schema]) => {
    const hint = (definition.fields as Record<string, FieldHint | undefined>)[key];
    if (!hint) throw new Error(`node type ${definition.type}: param "${key}" has no field hint`);
    const widget: FieldWidget = hint.widget ?? (schema.enum ? 'select' : 'text');
    if (!FIELD_WIDGETS.includes(widget)) throw new Error(`node type ${definition.type}: param "${key}" has an unknown widget "${widget}"`);
    const field: FormField = { key, hint, widget, required: required.has(key) };
    if (widget === 'select') {
      const values = (schema.enum ?? []).map(String);
      if (values.length === 0) throw new Error(`node type ${definition.type}: param "${key}" is a select without enum values`);
      field.options = hint.options ?? values.map((value) => ({ value, label: value }));
    }
    if (widget === 'text' && schema.type !== 'string') throw new Error(`node type ${definition.type}: param "${key}" is not a string; give it a widget`);
    if (widget === 'key-value') {
      if (schema.type === 'array' && schema.items?.properties?.name && schema.items.properties.value) field.rows = 'list';
      else if (schema.type === 'object' && schema.patternProperties) field.rows = 'map';
      else throw new Error(`node type ${definition.type}: param "${key}" is neither a map nor a list of { name, value }`);
    }
    return field;
  });
}
