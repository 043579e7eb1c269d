/**
 * Expressions in node parameters: `{{= trigger.qty * trigger.price }}`, evaluated with JSONata
 * (docs/workflow-engine.md, "Expressions"). Shared by the engine (evaluation), workspace-api
 * (syntax check on save) and the console (the editor's preview), so all three read a template the
 * same way. Path variables (`{{trigger.a.b}}`) stay a plain lookup in each of them; this module only
 * finds where they are.
 *
 * JSONata is sandboxed by design: no access to JavaScript objects beyond the input's own properties
 * (no prototype walk, no constructor), no I/O. What it does not bound by itself is bounded here:
 * wall time and depth (its guardrails), sequence length, `$pad`'s width, the source and the result's size.
 */
import jsonata from 'jsonata';
import { DATE_FUNCTIONS } from './expression-dates.ts';

export const EXPRESSION_LIMITS = {
  /** Characters of one expression's source. */
  maxSourceLength: 2_000,
  /** Wall time of one evaluation (JSONata's `timeout` guardrail, checked at every step). */
  timeoutMs: 1_000,
  /** Nesting depth of the evaluation (JSONata's `stack` guardrail). */
  maxDepth: 200,
  /** Items in any sequence the expression builds (`[1..1e9]` fails at once). */
  maxSequence: 100_000,
  /** The result as JSON, in characters. */
  maxResultChars: 1_000_000,
  /** Compiled expressions kept (least recently compiled dropped first). */
  cacheSize: 1_000,
  /** An error's text, in characters: longer text (a `$error()` message built from the data) is cut, with a note. */
  maxErrorChars: 65_536,
  /** AST nodes of an expression that may run inline (`expressionRunsInline`); a larger one goes to the sandbox. */
  maxInlineNodes: 64,
  /** The widest literal range (`[1..100]`) an inline expression may build. */
  maxInlineRange: 1_000,
} as const;

/** `text` cut to `max` characters, saying how much was left out. */
export function capErrorText(text: string, max: number = EXPRESSION_LIMITS.maxErrorChars): string {
  if (text.length <= max) return text;
  const note = ` … (error text cut: ${text.length} characters, the limit is ${max})`;
  return text.slice(0, max - note.length) + note;
}

/** What an expression sees (the input document: `trigger.amount`, `nodes.http_1.body`, `item`, `index`, `now`). */
export interface ExpressionScope {
  /** The trigger's JSON payload. */
  trigger: unknown;
  /** Request headers, lower-cased. */
  headers?: Record<string, string>;
  /** Outputs of the nodes that already ran, by id. */
  nodes: Record<string, unknown>;
  /** The current element and its position inside For each (absent elsewhere). */
  item?: unknown;
  index?: number;
  /** The run's clock at evaluation, ISO 8601. */
  now: string;
}

/** An expression that does not parse, runs too long or too deep, or yields something no JSON holds. */
export class ExpressionError extends Error {
  constructor(
    /** The expression as written between `{{=` and `}}`. */
    readonly source: string,
    readonly reason: string,
  ) {
    super(capErrorText(`expression {{= ${clip(source)} }} ${reason}`));
  }
}

export type TemplatePart =
  { kind: 'text'; text: string } | { kind: 'variable'; text: string; path: string } | { kind: 'expression'; text: string; source: string };

