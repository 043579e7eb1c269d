/**
 * Variable templating for node parameters: `{{trigger.a.b}}`, `{{trigger.headers.x-name}}`,
 * `{{nodes.<id>.body.x}}`. A variable is a path lookup and nothing more: no function calls, no
 * prototype walk, so a workflow author (or a hostile webhook payload) can never run code or read
 * engine internals. A missing path renders as '' and records a warning: a run must never crash
 * because a sender left a field out.
 *
 * Expressions (`{{= trigger.qty * trigger.price }}`) are JSONata, sandboxed and bounded in
 * @flowdesk/contracts/expressions. JSONata evaluates asynchronously while node handlers render
 * synchronously, so the executor calls `prepare` first: it evaluates the expressions the node's
 * render asks for once, and the render methods then read the results. An expression made of paths,
 * literals and operators evaluates here, inline; any other (functions, regexes, lambdas, …) goes to
 * the sandbox, all of one step's in one job (expressionRunsInline, docs/workflow-engine.md, "Isolation").
 */
import { evaluateExpression, ExpressionError, expressionRunsInline, hasExpression, templateParts, type TemplatePart } from '@flowdesk/contracts/expressions';
import { CREDENTIAL_REFERENCE, credentialNames } from '@flowdesk/contracts';
import type { Sandbox } from './sandbox-port.ts';
import type { CredentialValue, TypedCredential } from './ports.ts';

export { ExpressionError } from '@flowdesk/contracts/expressions';

export interface TemplateScope {
  /** The trigger's JSON body: `{{trigger.<path>}}`. */
  payload: Record<string, unknown>;
  /** Request headers, lower-cased: `{{trigger.headers.<name>}}`. */
  headers: Record<string, string>;
  /** Outputs of nodes that already ran: `{{nodes.<id>.<path>}}`. */
  nodes: ReadonlyMap<string, unknown>;
  /**
   * Plaintext of the owner's credentials the workflow refers to: `{{credentials.<name>}}`
   * (docs/credentials.md). Unlike a missing field, an unknown name fails the run: sending a request
   * without its secret would only fail later, less clearly.
   */
  credentials?: ReadonlyMap<string, CredentialValue>;
  /** The current element and its position inside For each: `{{= item.sku }}`, `{{= index }}`. */
  item?: unknown;
  index?: number;
  /** The run's clock, for an expression's `now` (default: the system clock). */
  clock?: () => Date;
  /** The webhook's body as received, base64 (only for workflows that need it: docs/webhooks.md, "Raw body"). */
  rawBody?: string;
  /** A `resume` Wait's link, known before it runs: `{{wait.<nodeId>.resumeUrl}}` (domain/resume-links.ts). */
  resumeUrl?: (nodeId: string) => { url: string } | { why: string };
  /** Where expressions that are not inline run, for `ownerId` (EnginePorts.sandbox). */
  sandbox: Sandbox;
  ownerId?: string;
  /** The run's signal: a sandbox job still queued when it aborts is dropped. */
  signal?: AbortSignal;
  /**
   * The step's run can park (a run, not a step test): sandboxed expressions are handed back with
   * SandboxThrottled instead of waiting for the owner's sandbox budget or workers (ExpressionsJob.parkWhenThrottled).
   */
  parkWhenThrottled?: boolean;
}

/** A `{{credentials.<name>}}` the owner has no credential for (or a malformed reference). */
export class CredentialReferenceError extends Error {}

// Defined with the other secret rules in libs/contracts (workspace-api's export lists the names too).
export { credentialNames };

/** Whether a template refers to a credential (its rendered value then carries a secret). */
export function refersToCredential(template: string): boolean {
  return new RegExp(CREDENTIAL_REFERENCE.source).test(template);
}

// Whitespace inside the braces is allowed; braces cannot nest, so a value containing "{{" is inert.
const VARIABLE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const EXACTLY_ONE_VARIABLE = /^\{\{\s*([^{}]*?)\s*\}\}$/;
// Segments that would reach Object.prototype or a constructor if a lookup ever used `in` or `[]`
// on a non-own property; refused by name as well as by the own-property rule below.
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);
const ARRAY_INDEX = /^(0|[1-9][0-9]{0,8})$/;

type Lookup = { found: true; value: unknown } | { found: false; why: string };

/**
 * Whether a node's params hold a `{{=` expression, once per params object (the definition cache
 * hands every run the same graph): most steps have none, and serialising their params per step was
 * measurable in bench:e2e.
 */
const expressionParams = new WeakMap<object, boolean>();
function paramsHaveExpression(params: unknown): boolean {
  if (params === null || typeof params !== 'object') return hasExpression(JSON.stringify(params) ?? '');
  let has = expressionParams.get(params);
  if (has === undefined) expressionParams.set(params, (has = hasExpression(JSON.stringify(params) ?? '')));
  return has;
}

