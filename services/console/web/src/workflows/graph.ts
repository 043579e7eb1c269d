import type { WorkflowEdge, WorkflowGraph } from '@flowdesk/contracts';
import {
  ERROR_BRANCH,
  formFields,
  NODE_TYPES,
  nodeDefinition,
  type OnError,
  RETRY_DEFAULTS,
  RETRY_LIMITS,
  RETRY_ON,
  type RetryPolicy,
  type AnyNodeDefinition,
  type FormField,
  type NodeType,
  upgradeParams,
  type WorkflowNode,
} from '@flowdesk/contracts/nodes';

/**
 * The editor's canvas (React Flow nodes and edges, with form-friendly parameters) and the API's
 * workflow graph (libs/contracts WorkflowGraph), both ways; and which node a server error is about.
 */

export type StepKind = NodeType;

/** The API's workflow graph (libs/contracts WorkflowGraph), its nodes and edges. */
export type ApiGraph = WorkflowGraph;
export type ApiNode = WorkflowNode;
export type ApiEdge = WorkflowEdge;
export type Position = NonNullable<WorkflowGraph['triggerPosition']>;

/** One key-value row of the form (a header, a field). */
export interface FormRow {
  name: string;
  value: string;
}
/** One row of a `rows` field (a Condition's rule): each column's text or select value. */
export type FormRecord = Record<string, string>;
/**
 * Parameters as the node panel edits them (generated from the node type's params schema and hints,
 * libs/contracts/src/nodes): text, selects, projects and JSON as strings, key-value lists and
 * `rows` lists as rows, switches as booleans (undefined: the default); a `none` field keeps the stored value.
 */
export type FormValue = string | FormRow[] | FormRecord[] | number | boolean | undefined;
export type StepForm = Record<string, FormValue>;

// A type, not an interface: React Flow's node data must be a plain record.
export type StepData = {
  kind: StepKind;
  name: string;
  form: StepForm;
  error?: string;
  onError?: OnError;
  retry?: RetryPolicy;
  /** Disabled (WorkflowNode.disabled): kept, not run; its input passes on. */
  disabled?: boolean;
};
/** `summary`: the line under the trigger's name on the canvas (e.g. the schedule in words). */
export type TriggerData = { kind: 'trigger'; name: string; triggerType: string; summary?: string; error?: string };
export type NodeData = StepData | TriggerData;

export interface CanvasNode {
  id: string;
  type: 'trigger' | 'step';
  position: Position;
  data: NodeData;
}
export interface CanvasEdge {
  id: string;
  source: string;
  target: string;
  sourceHandle?: string | null;
}

export const TRIGGER_ID = 'trigger';
/** The node types the editor offers, in the registry's order. */
export const STEP_KINDS: readonly StepKind[] = NODE_TYPES.map((d) => d.type);
export const KIND_LABEL = Object.fromEntries(NODE_TYPES.map((d) => [d.type, d.label])) as Record<StepKind, string>;
export const definitionOf = (kind: StepKind): AnyNodeDefinition => nodeDefinition(kind)!;

export const edgeId = (source: string, target: string, handle?: string | null) => `${source}->${target}${handle ? `:${handle}` : ''}`;

const fieldsCache = new Map<string, FormField[]>();
/** The generated form's fields of a node type (computed once per type). */
export function fieldsOf(kind: StepKind): FormField[] {
  let fields = fieldsCache.get(kind);
  if (!fields) fieldsCache.set(kind, (fields = formFields(definitionOf(kind))));
  return fields;
}

const selectDefault = (f: FormField): string => (typeof f.hint.default === 'string' ? f.hint.default : f.options![0]!.value);

/** A new row of a `rows` field: selects at their default, text empty. */
export function emptyRow(field: FormField): FormRecord {
  return Object.fromEntries((field.columns ?? []).map((c) => [c.key, c.widget === 'select' ? selectDefault(c) : '']));
}

export function emptyForm(kind: StepKind): StepData {
  const form: StepForm = {};
  for (const f of fieldsOf(kind)) {
    if (f.widget === 'none' || f.widget === 'switch') continue;
    form[f.key] = f.widget === 'key-value' ? [] : f.widget === 'rows' ? (f.required ? [emptyRow(f)] : []) : f.widget === 'select' ? selectDefault(f) : '';
  }
  return { kind, name: '', form };
}

/** The branches a step offers with its form as it stands (a Switch: one per rule and default), else its type's. */
export function branchesOfStep(data: StepData): readonly string[] | undefined {
  const definition = definitionOf(data.kind);
  return definition.branchesOf ? definition.branchesOf(toParams(data).params) : definition.branches;
}

/**
 * Where the edges of a `rows` field's branches go when row `removed` is deleted (a Switch rule):
 * the removed row's branch → null (its edges are dropped), each later row's → the branch before it.
 */
