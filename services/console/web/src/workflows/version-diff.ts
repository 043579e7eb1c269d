/**
 * What changed between two versions of a workflow's definition (docs/workflow-versions.md, "In the
 * console"): steps added, removed and changed (each changed value by its path, e.g. `params.url`),
 * steps only moved on the canvas, edges added and removed, and the workflow's settings changed
 * (name, trigger type and settings, retention…). Pure, so the History page and its tests share it.
 */
import type { WorkflowEdge, WorkflowNode, WorkflowVersionDefinition } from '@flowdesk/contracts';

/** One value that differs: `before` / `after` are `undefined` where the value is not set. */
export interface ValueChange {
  path: string;
  before: unknown;
  after: unknown;
}

export interface StepChange {
  id: string;
  type: string;
  /** The step's name in the newer definition (else the older one's), when it has one. */
  name?: string;
  changes: ValueChange[];
}

export interface DefinitionDiff {
  steps: { added: WorkflowNode[]; removed: WorkflowNode[]; changed: StepChange[]; moved: string[] };
  edges: { added: WorkflowEdge[]; removed: WorkflowEdge[] };
  settings: ValueChange[];
  /** Nothing differs but positions (`steps.moved`, the trigger's place): the same workflow, laid out otherwise. */
  sameApartFromLayout: boolean;
  /** Nothing differs at all. */
  same: boolean;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every leaf that differs between `a` and `b`, by dotted path (`headers.authorization`, `rules[1].value`).
 * Objects are compared key by key (key order does not matter: jsonb reorders keys), arrays index by index;
 * a value whose kind changed (a string became an object) is one change at its own path.
 */
export function valueChanges(a: unknown, b: unknown, path = ''): ValueChange[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => valueChanges(a[k], b[k], path ? `${path}.${k}` : k));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: ValueChange[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) out.push(...valueChanges(a[i], b[i], `${path}[${i}]`));
    return out;
  }
  if (equal(a, b)) return [];
  return [{ path, before: a, after: b }];
}

/** Deep equality with object keys in any order. */
export function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => equal(a[k], b[k]));
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => equal(v, b[i]));
  return false;
}

export const edgeKey = (e: WorkflowEdge) => `${e.from}->${e.to}${e.branch ? `:${e.branch}` : ''}`;

/** What a step's fields other than its place on the canvas hold, for comparing. */
const stepFields = (n: WorkflowNode) => {
  const { id: _id, position: _position, ...rest } = n;
  return rest as Record<string, unknown>;
};

/** The settings of a definition that are not its graph, in the order the page lists them. */
const settingsOf = (d: WorkflowVersionDefinition): Record<string, unknown> => ({
  name: d.name,
  description: d.description,
  triggerType: d.triggerType,
  triggerConfig: d.triggerConfig,
  requireWebhookSecret: d.requireWebhookSecret,
  executionOrder: d.executionOrder,
  errorWorkflowId: d.errorWorkflowId,
  retention: d.retention,
});
const SETTING_ORDER = Object.keys(settingsOf({} as WorkflowVersionDefinition));

/** What changes from `older` to `newer`: "added" is in `newer` only, "removed" in `older` only. */
export function diffDefinitions(older: WorkflowVersionDefinition, newer: WorkflowVersionDefinition): DefinitionDiff {
  const before = new Map(older.graph.nodes.map((n) => [n.id, n]));
  const after = new Map(newer.graph.nodes.map((n) => [n.id, n]));
  const added = newer.graph.nodes.filter((n) => !before.has(n.id));
  const removed = older.graph.nodes.filter((n) => !after.has(n.id));
  const changed: StepChange[] = [];
  const moved: string[] = [];
  for (const n of newer.graph.nodes) {
    const o = before.get(n.id);
    if (!o) continue;
    const changes = valueChanges(stepFields(o), stepFields(n));
    if (changes.length > 0) changed.push({ id: n.id, type: n.type, ...((n.name ?? o.name) ? { name: n.name ?? o.name } : {}), changes });
    if (!equal(o.position, n.position)) moved.push(n.id);
  }
  if (!equal(older.graph.triggerPosition, newer.graph.triggerPosition)) moved.unshift('trigger');

  const beforeEdges = new Set(older.graph.edges.map(edgeKey));
  const afterEdges = new Set(newer.graph.edges.map(edgeKey));
  const edges = {
    added: newer.graph.edges.filter((e) => !beforeEdges.has(edgeKey(e))),
    removed: older.graph.edges.filter((e) => !afterEdges.has(edgeKey(e))),
  };

  const settings = valueChanges(settingsOf(older), settingsOf(newer)).sort(
    (x, y) => SETTING_ORDER.indexOf(x.path.split(/[.[]/)[0]!) - SETTING_ORDER.indexOf(y.path.split(/[.[]/)[0]!),
  );
  const sameApartFromLayout = added.length + removed.length + changed.length + edges.added.length + edges.removed.length + settings.length === 0;
  return {
    steps: { added, removed, changed, moved },
    edges,
    settings,
    sameApartFromLayout,
    same: sameApartFromLayout && moved.length === 0,
  };
}

const SETTING_LABEL: Record<string, string> = {
  name: 'Name',
  description: 'Description',
  triggerType: 'Trigger type',
  triggerConfig: 'Trigger settings',
  requireWebhookSecret: 'Webhook requires x-webhook-secret',
  executionOrder: 'Execution order',
  errorWorkflowId: 'Error workflow',
  retention: 'Run history retention',
};

/** "Trigger settings › cron" for `triggerConfig.cron`; "Name" for `name`. */
export function settingLabel(path: string): string {
  const [head, ...rest] = path.split('.');
  const [key, index] = head!.split(/(?=\[)/);
  const label = SETTING_LABEL[key!] ?? key!;
  const tail = [index, ...rest].filter(Boolean).join('.');
  return tail ? `${label} › ${tail}` : label;
}

/** A value as the page shows it: `not set`, a string in quotes, else its JSON (cut at `max` characters). */
export function showValue(v: unknown, max = 200): string {
  if (v === undefined) return 'not set';
  const text = JSON.stringify(v) ?? typeof v;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