/**
 * A template string as rendering reads it: its parts (text, variables with their path split, expressions),
 * and the one variable or expression the whole string is, if it is exactly one (renderDeep keeps that
 * value's JSON type). Parsed once per string and kept: a workflow's params are the same strings run
 * after run and loop item after loop item, and splitting them per render was a measurable part of a
 * For each's CPU (docs/performance.md).
 */
interface ParsedTemplate {
  parts: readonly RenderPart[];
  whole: RenderPart | null;
}
type RenderPart = Exclude<TemplatePart, { kind: 'variable' }> | { kind: 'variable'; text: string; path: string; segments: readonly string[] };

/** Parsed templates kept, least recently added dropped first; strings longer than TEMPLATE_CACHE_MAX_CHARS are parsed each time. */
export const TEMPLATE_CACHE_SIZE = 2_000;
const TEMPLATE_CACHE_MAX_CHARS = 4_096;
const parsedTemplates = new Map<string, ParsedTemplate>();

function parseTemplate(template: string): ParsedTemplate {
  const cached = parsedTemplates.get(template);
  if (cached) return cached;
  const withSegments = (part: TemplatePart): RenderPart => (part.kind === 'variable' ? { ...part, segments: part.path.split('.') } : part);
  let parts: RenderPart[];
  let whole: RenderPart | null = null;
  if (hasExpression(template)) {
    parts = templateParts(template).map(withSegments);
    // A string that is exactly one expression (surrounding blanks aside) keeps its JSON type.
    const [only, ...more] = templateParts(template.trim());
    if (only?.kind === 'expression' && more.length === 0) whole = only;
  } else {
    // No expression: the parts are the text between `{{path}}` variables, found as VARIABLE finds them
    // (what rendering matched before the cache: `{{{a}}}` is `{`, `{{a}}`, `}`).
    parts = [];
    let at = 0;
    for (const m of template.matchAll(VARIABLE)) {
      if (m.index > at) parts.push({ kind: 'text', text: template.slice(at, m.index) });
      const path = m[1] ?? '';
      parts.push({ kind: 'variable', text: m[0], path, segments: path.split('.') });
      at = m.index + m[0].length;
    }
    if (at < template.length) parts.push({ kind: 'text', text: template.slice(at) });
    if (EXACTLY_ONE_VARIABLE.test(template)) whole = parts[0]!;
  }
  const parsed = { parts, whole };
  if (template.length <= TEMPLATE_CACHE_MAX_CHARS) {
    if (parsedTemplates.size >= TEMPLATE_CACHE_SIZE) parsedTemplates.delete(parsedTemplates.keys().next().value!);
    parsedTemplates.set(template, parsed);
  }
  return parsed;
}

export class TemplateRenderer {
  /** Human-readable, deduplicated; the executor copies them onto the run. */
  readonly warnings: string[] = [];

  /** Results of the expressions `prepare` evaluated, by source. */
  private evaluated = new Map<string, unknown>();

  constructor(private readonly scope: TemplateScope) {}

  /** Set while `prepare` collects the expressions a render asks for. */
  private collecting: Set<string> | null = null;

  /**
   * Evaluates the `{{= … }}` expressions `render` (the node handler's render of `params`) asks for,
   * against the scope as it is now, so the real render can read them synchronously. The first,
   * collecting render sees every expression as empty and its result is dropped (render is pure);
   * params without an expression skip all this (undefined: nothing to wait for). Rejects with
   * ExpressionError (the node fails).
   */
  prepare(params: unknown, render: () => unknown): Promise<void> | undefined {
    if (this.evaluated.size > 0) this.evaluated = new Map();
    // Most steps have no expression: nothing to wait for (no promise, no turn of the event loop).
    if (!paramsHaveExpression(params)) return undefined;
    return this.evaluate(render);
  }

  private async evaluate(render: () => unknown): Promise<void> {
    const sources = new Set<string>();
    const warnings = this.warnings.length;
    this.collecting = sources;
    try {
      render();
    } catch {
      // The real render throws it again (a credential reference), where the executor expects it.
    } finally {
      this.collecting = null;
      this.warnings.splice(warnings);
    }
    if (sources.size === 0) return;
    const scope = this.data();
    let sandboxed: string[] | undefined;
    for (const source of sources) {
      if (expressionRunsInline(source)) this.evaluated.set(source, await evaluateExpression(source, scope));
      else (sandboxed ??= []).push(source);
    }
    if (!sandboxed) return;
    const values = await this.scope.sandbox.evaluate({
      ownerId: this.scope.ownerId ?? '',
      sources: sandboxed,
      scope,
      ...(this.scope.signal ? { signal: this.scope.signal } : {}),
      ...(this.scope.parkWhenThrottled ? { parkWhenThrottled: true } : {}),
    });
    sandboxed.forEach((source, i) => this.evaluated.set(source, values[i]));
  }