export function branchesAfterRemoving(field: FormField, rowCount: number, removed: number): Map<string, string | null> {
  const branch = field.hint.rowBranch;
  const out = new Map<string, string | null>();
  if (!branch) return out;
  out.set(branch(removed), null);
  for (let i = removed + 1; i < rowCount; i++) out.set(branch(i), branch(i - 1));
  return out;
}

/** The canvas's edges once a step's branches moved (branchesAfterRemoving): moved edges renamed, dropped ones gone. */
export function remapBranchEdges<E extends CanvasEdge>(edges: E[], nodeId: string, moves: Map<string, string | null>): E[] {
  if (moves.size === 0) return edges;
  return edges.flatMap((e) => {
    if (e.source !== nodeId || !moves.has(e.sourceHandle ?? '')) return [e];
    const to = moves.get(e.sourceHandle ?? '');
    return to === null || to === undefined ? [] : [{ ...e, id: edgeId(e.source, e.target, to), sourceHandle: to }];
  });
}

/** A node id not yet used on the canvas: `http_1`, `http_2`, … */
export function nextId(kind: StepKind, taken: Iterable<string>): string {
  const used = new Set(taken);
  for (let i = 1; ; i++) if (!used.has(`${definitionOf(kind).idPrefix}_${i}`)) return `${definitionOf(kind).idPrefix}_${i}`;
}

export function toCanvas(graph: ApiGraph, triggerType: string): { nodes: CanvasNode[]; edges: CanvasEdge[] } {
  const depth = depths(graph);
  const row = new Map<number, number>();
  const auto = (id: string): Position => {
    const d = depth.get(id) ?? 1;
    const r = row.get(d) ?? 0;
    row.set(d, r + 1);
    return { x: d * 300, y: r * 150 };
  };
  const nodes: CanvasNode[] = [
    { id: TRIGGER_ID, type: 'trigger', position: graph.triggerPosition ?? { x: 0, y: 0 }, data: { kind: 'trigger', name: '', triggerType } },
  ];
  for (const n of graph.nodes) nodes.push({ id: n.id, type: 'step', position: n.position ?? auto(n.id), data: toData(n) });
  const edges = graph.edges.map((e) => ({
    id: edgeId(e.from, e.to, e.branch),
    source: e.from,
    target: e.to,
    // The branch is shown by the Condition's labelled handle the edge leaves from.
    sourceHandle: e.branch ?? null,
  }));
  return { nodes, edges };
}

function depths(graph: ApiGraph): Map<string, number> {
  const out = new Map<string, number>([[TRIGGER_ID, 0]]);
  let frontier = [TRIGGER_ID];
  for (let d = 1; frontier.length && d <= graph.nodes.length; d++) {
    const next: string[] = [];
    for (const e of graph.edges) {
      if (frontier.includes(e.from) && !out.has(e.to)) {
        out.set(e.to, d);
        next.push(e.to);
      }
    }
    frontier = next;
  }
  return out;
}

function toData(n: ApiNode): StepData {
  // Params saved in an older shape a node type still accepts (a Condition's one comparison) are edited, and saved, in the current one.
  const params = upgradeParams(definitionOf(n.type), n.params) as Record<string, unknown>;
  const form: StepForm = {};
  for (const f of fieldsOf(n.type)) {
    const v = params[f.key];
    if (f.widget === 'rows') {
      form[f.key] = ((v as Record<string, unknown>[] | undefined) ?? []).map((row) =>
        Object.fromEntries((f.columns ?? []).map((c) => [c.key, typeof row[c.key] === 'string' ? (row[c.key] as string) : ''])),
      );
    } else if (f.widget === 'switch') {
      if (typeof v === 'boolean') form[f.key] = v;
    } else if (f.widget === 'none') {
      if (v !== undefined) form[f.key] = v as FormValue;
    } else if (f.widget === 'key-value') {
      form[f.key] =
        f.rows === 'list'
          ? ((v as FormRow[] | undefined) ?? []).map((r) => ({ name: r.name, value: r.value }))
          : Object.entries((v as Record<string, string> | undefined) ?? {}).map(([name, value]) => ({ name, value }));
    } else if (f.widget === 'json') form[f.key] = v === undefined ? '' : JSON.stringify(v, null, 2);
    else form[f.key] = (v as string | undefined) ?? '';
  }
  return {
    kind: n.type,
    name: n.name ?? '',
    form,
    ...(n.onError ? { onError: n.onError } : {}),
    ...(n.retry ? { retry: n.retry } : {}),
    ...(n.disabled ? { disabled: true } : {}),
  };
}

/**
 * A step's form → the params to save, and the problem found before sending (a JSON field that does
 * not parse, a row with a value but no name). Empty optional fields are left out; a field hidden by
 * its hint is left out when the hint says so.
 */
