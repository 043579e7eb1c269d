/**
 * The editor's canvas (React Flow nodes and edges, with form-friendly parameters) and the API's
 * workflow graph (libs/contracts WorkflowGraph), both ways; and which node a server error is about.
 */

export type StepKind = 'http_request' | 'condition' | 'create_task';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Position {
  x: number;
  y: number;
}

/** The API's shapes (the subset the editor writes). */
export type ApiNode =
  | {
      id: string;
      type: 'http_request';
      name?: string;
      position?: Position;
      params: { method: HttpMethod; url: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number };
    }
  | { id: string; type: 'condition'; name?: string; position?: Position; params: { left: string; operator: string; right?: string } }
  | { id: string; type: 'create_task'; name?: string; position?: Position; params: { title: string; projectId?: string; dueDate?: string; notes?: string } };
export interface ApiEdge {
  from: string;
  to: string;
  branch?: 'true' | 'false';
}
export interface ApiGraph {
  nodes: ApiNode[];
  edges: ApiEdge[];
  triggerPosition?: Position;
}

/** Parameters as the node panel edits them: every field a string, headers as rows. */
export interface HttpForm {
  method: HttpMethod;
  url: string;
  headers: { name: string; value: string }[];
  body: string;
  timeoutMs?: number;
}
export interface ConditionForm {
  left: string;
  operator: string;
  right: string;
}
export interface TaskForm {
  title: string;
  projectId: string;
  dueDate: string;
  notes: string;
}

export type StepData =
  | { kind: 'http_request'; name: string; form: HttpForm; error?: string }
  | { kind: 'condition'; name: string; form: ConditionForm; error?: string }
  | { kind: 'create_task'; name: string; form: TaskForm; error?: string };
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
export const KIND_LABEL: Record<StepKind, string> = { http_request: 'HTTP Request', condition: 'Condition', create_task: 'Create Task' };
const ID_PREFIX: Record<StepKind, string> = { http_request: 'http', condition: 'condition', create_task: 'task' };

export const edgeId = (source: string, target: string, handle?: string | null) => `${source}->${target}${handle ? `:${handle}` : ''}`;

export function emptyForm(kind: StepKind): StepData {
  switch (kind) {
    case 'http_request':
      return { kind, name: '', form: { method: 'POST', url: '', headers: [], body: '' } };
    case 'condition':
      return { kind, name: '', form: { left: '', operator: 'exists', right: '' } };
    case 'create_task':
      return { kind, name: '', form: { title: '', projectId: '', dueDate: '', notes: '' } };
  }
}

/** A node id not yet used on the canvas: `http_1`, `http_2`, … */
export function nextId(kind: StepKind, taken: Iterable<string>): string {
  const used = new Set(taken);
  for (let i = 1; ; i++) if (!used.has(`${ID_PREFIX[kind]}_${i}`)) return `${ID_PREFIX[kind]}_${i}`;
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
  const name = n.name ?? '';
  switch (n.type) {
    case 'http_request': {
      const p = n.params;
      return {
        kind: 'http_request',
        name,
        form: {
          method: p.method,
          url: p.url,
          headers: Object.entries(p.headers ?? {}).map(([k, v]) => ({ name: k, value: v })),
          body: p.body === undefined ? '' : JSON.stringify(p.body, null, 2),
          ...(p.timeoutMs !== undefined ? { timeoutMs: p.timeoutMs } : {}),
        },
      };
    }
    case 'condition':
      return { kind: 'condition', name, form: { left: n.params.left, operator: n.params.operator, right: n.params.right ?? '' } };
    case 'create_task':
      return {
        kind: 'create_task',
        name,
        form: { title: n.params.title, projectId: n.params.projectId ?? '', dueDate: n.params.dueDate ?? '', notes: n.params.notes ?? '' },
      };
  }
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
  for (const n of nodes) {
    const d = n.data;
    if (d.kind === 'trigger') {
      triggerPosition = round(n.position);
      continue;
    }
    const base = { id: n.id, ...(d.name.trim() ? { name: d.name.trim() } : {}), position: round(n.position) };
    if (d.kind === 'http_request') {
      const f = d.form;
      const headers: Record<string, string> = {};
      for (const h of f.headers) {
        if (!h.name.trim() && !h.value.trim()) continue;
        if (!h.name.trim()) problems[n.id] = 'A header has a value but no name';
        else headers[h.name.trim()] = h.value;
      }
      let body: unknown;
      if (f.body.trim()) {
        try {
          body = JSON.parse(f.body);
        } catch {
          problems[n.id] = 'The body is not valid JSON';
        }
      }
      out.push({
        ...base,
        type: 'http_request',
        params: {
          method: f.method,
          url: f.url,
          ...(Object.keys(headers).length ? { headers } : {}),
          ...(body !== undefined ? { body } : {}),
          ...(f.timeoutMs !== undefined ? { timeoutMs: f.timeoutMs } : {}),
        },
      });
    } else if (d.kind === 'condition') {
      const f = d.form;
      const unary = f.operator === 'exists' || f.operator === 'not_exists';
      out.push({ ...base, type: 'condition', params: { left: f.left, operator: f.operator, ...(!unary && f.right !== '' ? { right: f.right } : {}) } });
    } else {
      const f = d.form;
      out.push({
        ...base,
        type: 'create_task',
        params: {
          title: f.title,
          ...(f.projectId ? { projectId: f.projectId } : {}),
          ...(f.dueDate.trim() ? { dueDate: f.dueDate.trim() } : {}),
          ...(f.notes ? { notes: f.notes } : {}),
        },
      });
    }
  }
  const apiEdges: ApiEdge[] = edges.map((e) => {
    const branch = kinds.get(e.source) === 'condition' && (e.sourceHandle === 'true' || e.sourceHandle === 'false') ? e.sourceHandle : undefined;
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