  /** The value of a secret credential named by a node's param (Verify signature); an unknown name fails the node. */
  credential(name: string): string {
    const value = this.scope.credentials?.get(name);
    if (value === undefined) throw new CredentialReferenceError(`unknown credential "${name}": create it under Settings → Credentials`);
    if (typeof value !== 'string') throw new CredentialReferenceError(`credential "${name}" is of type ${value.type}; this node needs a secret credential`);
    return value;
  }

  /**
   * A credential named by a node's `credential` param, of one of `types` (HTTP Request: header, query,
   * bearer, basic; Send Email: smtp; Slack: slack_bot or webhook_url; Discord: webhook_url; Telegram: telegram_bot). An unknown name or another type fails the node, naming both.
   */
  typedCredential(name: string, types: readonly string[]): TypedCredential {
    const value = this.scope.credentials?.get(name);
    if (value === undefined) throw new CredentialReferenceError(`unknown credential "${name}": create it under Settings → Credentials`);
    const typed = typeof value === 'string' ? { type: 'secret', fields: { value } } : value;
    if (!types.includes(typed.type))
      throw new CredentialReferenceError(`credential "${name}" is of type ${typed.type}; this node takes a credential of type ${types.join(', ')}`);
    if (typeof value !== 'string' && value.problem) throw new CredentialReferenceError(value.problem);
    return typed;
  }

  /** The webhook request as received: its (lower-cased) headers and raw body bytes, when ingest kept them. */
  request(): { headers: Readonly<Record<string, string>>; rawBody?: Buffer } {
    if (this.scope.rawBody !== undefined) this.rawBytes ??= Buffer.from(this.scope.rawBody, 'base64');
    return { headers: this.scope.headers, ...(this.rawBytes ? { rawBody: this.rawBytes } : {}) };
  }

  private rawBytes?: Buffer;
  private rawText?: string;

  /** The data an expression or the Code node sees: trigger, headers, earlier outputs, the item, `now`; `rawBody` (text) when kept. */
  data(): {
    trigger: Record<string, unknown>;
    headers: Record<string, string>;
    nodes: Record<string, unknown>;
    item?: unknown;
    index?: number;
    now: string;
    rawBody?: string;
  } {
    if (this.scope.rawBody !== undefined) this.rawText ??= this.request().rawBody!.toString('utf8');
    return {
      trigger: this.scope.payload,
      headers: this.scope.headers,
      nodes: Object.fromEntries(this.scope.nodes),
      ...(this.rawText !== undefined && { rawBody: this.rawText }),
      ...(this.scope.item !== undefined && { item: this.scope.item, index: this.scope.index }),
      now: (this.scope.clock?.() ?? new Date()).toISOString(),
    };
  }

  /** Renders every variable and expression of a string; values are stringified (objects and arrays as JSON). */
  renderString(template: string, opts: { quiet?: boolean } = {}): string {
    const { parts } = parseTemplate(template);
    if (parts.length === 1 && parts[0]!.kind === 'text') return template;
    let out = '';
    for (const part of parts) out += this.partText(part, opts.quiet);
    return out;
  }

  private partText(part: RenderPart, quiet: boolean | undefined): string {
    if (part.kind === 'text') return part.text;
    if (part.kind === 'expression') return stringify(this.expression(part.source, quiet));
    return stringify(this.resolveSegments(part.path, part.segments, quiet));
  }

  /**
   * Renders a JSON value: string leaves are rendered, keys are kept as written. A string that is
   * exactly one variable keeps the value's JSON type, so `"{{trigger.amount}}"` sends a number.
   */
  renderDeep(value: unknown): unknown {
    if (typeof value === 'string') {
      const { whole } = parseTemplate(value);
      // A string that is exactly one expression keeps its JSON type: `"{{= $sum(trigger.lines.qty) }}"` sends a number.
      if (whole?.kind === 'expression') return this.expression(whole.source) ?? '';
      if (whole?.kind === 'variable') {
        const resolved = this.resolveSegments(whole.path, whole.segments);
        return resolved === undefined ? '' : structuredCloneJson(resolved);
      }
      return this.renderString(value);
    }
    if (Array.isArray(value)) return value.map((v) => this.renderDeep(v));
    if (isPlainObject(value)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.renderDeep(v);
      return out;
    }
    return value;
  }