export function toParams(data: StepData): { params: Record<string, unknown>; problem?: string } {
  const params: Record<string, unknown> = {};
  let problem: string | undefined;
  const form = data.form;
  for (const f of fieldsOf(data.kind)) {
    const v = form[f.key];
    if (f.hint.dropWhenHidden && f.hint.hiddenWhen?.(form)) continue;
    const noun = f.hint.noun ?? f.hint.label.toLowerCase();
    if (f.widget === 'rows') {
      params[f.key] = ((v as FormRecord[] | undefined) ?? []).map((row) => rowParams(f, row));
    } else if (f.widget === 'switch') {
      if (typeof v === 'boolean') params[f.key] = v;
    } else if (f.widget === 'none') {
      if (v !== undefined) params[f.key] = v;
    } else if (f.widget === 'key-value') {
      const rows: FormRow[] = [];
      for (const r of (v as FormRow[] | undefined) ?? []) {
        if (!r.name.trim() && !r.value.trim()) continue;
        if (!r.name.trim()) problem = `A ${noun} has a value but no name`;
        else rows.push({ name: r.name.trim(), value: r.value });
      }
      if (rows.length || f.required) params[f.key] = f.rows === 'list' ? rows : Object.fromEntries(rows.map((r) => [r.name, r.value]));
    } else if (f.widget === 'json') {
      const text = typeof v === 'string' ? v : '';
      if (text.trim()) {
        try {
          params[f.key] = JSON.parse(text);
        } catch {
          problem = `The ${noun} is not valid JSON`;
        }
      }
    } else {
      const raw = typeof v === 'string' ? v : '';
      const text = f.hint.trim ? raw.trim() : raw;
      if (f.required || text !== '') params[f.key] = text;
    }
  }
  return { params, ...(problem ? { problem } : {}) };
}

/** One row of a `rows` field as saved: a column hidden by its hint (a unary operator's right-hand side) left out, empty optional text too. */
function rowParams(field: FormField, row: FormRecord): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of field.columns ?? []) {
    if (c.hint.dropWhenHidden && c.hint.hiddenWhen?.(row)) continue;
    const raw = row[c.key] ?? '';
    const text = c.hint.trim ? raw.trim() : raw;
    if (c.required || text !== '') out[c.key] = text;
  }
  return out;
}

const round = (p: Position): Position => ({ x: Math.round(p.x), y: Math.round(p.y) });

/**
 * The graph to PATCH, or the problems found before sending (per node id): a JSON body that does
 * not parse, a header without a name. Everything else is the server's to judge.
 */
export function toApiGraph(nodes: CanvasNode[], edges: CanvasEdge[]): { graph: ApiGraph; problems: Record<string, string> } {
  const problems: Record<string, string> = {};
  const out: ApiNode[] = [];
  let triggerPosition: Position | undefined;
  const kinds = new Map(nodes.map((n) => [n.id, n.data.kind]));
  const onErrorOf = new Map(nodes.map((n) => [n.id, n.data.kind === 'trigger' ? undefined : n.data.onError]));
  for (const n of nodes) {
    const d = n.data;
    if (d.kind === 'trigger') {
      triggerPosition = round(n.position);
      continue;
    }
    const base = {
      id: n.id,
      ...(d.name.trim() ? { name: d.name.trim() } : {}),
      ...(d.onError && d.onError !== 'fail' ? { onError: d.onError } : {}),
      ...(savedRetry(d.retry) ? { retry: savedRetry(d.retry) } : {}),
      ...(d.disabled ? { disabled: true } : {}),
      position: round(n.position),
    };
    const { params, problem } = toParams(d);
    if (problem) problems[n.id] = problem;
    out.push({ ...base, type: d.kind, params } as ApiNode);
  }
  const apiEdges: ApiEdge[] = edges.map((e) => {
    const kind = kinds.get(e.source);
    const branches = kind && kind !== 'trigger' ? definitionOf(kind).branches : undefined;
    // The error handle (a node whose onError is "branch") names the error branch (libs/contracts ERROR_BRANCH).
    const onError = e.sourceHandle === ERROR_BRANCH && onErrorOf.get(e.source) === 'branch';
    const branch = onError ? ERROR_BRANCH : branches?.includes(e.sourceHandle ?? '') ? (e.sourceHandle as ApiEdge['branch']) : undefined;
    return { from: e.source, to: e.target, ...(branch ? { branch } : {}) };
  });
  return { graph: { nodes: out, edges: apiEdges, ...(triggerPosition ? { triggerPosition } : {}) }, problems };
}

/**
 * The node a validation error from the server is about. workspace-api names it two ways: a schema
 * error's path (`body.graph.nodes.2.params.url must …`: the index in the graph that was sent) or
 * the graph check's message (`node "http_1" is not reachable`, `edge a -> b …`).
 */
