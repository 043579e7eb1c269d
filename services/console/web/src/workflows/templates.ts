/**
 * Variables in node parameters (`{{trigger.customer.name}}`, `{{nodes.http_1.body.id}}`), as the
 * editor shows them: inserted at the cursor, highlighted, and rendered against the sample payload
 * with the engine's rules (services/workflow-engine/src/domain/template.ts: a path lookup, nothing more).
 * Expressions (`{{= trigger.qty * trigger.price }}`) are found and evaluated by the engine's own
 * module (@flowdesk/contracts/expressions: JSONata with the same limits).
 */
import { evaluateExpression, hasExpression, templateParts } from '@flowdesk/contracts/expressions';

const VARIABLE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const ARRAY_INDEX = /^(0|[1-9][0-9]{0,8})$/;

/** `{{path}}`, the text the picker inserts. */
export const variable = (path: string): string => `{{${path}}}`;

/** A field's new value and caret after inserting `text` over the selection `start..end`. */
export function insertAt(value: string, start: number | null | undefined, end: number | null | undefined, text: string): { value: string; caret: number } {
  const from = clamp(start ?? value.length, value.length);
  const to = Math.max(from, clamp(end ?? from, value.length));
  return { value: value.slice(0, from) + text + value.slice(to), caret: from + text.length };
}

const clamp = (n: number, max: number) => Math.min(Math.max(0, n), max);

export type Segment = { kind: 'text'; text: string } | { kind: 'variable'; text: string; path: string } | { kind: 'expression'; text: string; source: string };

/** The text split into plain runs, variables and expressions, for highlighting. */
export function segments(value: string): Segment[] {
  if (hasExpression(value)) return templateParts(value);
  const out: Segment[] = [];
  let last = 0;
  for (const m of value.matchAll(VARIABLE)) {
    if (m.index > last) out.push({ kind: 'text', text: value.slice(last, m.index) });
    out.push({ kind: 'variable', text: m[0], path: m[1] ?? '' });
    last = m.index + m[0].length;
  }
  if (last < value.length) out.push({ kind: 'text', text: value.slice(last) });
  return out;
}

export interface PreviewScope {
  /** The sample payload (`{{trigger.…}}`); null before the first delivery. */
  trigger: Record<string, unknown> | null;
  /** Outputs of the last run per node id (`{{nodes.<id>.…}}`). */
  nodes: Record<string, unknown>;
  /** Inside a For each's loop body: `{{item}}` (the list's first element) and `{{index}}`. */
  loop?: { item: unknown; index: number };
}

/** The value as a run with this scope would render it, and the variables that would be empty. */
export function preview(value: string, scope: PreviewScope): { text: string; missing: string[] } {
  const missing: string[] = [];
  const text = value.replace(VARIABLE, (_all, path: string) => {
    const found = lookup(path, scope);
    if (!found.found) {
      if (!missing.includes(path)) missing.push(path);
      return '';
    }
    return stringify(found.value);
  });
  return { text, missing };
}

/**
 * The preview of a value holding expressions: evaluated against the sample as a run would (the
 * sample's trigger, the last run's node outputs, `now` from this machine). `error` is the first
 * expression's failure (syntax, limits), shown instead of a text.
 */
export async function previewWithExpressions(
  value: string,
  scope: PreviewScope,
  now: Date = new Date(),
): Promise<{ text: string; missing: string[]; error: string | null }> {
  const missing: string[] = [];
  const input = {
    trigger: scope.trigger ?? {},
    headers: {},
    nodes: scope.nodes,
    now: now.toISOString(),
    ...(scope.loop ? { item: scope.loop.item, index: scope.loop.index } : {}),
  };
  let text = '';
  try {
    for (const part of templateParts(value)) {
      if (part.kind === 'text') text += part.text;
      else if (part.kind === 'variable') {
        const rendered = preview(part.text, scope);
        text += rendered.text;
        for (const m of rendered.missing) if (!missing.includes(m)) missing.push(m);
      } else {
        const result = await evaluateExpression(part.source, input);
        if (result === undefined && !missing.includes(`= ${part.source}`)) missing.push(`= ${part.source}`);
        text += stringify(result);
      }
    }
  } catch (err) {
    return { text: '', missing, error: (err as Error).message };
  }
  return { text, missing, error: null };
}

/**
 * The element the picker shows for a For each's `{{item}}`: the first element of its list (`items`,
 * exactly one variable) as the sample or the last run has it; null when that is unknown or empty.
 */
export function loopItemSample(items: string, scope: PreviewScope): unknown {
  const only = /^\{\{\s*([^{}=][^{}]*?)\s*\}\}$/.exec(items.trim());
  if (!only) return null;
  const found = lookup(only[1] ?? '', scope);
  return found.found && Array.isArray(found.value) && found.value.length > 0 ? found.value[0] : null;
}

function lookup(path: string, scope: PreviewScope): { found: true; value: unknown } | { found: false } {
  const [root, ...rest] = path.split('.');
  if (root === 'trigger') return scope.trigger ? walk(scope.trigger, rest) : { found: false };
  if (root === 'nodes') {
    const [id, ...field] = rest;
    if (!id || !Object.hasOwn(scope.nodes, id)) return { found: false };
    return walk(scope.nodes[id], field);
  }
  if (root === 'item' && scope.loop) return walk(scope.loop.item, rest);
  if (root === 'index' && scope.loop && rest.length === 0) return { found: true, value: scope.loop.index };
  return { found: false };
}

function walk(start: unknown, path: string[]): { found: true; value: unknown } | { found: false } {
  let current = start;
  for (const seg of path) {
    if (seg === '' || FORBIDDEN.has(seg)) return { found: false };
    if (Array.isArray(current)) {
      const i = ARRAY_INDEX.test(seg) ? Number(seg) : -1;
      if (i < 0 || i >= current.length) return { found: false };
      current = current[i];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, seg)) {
      current = (current as Record<string, unknown>)[seg];
    } else return { found: false };
  }
  return { found: true, value: current };
}

export function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

export interface TreeEntry {
  /** Dotted path under the root, e.g. `customer.name`. */
  path: string;
  key: string;
  depth: number;
  /** Leaves show their value; objects and arrays their size. */
  summary: string;
  leaf: boolean;
}

/** A JSON value flattened into the rows of the picker's tree (depth-first, at most `limit` rows). */
export function tree(value: unknown, limit = 500): TreeEntry[] {
  const out: TreeEntry[] = [];
  const visit = (v: unknown, path: string, key: string, depth: number) => {
    if (out.length >= limit) return;
    const container = v !== null && typeof v === 'object';
    if (path) {
      const summary = Array.isArray(v)
        ? `${v.length} item${v.length === 1 ? '' : 's'}`
        : container
          ? `${Object.keys(v).length} field${Object.keys(v).length === 1 ? '' : 's'}`
          : typeof v === 'string'
            ? v
            : stringify(v) || 'null';
      out.push({ path, key, depth, summary, leaf: !container });
    }
    if (!container) return;
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
    for (const [k, child] of entries) visit(child, path ? `${path}.${k}` : k, k, path ? depth + 1 : 0);
  };
  visit(value, '', '', 0);
  return out;
}