  /** Renders each value of a string map (headers). */
  renderMap(map: Record<string, string> | undefined): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(map ?? {})) out[k] = this.renderString(v);
    return out;
  }

  /** The value of a variable path, or undefined (with a warning unless quiet) when missing. */
  resolve(path: string, quiet = false): unknown {
    return this.resolveSegments(path, path.split('.'), quiet);
  }

  private resolveSegments(path: string, segments: readonly string[], quiet = false): unknown {
    const result = this.lookup(path, segments);
    if (result.found) return result.value;
    if (!quiet) this.warn(`{{${path}}} is empty: ${result.why}`);
    return undefined;
  }

  /** The value `prepare` computed for an expression (undefined, with a warning unless quiet, when it yields nothing). */
  private expression(source: string, quiet = false): unknown {
    if (this.collecting) {
      this.collecting.add(source);
      return undefined;
    }
    if (!this.evaluated.has(source)) throw new ExpressionError(source, 'was not evaluated before rendering (an engine bug)');
    const value = this.evaluated.get(source);
    if (value === undefined && !quiet) this.warn(`{{= ${source} }} is empty: the expression yields nothing`);
    return value;
  }

  private warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  private lookup(path: string, segments: readonly string[]): Lookup {
    const root = segments[0];
    if (root === 'trigger') {
      // Header names may themselves contain dots, so everything after `headers.` is the name.
      if (segments[1] === 'headers' && segments.length > 2) {
        const name = segments.slice(2).join('.').toLowerCase();
        return Object.hasOwn(this.scope.headers, name) && !FORBIDDEN_SEGMENTS.has(name)
          ? { found: true, value: this.scope.headers[name] }
          : { found: false, why: 'no such header' };
      }
      return walk(this.scope.payload, segments, 1);
    }
    if (root === 'nodes') {
      const id = segments[1];
      if (!id) return { found: false, why: 'name a node: {{nodes.<id>.<field>}}' };
      if (!this.scope.nodes.has(id)) return { found: false, why: `node "${id}" has not run before this step` };
      return walk(this.scope.nodes.get(id), segments, 2);
    }
    if (root === 'credentials') {
      const rest = segments.slice(1);
      const name = rest.join('.');
      if (rest.length !== 1 || name === '') throw new CredentialReferenceError(`{{${path}}} is not a credential reference: write {{credentials.<name>}}`);
      const value = this.scope.credentials?.get(name);
      if (value === undefined)
        throw new CredentialReferenceError(`unknown credential "${name}" ({{credentials.${name}}}): create it under Settings → Credentials`);
      if (typeof value !== 'string')
        throw new CredentialReferenceError(
          `credential "${name}" is of type ${value.type}: choose it in the node's Credential field ({{credentials.<name>}} is for secret credentials)`,
        );
      return { found: true, value };
    }
    if (root === 'item' || root === 'index') {
      // Inside a For each's loop body only: the current element ({{item.sku}}) and its position.
      if (this.scope.item === undefined) return { found: false, why: `{{${root}}} is only set inside a For each's loop body` };
      if (root === 'index') return segments.length === 1 ? { found: true, value: this.scope.index } : { found: false, why: 'an index has no fields' };
      return walk(this.scope.item, segments, 1);
    }
    if (root === 'wait') {
      const [id, field, ...more] = segments.slice(1);
      if (!id || field !== 'resumeUrl' || more.length > 0) return { found: false, why: 'write {{wait.<nodeId>.resumeUrl}}' };
      const link = this.scope.resumeUrl?.(id) ?? { why: 'this run has no resume links' };
      return 'url' in link ? { found: true, value: link.url } : { found: false, why: link.why };
    }
    return { found: false, why: 'unknown variable (variables start with trigger., nodes., credentials., wait., or inside a For each item. and index)' };
  }
}

/** The value at segments[from…] inside start (the whole of it when there are none). */
function walk(start: unknown, segments: readonly string[], from = 0): Lookup {
  let current: unknown = start;
  for (let i = from; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment === '' || FORBIDDEN_SEGMENTS.has(segment)) return { found: false, why: 'no such field' };
    if (Array.isArray(current)) {
      const index = ARRAY_INDEX.test(segment) ? Number(segment) : -1;
      if (index < 0 || index >= current.length) return { found: false, why: 'no such field' };
      current = current[index];
    } else if (isPlainObject(current) && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      // Strings, numbers and null have no fields here: `{{trigger.name.length}}` is missing.
      return { found: false, why: 'no such field' };
    }
  }
  return { found: true, value: current };
}

/** How a value reads inside a longer string: null and missing as '', objects as JSON. */
export function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? '';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

// A JSON body must not share objects with the trigger payload or earlier outputs (a later step
// mutating its body would otherwise change recorded data).
function structuredCloneJson(value: unknown): unknown {
  return value !== null && typeof value === 'object' ? JSON.parse(JSON.stringify(value)) : value;
}

/** The value at a dotted path inside a value (`customer.email`, `lines.0.qty`), or undefined; the same rules as a variable's path. */
export function valueAtPath(value: unknown, path: string): unknown {
  if (path === '') return value;
  const found = walk(value, path.split('.'));
  return found.found ? found.value : undefined;
}