export function nodeOfError(message: string, sent: ApiGraph): string | null {
  const indexed = /body\.graph\.nodes\.(\d+)/.exec(message);
  if (indexed) return sent.nodes[Number(indexed[1])]?.id ?? null;
  const named = /(?:node|id) "([^"]+)"/.exec(message);
  if (named) return named[1] ?? null;
  const edge = /edge (\S+) -> (\S+)/.exec(message);
  if (edge) {
    const [, from, to] = edge;
    if (/ends at an unknown node/.test(message)) return from === 'trigger' ? TRIGGER_ID : (from ?? null);
    return from ?? to ?? null;
  }
  const edgeIndexed = /body\.graph\.edges\.(\d+)/.exec(message);
  if (edgeIndexed) return sent.edges[Number(edgeIndexed[1])]?.from ?? null;
  return null;
}

/**
 * The For each whose loop body holds `id` (the nodes its `each` handle reaches), or null: inside a
 * loop the picker offers `{{item}}`, its fields and `{{index}}` (docs/workflow-engine.md, "For each").
 */
export function enclosingLoop(
  id: string,
  nodes: { id: string; data: { kind: string } }[],
  edges: { source: string; target: string; sourceHandle?: string | null }[],
): string | null {
  for (const loop of nodes) {
    if (loop.data.kind !== 'for_each') continue;
    const seen = new Set<string>();
    const stack = edges.filter((e) => e.source === loop.id && e.sourceHandle === 'each').map((e) => e.target);
    while (stack.length) {
      const cur = stack.pop()!;
      if (seen.has(cur) || cur === loop.id) continue;
      seen.add(cur);
      for (const e of edges) if (e.source === cur) stack.push(e.target);
    }
    if (seen.has(id)) return loop.id;
  }
  return null;
}

/** The ids of the nodes a run reaches before `id` (its ancestors), for the picker's node outputs. */
export function upstreamOf(id: string, edges: { source: string; target: string }[]): string[] {
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length) {
    const cur = stack.pop()!;
    for (const e of edges) {
      if (e.target === cur && !seen.has(e.source)) {
        seen.add(e.source);
        stack.push(e.source);
      }
    }
  }
  seen.delete(id);
  return [...seen];
}

/**
 * A step's retry policy as the editor saves it (libs/contracts RetryPolicySchema; docs/workflow-engine.md,
 * "Retries"): nothing when it makes one attempt (the default), else the policy with its numbers kept
 * within the schema's limits and each failure kind once, in the registry's order.
 */
export function savedRetry(policy: RetryPolicy | undefined): RetryPolicy | undefined {
  if (!policy || !(policy.attempts > 1)) return undefined;
  const clamp = (n: number | undefined, max: number) => (n === undefined || !Number.isFinite(n) ? undefined : Math.min(Math.max(Math.round(n), 0), max));
  const out: RetryPolicy = { attempts: Math.min(Math.round(policy.attempts), RETRY_LIMITS.maxAttempts) };
  if (policy.backoff) out.backoff = policy.backoff;
  const delayMs = clamp(policy.delayMs, RETRY_LIMITS.maxDelayMs);
  if (delayMs !== undefined) out.delayMs = delayMs;
  const maxDelayMs = clamp(policy.maxDelayMs, RETRY_LIMITS.maxDelayMs);
  if (maxDelayMs !== undefined) out.maxDelayMs = maxDelayMs;
  if (policy.jitter !== undefined) out.jitter = policy.jitter;
  if (policy.on) {
    const on = RETRY_ON.filter((k) => policy.on!.includes(k));
    if (on.length > 0) out.on = on;
  }
  return out;
}

/** The labels of the failures a retry policy may repeat (RETRY_ON), in its order. */
export const RETRY_ON_LABELS: Record<(typeof RETRY_ON)[number], string> = {
  network: 'Network errors',
  timeout: 'Timeouts',
  '5xx': 'Server errors (5xx)',
  '429': 'Too many requests (429, waits Retry-After)',
  any: 'Any failure (4xx too)',
};

/** The retry section's one-line summary: "3 attempts, exponential from 1 s (max 30 s)" or "No retry". */
export function retrySummary(policy: RetryPolicy | undefined): string {
  const p = savedRetry(policy);
  if (!p) return 'No retry';
  const backoff = p.backoff ?? RETRY_DEFAULTS.backoff;
  const delay = seconds(p.delayMs ?? RETRY_DEFAULTS.delayMs);
  const max = seconds(p.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs);
  return backoff === 'fixed' ? `${p.attempts} attempts, ${delay} apart` : `${p.attempts} attempts, exponential from ${delay} (max ${max})`;
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