const VARIABLE_AT = /\{\{\s*([^{}]*?)\s*\}\}/y;
const EXPRESSION_OPEN = /\{\{\s*=/y;

/** Whether a string holds an expression at all (the cheap test before splitting it). */
export const hasExpression = (value: string): boolean => /\{\{\s*=/.test(value);

/**
 * A template split into text, `{{path}}` variables and `{{= … }}` expressions. An expression may hold
 * braces (`{{= {"total": $sum(x)} }}`) and `}}` inside strings; it ends at the first `}}` outside
 * strings and object braces. An unterminated one is text (`unterminatedExpression` names it for validation).
 */
export function templateParts(value: string): TemplatePart[] {
  const out: TemplatePart[] = [];
  let text = '';
  let i = 0;
  while (i < value.length) {
    const open = value.indexOf('{{', i);
    if (open < 0) break;
    text += value.slice(i, open);
    EXPRESSION_OPEN.lastIndex = open;
    if (EXPRESSION_OPEN.test(value)) {
      const end = expressionEnd(value, EXPRESSION_OPEN.lastIndex);
      if (end >= 0) {
        if (text) out.push({ kind: 'text', text });
        text = '';
        out.push({ kind: 'expression', text: value.slice(open, end + 2), source: value.slice(EXPRESSION_OPEN.lastIndex, end).trim() });
        i = end + 2;
        continue;
      }
    } else {
      VARIABLE_AT.lastIndex = open;
      const m = VARIABLE_AT.exec(value);
      if (m) {
        if (text) out.push({ kind: 'text', text });
        text = '';
        out.push({ kind: 'variable', text: m[0], path: m[1] ?? '' });
        i = open + m[0].length;
        continue;
      }
    }
    text += '{{';
    i = open + 2;
  }
  text += value.slice(i);
  if (text) out.push({ kind: 'text', text });
  return out;
}

/** The index of the `}}` closing an expression whose body starts at `from`, or -1. */
function expressionEnd(value: string, from: number): number {
  let depth = 0;
  for (let i = from; i < value.length; i++) {
    const c = value[i];
    if (c === '"' || c === "'" || c === '`') {
      // A string (or a backquoted name): skip to its closing quote, honouring backslash escapes.
      for (i++; i < value.length && value[i] !== c; i++) if (value[i] === '\\' && c !== '`') i++;
      continue;
    }
    if (c === '/' && value[i + 1] === '*') {
      const close = value.indexOf('*/', i + 2);
      if (close < 0) return -1;
      i = close + 1;
      continue;
    }
    // Only braces count: a `}}` inside brackets or parentheses is a syntax error the compiler names, not text.
    if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0 && value[i + 1] === '}') return i;
      depth = Math.max(0, depth - 1);
    }
  }
  return -1;
}

type Compiled = ReturnType<typeof jsonata>;
const cache = new Map<string, Compiled>();
const inline = new Map<string, boolean>();

/**
 * Whether an expression may run inline, on the caller's thread (docs/workflow-engine.md,
 * "Isolation"): decided once per source from its JSONata syntax tree. Inline are expressions made
 * only of field paths (a literal index at most), literals, arithmetic, comparison, boolean and `&`
 * operators, `in`, conditionals, array and object constructors and literal ranges of at most
 * maxInlineRange items, in at most maxInlineNodes nodes: their cost is linear in the data they read,
 * they cannot loop or backtrack. Anything else (a function call, a regex, a lambda, a variable
 * binding, `$$`, a filter, a wildcard, sorting, grouping, a computed range) runs in the sandbox.
 * An expression that does not compile is not inline (evaluating it fails the same way anywhere).
 */
export function expressionRunsInline(source: string): boolean {
  let known = inline.get(source);
  if (known !== undefined) return known;
  try {
    let nodes = 0;
    known = inlineSafe(compileExpression(source).ast() as unknown as AstNode, () => ++nodes <= EXPRESSION_LIMITS.maxInlineNodes);
  } catch {
    known = false;
  }
  if (inline.size >= EXPRESSION_LIMITS.cacheSize) inline.delete(inline.keys().next().value!);
  inline.set(source, known);
  return known;
}

const INLINE_OPERATORS = new Set(['+', '-', '*', '/', '%', '=', '!=', '<', '<=', '>', '>=', '&', 'and', 'or', 'in']);
/** JSONata's syntax tree, as far as inlineSafe reads it. */
interface AstNode {
  type: string;
  value?: unknown;
  steps?: AstNode[];
  stages?: { type: string; expr?: AstNode }[];
  expressions?: AstNode[];
  expression?: AstNode;
  lhs?: AstNode | AstNode[][];
  rhs?: AstNode;
  condition?: AstNode;
  then?: AstNode;
  else?: AstNode;
  group?: unknown;
  focus?: unknown;
  tuple?: unknown;
  index?: unknown;
  predicate?: unknown;
}

function inlineSafe(node: AstNode | undefined, count: () => boolean): boolean {
  if (!node || !count()) return false;
  const n = node;
  if (n.group !== undefined || n.focus !== undefined || n.tuple !== undefined || n.index !== undefined || n.predicate !== undefined) return false;
  const all = (list: AstNode[] | undefined) => (list ?? []).every((x) => inlineSafe(x, count));
  switch (n.type) {
    case 'string':
    case 'number':
    case 'value':
      return true;
    case 'variable':
      return n.value === ''; // `$`, the current value; `$$` and named variables are not inline
    case 'name':
      // A field; a literal index (`lines[0]`) is the only filter taken inline.
      return (n.stages ?? []).every((s) => s.type === 'filter' && s.expr?.type === 'number');
    case 'path':
      return (n.steps ?? []).length > 0 && all(n.steps);
    case 'binary': {
      const lhs = n.lhs as AstNode | undefined;
      if (n.value === '..') {
        const lo = lhs?.type === 'number' ? Number(lhs.value) : NaN;
        const hi = n.rhs?.type === 'number' ? Number(n.rhs.value) : NaN;
        return Number.isFinite(lo) && Number.isFinite(hi) && hi - lo < EXPRESSION_LIMITS.maxInlineRange;
      }
      return INLINE_OPERATORS.has(String(n.value)) && inlineSafe(lhs, count) && inlineSafe(n.rhs, count);
    }
    case 'unary':
      if (n.value === '-') return inlineSafe(n.expression, count);
      if (n.value === '[') return all(n.expressions);
      if (n.value === '{') return ((n.lhs ?? []) as AstNode[][]).every((pair) => pair.length === 2 && all(pair));
      return false;
    case 'condition':
      return inlineSafe(n.condition, count) && inlineSafe(n.then, count) && (n.else === undefined || inlineSafe(n.else, count));
    case 'block':
      return all(n.expressions);
    default:
      return false; // function, partial, lambda, bind, regex, apply, sort, transform, wildcard, descendant, parent, …
  }
}

/** Compiles (or takes from the cache) one expression; throws ExpressionError naming the position of a syntax error. */
export function compileExpression(source: string): Compiled {
  const cached = cache.get(source);
  if (cached) return cached;
  if (source === '') throw new ExpressionError(source, 'is empty: write {{= <expression> }}');
  if (source.length > EXPRESSION_LIMITS.maxSourceLength) throw new ExpressionError(source, `is longer than ${EXPRESSION_LIMITS.maxSourceLength} characters`);
  let compiled: Compiled;
  try {
    compiled = jsonata(source, { timeout: EXPRESSION_LIMITS.timeoutMs, stack: EXPRESSION_LIMITS.maxDepth, sequence: EXPRESSION_LIMITS.maxSequence });
  } catch (err) {
    throw new ExpressionError(source, `is not valid: ${jsonataMessage(err)}`);
  }
  if (cache.size >= EXPRESSION_LIMITS.cacheSize) cache.delete(cache.keys().next().value!);
  cache.set(source, compiled);
  return compiled;
}

/** The first problem of a template's expressions (syntax, an unclosed `{{=`), or null: for validation on save. */
export function templateExpressionProblem(value: string): string | null {
  if (!hasExpression(value)) return null;
  const parts = templateParts(value);
  for (const part of parts) {
    if (part.kind === 'expression') {
      try {
        compileExpression(part.source);
      } catch (err) {
        return (err as Error).message;
      }
    } else if (part.kind === 'text' && hasExpression(part.text)) {
      return `has an expression "${clip(part.text.slice(part.text.search(/\{\{\s*=/)))}" without its closing }}`;
    }
  }
  return null;
}

/**
 * Every string inside a node's params with its path (`body.items.0`), for checking them on save. A
 * string holding a JSON object or array (an HTTP body written as JSON text) is checked as the engine
 * renders it: parsed first, so an expression's quotes are read unescaped.
 */
export function templateStrings(value: unknown, path = ''): { path: string; value: string }[] {
  const at = (key: string | number) => (path ? `${path}.${key}` : String(key));
  if (typeof value === 'string') {
    if (/^\s*[[{]/.test(value) && hasExpression(value)) {
      try {
        const parsed = JSON.parse(value) as unknown;
        if (parsed !== null && typeof parsed === 'object') return templateStrings(parsed, path);
      } catch {
        // Not JSON: checked as the text it is.
      }
    }
    return [{ path, value }];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => templateStrings(v, at(i)));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => templateStrings(v, at(k)));
  return [];
}

/** JSONata's own functions the sandbox replaces with bounded ones, and the date functions (expression-dates.ts). */
const BINDINGS = {
  ...DATE_FUNCTIONS,
  pad: (s: unknown, width: unknown, char?: unknown) => {
    if (typeof width === 'number' && Math.abs(width) > EXPRESSION_LIMITS.maxResultChars)
      throw new RangeError(`$pad's width is limited to ${EXPRESSION_LIMITS.maxResultChars}`);
    const str = typeof s === 'string' ? s : s === undefined ? undefined : JSON.stringify(s);
    if (str === undefined || typeof width !== 'number') return str;
    const fill = typeof char === 'string' && char !== '' ? char : ' ';
    return width < 0 ? str.padStart(-width, fill) : str.padEnd(width, fill);
  },
};

/**
 * Evaluates one expression against the scope. Resolves to a JSON value (a copy: it never shares
 * objects with the scope), or undefined when the expression yields nothing (a missing field).
 * Rejects with ExpressionError: syntax, time, depth, sequence or result size, a function as result.
 */
export async function evaluateExpression(source: string, scope: ExpressionScope): Promise<unknown> {
  const compiled = compileExpression(source);
  let result: unknown;
  try {
    result = await compiled.evaluate(scope, BINDINGS);
  } catch (err) {
    throw new ExpressionError(source, `failed: ${jsonataMessage(err)}`);
  }
  if (result === undefined) return undefined;
  if (isFunction(result)) throw new ExpressionError(source, 'yields a function, not a value');
  // A giant string (concatenations of a large field) is refused before it is copied as JSON.
  if (typeof result === 'string' && result.length > EXPRESSION_LIMITS.maxResultChars)
    throw new ExpressionError(source, `yields more than ${EXPRESSION_LIMITS.maxResultChars} characters`);
  let json: string | undefined;
  try {
    json = JSON.stringify(result, (_k, v: unknown) => (isFunction(v) ? undefined : v));
  } catch (err) {
    throw new ExpressionError(source, `yields a value that is not JSON: ${(err as Error).message}`);
  }
  if (json === undefined) return undefined;
  if (json.length > EXPRESSION_LIMITS.maxResultChars) throw new ExpressionError(source, `yields more than ${EXPRESSION_LIMITS.maxResultChars} characters`);
  return JSON.parse(json) as unknown;
}

/** A JavaScript function or a JSONata lambda (an object JSONata marks), which no JSON holds. */
function isFunction(value: unknown): boolean {
  if (typeof value === 'function') return true;
  if (value === null || typeof value !== 'object') return false;
  const marked = value as { _jsonata_lambda?: unknown; _jsonata_function?: unknown };
  return marked._jsonata_lambda === true || marked._jsonata_function === true;
}

function jsonataMessage(err: unknown): string {
  if (err instanceof RangeError) return err.message; // e.g. a string longer than the engine allows
  const e = err as { message?: string; position?: number; token?: string };
  const message = e?.message ?? String(err);
  return typeof e?.position === 'number' && e.position > 0 ? `${message} (at character ${e.position})` : message;
}

function clip(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
