/**
 * An n8n workflow file (what n8n's "Download" writes) read as a Flowdesk workflow file
 * (docs/workflow-export.md, "Importing from n8n"). Pure: n8n's JSON in, a `WorkflowImportBody` out
 * with what could not be taken as it was, per step. `POST /workflows/import` then reads that body as
 * it reads any file (readImport: node schemas, graph, trigger settings), so an n8n file meets the
 * same checks and limits as a Flowdesk one.
 *
 * Each n8n node is mapped to a Flowdesk step (MAPPERS), left out with its reason (`leftOut`, with
 * the steps reached only through it — readImport drops those), or joined over (No Op, a disabled
 * node: n8n passes the data through it). n8n expressions `={{ $json.x }}`, `$('Name').item.json.x`
 * are rewritten to Flowdesk's `{{trigger.x}}` / `{{nodes.<id>.x}}`; any other is kept as text and listed.
 */
import Type, { type Static } from 'typebox';
import { Check, Errors } from 'typebox/value';
import {
  CONDITION_MAX_RULES,
  credentialType,
  HttpError,
  loopBodies,
  SWITCH_MAX_RULES,
  NODE_SCHEMAS,
  NODE_TYPES,
  WORKFLOW_EXPORT_FORMAT,
  WORKFLOW_EXPORT_FORMAT_VERSION,
  type ConditionOperatorName,
  type TriggerType,
  type WorkflowImportBody,
  type WorkflowImportProblem,
} from '@flowdesk/contracts';

/** The most nodes an n8n file may hold (sticky notes and No Ops included): the graph's own limit. */
export const N8N_MAX_NODES = 100;
/** The most connections it may hold. */
export const N8N_MAX_CONNECTIONS = 200;

const N8nConnection = Type.Object({
  node: Type.String({ minLength: 1, maxLength: 200 }),
  type: Type.String({ maxLength: 100 }),
  index: Type.Integer({ minimum: 0 }),
});
const N8nNode = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 200 })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    type: Type.String({ minLength: 1, maxLength: 200 }),
    typeVersion: Type.Optional(Type.Number()),
    position: Type.Optional(Type.Tuple([Type.Number(), Type.Number()])),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    disabled: Type.Optional(Type.Boolean()),
    credentials: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    onError: Type.Optional(Type.String({ maxLength: 100 })),
    retryOnFail: Type.Optional(Type.Boolean()),
    maxTries: Type.Optional(Type.Number()),
    waitBetweenTries: Type.Optional(Type.Number()),
  },
  { additionalProperties: true },
);
/** The part of n8n's workflow JSON the import reads (n8n writes more: id, meta, tags, versionId — ignored). */
export const N8nWorkflowFile = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    nodes: Type.Array(N8nNode, { maxItems: N8N_MAX_NODES }),
    connections: Type.Record(
      Type.String({ maxLength: 200 }),
      Type.Record(
        Type.String({ maxLength: 100 }),
        Type.Array(Type.Union([Type.Array(N8nConnection, { maxItems: N8N_MAX_CONNECTIONS }), Type.Null()]), { maxItems: 20 }),
      ),
    ),
    settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** Data pinned on nodes in n8n's editor: `{ "<node name>": [{ json: {…} }] }`. */
    pinData: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Array(Type.Unknown()))),
  },
  { additionalProperties: true },
);
export type N8nWorkflowFile = Static<typeof N8nWorkflowFile>;
type N8nNode = Static<typeof N8nNode>;

/** An n8n file rather than a Flowdesk one: `nodes` and `connections`, no `format`. */
export function isN8nFile(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  return !('format' in b) && Array.isArray(b.nodes) && b.connections !== null && typeof b.connections === 'object';
}

export interface N8nImport {
  /** The Flowdesk file to import. */
  file: WorkflowImportBody;
  /** Steps in the file that readImport leaves out (with the steps reached only through them), with the reason. */
  leftOut: Map<string, string>;
  /** What else could not be taken as it was. */
  problems: WorkflowImportProblem[];
}

const N8N = 'n8n-nodes-base.';
/** An n8n parameter as text: a string as it is, a number or boolean written out, an object as JSON, nothing as `fallback`. */
const text = (v: unknown, fallback = ''): string =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : v === undefined || v === null ? fallback : JSON.stringify(v);
/** `map[key]` when the map has that key itself (a key of n8n's file is never read off Object.prototype). */
const own = <T>(map: Record<string, T>, key: string): T | undefined => (Object.hasOwn(map, key) ? map[key] : undefined);
const refuse = (reason: string): never => {
  throw new HttpError('validation_failed', `The n8n file cannot be imported: ${reason}`);
};
const schemaOf = new Map<string, (typeof NODE_SCHEMAS)[number]>(NODE_TYPES.map((d, i) => [d.type, NODE_SCHEMAS[i]!]));

// ---- Triggers ----

const TRIGGERS: Record<string, TriggerType> = {
  webhook: 'webhook',
  scheduleTrigger: 'schedule',
  manualTrigger: 'manual',
  start: 'manual',
  executeWorkflowTrigger: 'manual',
  errorTrigger: 'error',
};
const isTriggerType = (type: string) => Object.hasOwn(TRIGGERS, short(type)) || /trigger$/i.test(type);
const short = (type: string) => (type.startsWith(N8N) ? type.slice(N8N.length) : type);

/** n8n's Schedule Trigger rule as a five-field cron, or why not. */
export function scheduleCron(params: Record<string, unknown>): { cron?: string; problem?: string } {
  const rule = (params.rule as { interval?: Record<string, unknown>[] } | undefined)?.interval ?? [{}];
  const first = rule[0] ?? {};
  const several = rule.length > 1;
  const int = (v: unknown, d: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : d);
  const field = (first.field as string | undefined) ?? 'days';
  const at = (h: number, m: number) => `${int(first.triggerAtMinute, m)} ${int(first.triggerAtHour, h)}`;
  const every = (n: number) => (n > 1 ? `*/${n}` : '*');
  let cron: string;
  switch (field) {
    case 'cronExpression': {
      const fields = text(first.expression, '').trim().split(/\s+/);
      if (fields.length === 5) cron = fields.join(' ');
      else if (fields.length === 6 && fields[0] === '0') cron = fields.slice(1).join(' ');
      else return { problem: `its cron expression "${text(first.expression, '')}" has seconds or is not five fields` };
      break;
    }
    case 'minutes':
      cron = `${every(int(first.minutesInterval, 5))} * * * *`;
      break;
    case 'hours':
      cron = `${int(first.triggerAtMinute, 0)} ${every(int(first.hoursInterval, 1))} * * *`;
      break;
    case 'days':
      cron = `${at(0, 0)} ${every(int(first.daysInterval, 1))} * *`;
      break;
    case 'weeks': {
      if (int(first.weeksInterval, 1) !== 1) return { problem: `it runs every ${text(first.weeksInterval)} weeks, which a cron cannot say` };
      const days = Array.isArray(first.triggerAtDay) && first.triggerAtDay.length ? first.triggerAtDay.map((d) => int(d, 0)).join(',') : '0';
      cron = `${at(0, 0)} * * ${days}`;
      break;
    }
    case 'months':
      cron = `${at(0, 0)} ${int(first.triggerAtDayOfMonth, 1)} ${every(int(first.monthsInterval, 1))} *`;
      break;
    default:
      return { problem: `its interval "${field}" is shorter than a minute or not one Flowdesk reads` };
  }
  return several ? { cron, problem: `only the first of its ${rule.length} rules was taken` } : { cron };
}

// ---- Expressions ----

/** What a rewrite needs to know about the graph. */
interface Graph {
  idOf: Map<string, string>;
  byName: Map<string, N8nNode>;
  /** The only node feeding each node, after No Ops and disabled nodes are joined over (absent: none or several). */
  sourceOf: Map<string, string>;
  triggerName: string | null;
  triggerType: TriggerType;
  /** Flowdesk step type of each mapped node. */
  stepType: Map<string, string>;
  /** Where n8n's `$json.<segments>` of a mapped node is in its Flowdesk output (absent: the same path; null: nowhere). */
  read: Map<string, (segments: string[]) => string[] | null>;
  /** Disabled n8n nodes kept as placeholder steps: n8n passed their input on. */
  placeholders: Set<string>;
  /** Each Loop Over Items (a For each) and the nodes of its loop. */
  loopBody: Map<string, Set<string>>;
  /** Each Loop Over Items' last loop node (the one edge back into it), whose outputs are the For each's results. */
  loopLast: Map<string, string>;
}
/** A Split Out (or Item Lists' split out items) node. */
const isSplitOut = (n: N8nNode) =>
  n.type.startsWith(N8N) &&
  (short(n.type) === 'splitOut' || (short(n.type) === 'itemLists' && text(n.parameters?.operation, 'splitOutItems') === 'splitOutItems'));
/** Nodes whose n8n output is their input (Flowdesk's outputs differ): `$json` after them reads the node before. */
const PASS_THROUGH = new Set(['condition', 'switch', 'wait', 'respond', 'stop']);

const PATH = String.raw`((?:\.[A-Za-z_$][\w$-]*|\[\s*(?:'[^']*'|"[^"]*"|\d+)\s*\])*)`;
const JSON_RE = new RegExp(String.raw`^\$(?:json|input\.(?:item|first\(\)|last\(\))\.json)${PATH}$`);
const NODE_RE = new RegExp(
  String.raw`^\$(?:\(\s*(?:'([^']+)'|"([^"]+)")\s*\)\.(?:item|first\(\)|last\(\)|all\(\)\[0\])|node\[\s*(?:'([^']+)'|"([^"]+)")\s*\])\.json${PATH}$`,
);

const segmentsOf = (path: string): string[] | null => {
  const out: string[] = [];
  for (const m of path.matchAll(/\.([A-Za-z_$][\w$-]*)|\[\s*(?:'([^']*)'|"([^"]*)"|(\d+))\s*\]/g)) out.push(m[1] ?? m[2] ?? m[3] ?? m[4]!);
  return out.every((s) => /^[\w-]+$/.test(s)) ? out : null;
};

/** The Flowdesk path of n8n node `name`'s output at `segments` as node `consumer` reads it, or null when it has none. */
function producerPath(g: Graph, name: string | undefined, segments: string[], consumer: string, hops = 0): string | null {
  if (name === undefined || hops > N8N_MAX_NODES) return null;
  const join = (base: string, segs: string[]) => [base, ...segs].join('.');
  if (name === g.triggerName) {
    if (g.triggerType === 'webhook') {
      if (segments[0] === 'body') return join('trigger', segments.slice(1));
      if (segments[0] === 'headers') return join('trigger', segments);
      return null;
    }
    return g.triggerType === 'manual' ? join('trigger', segments) : null;
  }
  const type = g.stepType.get(name);
  if (!type) return null;
  if (g.placeholders.has(name) || PASS_THROUGH.has(type)) return producerPath(g, g.sourceOf.get(name), segments, consumer, hops + 1);
  // Inside a Loop Over Items, `$json` of it is the current item; after it (done) n8n's items are not Flowdesk's results.
  if (type === 'for_each') {
    if (!g.loopBody.get(name)?.has(consumer)) return null;
    // Split Out gives an element that is not an object as `{ <field>: element }`.
    const key = isSplitOut(g.byName.get(name)!) ? text(g.byName.get(name)!.parameters?.fieldToSplitOut, '').trim() : '';
    return join('item', key && segments[0] === key ? segments.slice(1) : segments);
  }
  const read = g.read.get(name);
  const path = read ? read(segments) : segments;
  return path ? join(`nodes.${g.idOf.get(name)!}`, path) : null;
}

/** One n8n parameter value as Flowdesk text: `={{ $json.x }}` → `{{trigger.x}}` / `{{nodes.<id>.x}}`; what is not rewritable is kept and returned in `kept`. */
export function rewriteValue(value: unknown, g: Graph, node: string, kept: string[]): string {
  if (typeof value !== 'string') return text(value);
  if (!value.startsWith('=')) return value;
  // A scan by indexOf, not a lazy regex: a text of many `{{` and no `}}` stays linear.
  const source = value.slice(1);
  let out = '';
  let at = 0;
  for (let open = source.indexOf('{{'); open >= 0; open = source.indexOf('{{', at)) {
    const close = source.indexOf('}}', open + 2);
    if (close < 0) break;
    const whole = source.slice(open, close + 2);
    out += source.slice(at, open) + (rewriteExpression(whole.slice(2, -2).trim(), g, node) ?? (kept.push(whole), whole));
    at = close + 2;
  }
  return out + source.slice(at);
}

/** One n8n expression's source as a Flowdesk variable (`{{nodes.<id>.x}}`), or null. */
function rewriteExpression(src: string, g: Graph, node: string): string | null {
  if (src.length > 2_000) return null;
  const j = JSON_RE.exec(src);
  const n = j ? null : NODE_RE.exec(src);
  const segs = j ? segmentsOf(j[1]!) : n ? segmentsOf(n[5]!) : null;
  const from = j ? g.sourceOf.get(node) : n ? (n[1] ?? n[2] ?? n[3] ?? n[4]) : undefined;
  const path = segs ? producerPath(g, from, segs, node) : null;
  return path ? `{{${path}}}` : null;
}

/** An n8n value read as JSON after its expressions are rewritten (a JSON body), or undefined when it is not JSON. */
function rewriteJson(value: unknown, g: Graph, node: string, kept: string[]): unknown {
  if (value !== null && typeof value === 'object') return value;
  const text = rewriteValue(value, g, node, kept);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// ---- Conditions (If, Filter: n8n's conditions v2) ----

const OPERATORS: Record<string, ConditionOperatorName> = {
  exists: 'exists',
  notExists: 'not_exists',
  empty: 'is_empty',
  notEmpty: 'is_not_empty',
  equals: 'equals',
  notEquals: 'not_equals',
  gt: 'greater_than',
  gte: 'greater_or_equal',
  lt: 'less_than',
  lte: 'less_or_equal',
  true: 'is_true',
  false: 'is_false',
};
const STRING_OPERATORS: Record<string, ConditionOperatorName> = {
  contains: 'contains',
  notContains: 'not_contains',
  startsWith: 'starts_with',
  notStartsWith: 'not_starts_with',
  endsWith: 'ends_with',
  notEndsWith: 'not_ends_with',
};
interface N8nCondition {
  leftValue?: unknown;
  rightValue?: unknown;
  operator?: { type?: string; operation?: string; singleValue?: boolean };
}
/** n8n's conditions v2 as rules and a combinator, or why not. */
function conditionsOf(
  params: Record<string, unknown>,
): { rules: { left: unknown; operator: ConditionOperatorName; right?: unknown }[]; combinator: 'and' | 'or' } | string {
  const c = params.conditions as { conditions?: N8nCondition[]; combinator?: string } | undefined;
  if (!c || !Array.isArray(c.conditions)) return 'its conditions are not n8n’s conditions v2 (If 2 or later): open it in a recent n8n and export again';
  if (c.conditions.length === 0) return 'it has no conditions';
  if (c.conditions.length > CONDITION_MAX_RULES) return `it has ${c.conditions.length} conditions, more than ${CONDITION_MAX_RULES}`;
  const rules = [];
  for (const cond of c.conditions) {
    const type = cond.operator?.type ?? 'string';
    const operation = cond.operator?.operation ?? 'equals';
    const op = own(OPERATORS, operation) ?? (type === 'string' ? own(STRING_OPERATORS, operation) : undefined);
    if (!op || type === 'dateTime' || (type === 'array' && !['exists', 'notExists', 'empty', 'notEmpty'].includes(operation)))
      return `its ${type} comparison "${operation}" has no Flowdesk equivalent`;
    const unary = ['exists', 'not_exists', 'is_empty', 'is_not_empty', 'is_true', 'is_false'].includes(op);
    rules.push({ left: cond.leftValue, operator: op, ...(unary ? {} : { right: cond.rightValue }) });
  }
  return { rules, combinator: c.combinator === 'or' ? 'or' : 'and' };
}

/** If 1's conditions: lists of `boolean`, `number`, `string` (and `dateTime`) comparisons, `combineOperation` all / any. */
const V1_OPERATORS: Record<string, Record<string, ConditionOperatorName>> = {
  boolean: { equal: 'equals', notEqual: 'not_equals' },
  number: {
    smaller: 'less_than',
    smallerEqual: 'less_or_equal',
    equal: 'equals',
    notEqual: 'not_equals',
    larger: 'greater_than',
    largerEqual: 'greater_or_equal',
    isEmpty: 'is_empty',
    isNotEmpty: 'is_not_empty',
  },
  string: {
    equal: 'equals',
    notEqual: 'not_equals',
    contains: 'contains',
    notContains: 'not_contains',
    startsWith: 'starts_with',
    notStartsWith: 'not_starts_with',
    endsWith: 'ends_with',
    notEndsWith: 'not_ends_with',
    isEmpty: 'is_empty',
    isNotEmpty: 'is_not_empty',
  },
};
/** Each type's default operation, as If 1 writes none for it. */
const V1_DEFAULT: Record<string, string> = { boolean: 'equal', number: 'smaller', string: 'equal' };
type Rules = { rules: { left: unknown; operator: ConditionOperatorName; right?: unknown }[]; combinator: 'and' | 'or' };
/** If 1's conditions as rules (n8n checks boolean, then number, then string ones), or why not. */
function conditionsV1(params: Record<string, unknown>): Rules | string {
  const c = (params.conditions ?? {}) as Record<string, unknown>;
  const rules: Rules['rules'] = [];
  for (const type of ['boolean', 'dateTime', 'number', 'string']) {
    const list = c[type];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return `its ${type} conditions are not a list`;
    if (type === 'dateTime' && list.length) return 'it compares dates (occurred before / after), which Flowdesk compares only as text';
    for (const cond of list as { value1?: unknown; value2?: unknown; operation?: unknown }[]) {
      const operation = text(cond?.operation, V1_DEFAULT[type]);
      const op = own(V1_OPERATORS[type]!, operation);
      if (!op) return `its ${type} comparison "${operation}" has no Flowdesk equivalent`;
      const unary = op === 'is_empty' || op === 'is_not_empty';
      rules.push({ left: cond.value1 ?? '', operator: op, ...(unary ? {} : { right: cond.value2 ?? (type === 'boolean' ? false : '') }) });
    }
  }
  if (rules.length === 0) return 'it has no conditions';
  if (rules.length > CONDITION_MAX_RULES) return `it has ${rules.length} conditions, more than ${CONDITION_MAX_RULES}`;
  return { rules, combinator: params.combineOperation === 'any' ? 'or' : 'and' };
}

// ---- Nodes ----

interface Mapped {
  type: string;
  params: Record<string, unknown>;
  /** Needs a look before it runs (kept). */
  attention?: string[];
  /** The step's name, when not the n8n node's. */
  name?: string;
  /** The Flowdesk branches of each n8n output (absent: one output, no branch). */
  outputs?: string[][];
  /** Where `$json.<segments>` of the n8n node is in the step's output (absent: the same path; null: nowhere). */
  read?: (segments: string[]) => string[] | null;
}
type Mapper = (p: Record<string, unknown>, ctx: { g: Graph; node: N8nNode; kept: string[] }) => Mapped | string;
const rw = (ctx: { g: Graph; node: N8nNode; kept: string[] }, v: unknown) => rewriteValue(v, ctx.g, ctx.node.name, ctx.kept);
const pairs = (v: unknown): { name?: unknown; value?: unknown }[] => {
  const list = (v as { parameters?: unknown } | undefined)?.parameters;
  return Array.isArray(list) ? (list as { name?: unknown; value?: unknown }[]) : [];
};
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,99}$/;

/** The output of the node feeding `node` as one variable (`{{nodes.<id>}}`), or null. */
const inputOf = (ctx: { g: Graph; node: N8nNode }) => {
  const path = producerPath(ctx.g, ctx.g.sourceOf.get(ctx.node.name), [], ctx.node.name);
  return path ? `{{${path}}}` : null;
};

const MAPPERS: Record<string, Mapper> = {
  if: (p, ctx) => {
    const v1 = (ctx.node.typeVersion ?? 1) < 2;
    const c = v1 ? conditionsV1(p) : conditionsOf(p);
    if (typeof c === 'string') return c;
    return {
      type: 'condition',
      params: {
        rules: c.rules.map((r) => ({ left: rw(ctx, r.left), operator: r.operator, ...('right' in r ? { right: rw(ctx, r.right) } : {}) })),
        combinator: c.combinator,
      },
      outputs: [['true'], ['false']],
    };
  },
  filter: (p, ctx) => {
    const c = conditionsOf(p);
    if (typeof c === 'string') return c;
    const items = inputOf(ctx);
    if (!items) return 'the items it filters are not the output of one step Flowdesk has';
    const rules = [];
    for (const r of c.rules) {
      const m = typeof r.left === 'string' ? JSON_RE.exec(r.left.replace(/^=\{\{\s*|\s*\}\}$/g, '')) : null;
      const segs = m ? segmentsOf(m[1]!) : null;
      if (!segs) return `a condition checks "${text(r.left)}", not a field of each item ($json.<field>)`;
      rules.push({ ...(segs.length ? { field: segs.join('.') } : {}), operator: r.operator, ...('right' in r ? { right: rw(ctx, r.right) } : {}) });
    }
    return {
      type: 'filter',
      params: { items, rules, combinator: c.combinator },
      attention: [`n8n filtered the items reaching it; Flowdesk's Filter filters one list (${items}): check it is the list meant`],
      read: () => null,
    };
  },
  set: (p, ctx) => {
    if ((p.mode ?? 'manual') !== 'manual') return `its mode "${text(p.mode)}" (JSON) is not read: only fields set one by one`;
    const v = ctx.node.typeVersion ?? 1;
    let list: { name: unknown; value: unknown }[];
    if (v >= 3.3)
      list = ((p.assignments as { assignments?: { name: unknown; value: unknown }[] } | undefined)?.assignments ?? []).map((a) => ({
        name: a.name,
        value: a.value,
      }));
    else if (v >= 3)
      list = ((p.fields as { values?: Record<string, unknown>[] } | undefined)?.values ?? []).map((f) => ({
        name: f.name,
        value: f[`${text(f.type, 'stringValue')}`] ?? f.stringValue,
      }));
    else
      list = Object.values((p.values as Record<string, { name: unknown; value: unknown }[]> | undefined) ?? {})
        .flat()
        .map((f) => ({ name: f.name, value: f.value }));
    const bad = list.find((f) => typeof f.name !== 'string' || !FIELD_NAME.test(f.name));
    if (bad) return `its field name "${text(bad.name)}" is not one Flowdesk takes (letters, digits, _ and -; no dots)`;
    const keepsOthers = v >= 3.3 ? p.includeOtherFields === true : v >= 3 ? (p.include ?? 'none') !== 'none' : p.keepOnlySet !== true;
    return {
      type: 'set_fields',
      params: { fields: list.map((f) => ({ name: f.name, value: rw(ctx, f.value) })) },
      attention: keepsOthers ? ['n8n kept the other fields of its input as well; Flowdesk outputs only these fields'] : [],
    };
  },
  httpRequest: (p, ctx) => {
    if ((ctx.node.typeVersion ?? 1) < 3) return httpRequestV1(p, ctx);
    const method = text(p.method, 'GET').toUpperCase();
    if (!HTTP_METHODS.includes(method)) return `its method ${method} is not one Flowdesk sends`;
    let url = rw(ctx, p.url);
    const query = p.sendQuery === true ? pairs(p.queryParameters) : [];
    if (query.length) url += (url.includes('?') ? '&' : '?') + query.map((q) => `${encodeURIComponent(text(q.name, ''))}=${rw(ctx, q.value)}`).join('&');
    const params: Record<string, unknown> = { method, url };
    if (p.sendHeaders === true) {
      if ((p.specifyHeaders ?? 'keypair') !== 'keypair') return 'its headers are given as JSON: only name and value pairs are read';
      params.headers = Object.fromEntries(pairs(p.headerParameters).map((h) => [text(h.name, ''), rw(ctx, h.value)]));
    }
    if (p.sendBody === true) {
      if ((p.contentType ?? 'json') !== 'json') return `its body is sent as ${text(p.contentType)}: only JSON bodies are read`;
      if ((p.specifyBody ?? 'keypair') === 'json') {
        const body = rewriteJson(p.jsonBody, ctx.g, ctx.node.name, ctx.kept);
        if (body === undefined) return 'its JSON body is not JSON once its expressions are rewritten (built by code?)';
        params.body = body;
      } else params.body = Object.fromEntries(pairs(p.bodyParameters).map((b) => [text(b.name, ''), rw(ctx, b.value)]));
    }
    const timeout = (p.options as { timeout?: unknown } | undefined)?.timeout;
    if (typeof timeout === 'number') params.timeoutMs = Math.min(60_000, Math.max(100, Math.round(timeout)));
    return { type: 'http_request', params, read: (segments) => ['body', ...segments], attention: authAttention(p, ctx) };
  },
  respondToWebhook: (p, ctx) => {
    const options = (p.options ?? {}) as { responseCode?: unknown; responseHeaders?: { entries?: { name?: unknown; value?: unknown }[] } };
    const params: Record<string, unknown> = {};
    if (typeof options.responseCode === 'number') params.status = options.responseCode;
    const headers = options.responseHeaders?.entries ?? [];
    if (headers.length) params.headers = Object.fromEntries(headers.map((h) => [text(h.name, ''), rw(ctx, h.value)]));
    const how = text(p.respondWith, 'firstIncomingItem');
    if (how === 'json') {
      const body = rewriteJson(p.responseBody, ctx.g, ctx.node.name, ctx.kept);
      if (body === undefined) return 'its JSON body is not JSON once its expressions are rewritten';
      params.body = body;
    } else if (how === 'text') params.body = rw(ctx, p.responseBody);
    else if (how === 'firstIncomingItem' || how === 'allIncomingItems') {
      const input = inputOf(ctx);
      if (!input) return 'it answers with its input, which is not the output of one step Flowdesk has';
      params.body = input;
    } else if (how !== 'noData') return `it answers with ${how}, which Flowdesk's Respond does not send`;
    return { type: 'respond', params };
  },
  code: (p) => {
    if ((p.language ?? 'javaScript') !== 'javaScript') return `its language is ${text(p.language)}: Flowdesk's Code runs JavaScript`;
    const code = text(p.jsCode, '').trim();
    if (!code) return 'it has no code';
    return {
      type: 'code',
      params: { code },
      attention: [
        'its code is n8n’s: `$input`, `$json`, `items` and `$(…)` do not exist here (use `trigger`, `nodes.<id>`, `item`), and it returns one JSON value, not a list of { json } items',
      ],
    };
  },
  wait: (p, ctx) => {
    const mode = text(p.resume, 'timeInterval');
    const unit = text(p.unit, 'hours');
    if (mode === 'timeInterval') {
      if (!['seconds', 'minutes', 'hours', 'days'].includes(unit)) return `its unit "${unit}" is not one Flowdesk reads`;
      return { type: 'wait', params: { mode: 'duration', amount: rw(ctx, p.amount ?? 1), unit }, outputs: [['resumed']] };
    }
    if (mode === 'specificTime') return { type: 'wait', params: { mode: 'until', until: rw(ctx, p.dateTime) }, outputs: [['resumed']] };
    if (mode === 'webhook')
      return {
        type: 'wait',
        params: { mode: 'resume' },
        outputs: [['resumed']],
        attention: ['it waited for a call to n8n’s resume URL: the Flowdesk run has its own resume URL'],
      };
    return `it waits for "${mode}", which Flowdesk's Wait does not`;
  },
  executeWorkflow: (p, ctx) => {
    if ((p.source ?? 'database') !== 'database') return `it runs a workflow from "${text(p.source)}": only one by id is read`;
    const raw = p.workflowId;
    const id = text(raw !== null && typeof raw === 'object' ? (raw as { value?: unknown }).value : raw).trim();
    const wait = (p.options as { waitForSubWorkflow?: unknown } | undefined)?.waitForSubWorkflow !== false;
    const payload = inputOf(ctx);
    return {
      type: 'run_workflow',
      params: { workflowId: id || 'n8n', wait, ...(payload ? { payload } : {}) },
      attention: [
        `it ran the n8n workflow "${id}": choose the Flowdesk workflow to run${payload ? '' : ', and set its payload (n8n passed it the items reaching it)'}`,
      ],
    };
  },
  stopAndError: (p, ctx) => ({ type: 'stop', params: { status: 'failed', message: rw(ctx, p.errorType === 'errorObject' ? p.errorObject : p.errorMessage) } }),
};
MAPPERS.function = (p, ctx) => MAPPERS.code!({ jsCode: p.functionCode }, ctx);

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** An HTTP Request that authenticated in n8n: set its Flowdesk credential (the n8n credential's name, or n8n's kind of auth). */
function authAttention(p: Record<string, unknown>, ctx: { node: N8nNode }): string[] {
  const auth = text(p.authentication, 'none');
  if (auth === 'none') return [];
  const creds = Object.values(ctx.node.credentials ?? {})
    .map((c) => (c as { name?: unknown }).name)
    .filter((n) => typeof n === 'string');
  return [`it authenticated with ${creds.map((c) => `the n8n credential "${c}"`).join(', ') || `n8n's ${auth}`}: set its Credential to a Flowdesk credential`];
}

/** HTTP Request 1 and 2's name/value rows (`headerParametersUi: { parameter: [{ name, value }] }`). */
const uiPairs = (v: unknown): { name?: unknown; value?: unknown }[] => {
  const list = (v as { parameter?: unknown } | undefined)?.parameter;
  return Array.isArray(list) ? (list as { name?: unknown; value?: unknown }[]) : [];
};

/**
 * HTTP Request 1 and 2 (n8n's older parameters: `requestMethod`, `url`, `jsonParameters` switching
 * between `*ParametersUi` rows and `*ParametersJson` text, `options.bodyContentType`, `responseFormat`)
 * mapped as versions 3 and 4 are: method, URL with the query appended, headers, a JSON body, timeout.
 * A file answer, a binary or non-JSON body, a query or header JSON that is not one flat object: left out
 * with the reason. Version 2's `authentication` (predefined / generic credential type) and version 1's
 * (basicAuth, headerAuth, …) are listed as for version 3.
 */
function httpRequestV1(p: Record<string, unknown>, ctx: { g: Graph; node: N8nNode; kept: string[] }): Mapped | string {
  const method = text(p.requestMethod, 'GET').toUpperCase();
  if (!HTTP_METHODS.includes(method)) return `its method ${method} is not one Flowdesk sends`;
  const format = text(p.responseFormat, 'json');
  if (format === 'file') return 'it downloads the answer as a file (binary data), which a Flowdesk step does not keep';
  const options: Record<string, unknown> = isObject(p.options) ? p.options : {};
  const asJson = p.jsonParameters === true;
  /** A `*ParametersJson` text as name → text pairs, or why not. */
  const jsonPairs = (value: unknown, what: string): [string, string][] | string => {
    if (value === undefined || value === '' || value === null) return [];
    const parsed = rewriteJson(value, ctx.g, ctx.node.name, ctx.kept);
    if (!isObject(parsed)) return `its ${what} are JSON that is not one object once its expressions are rewritten`;
    return Object.entries(parsed).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]);
  };
  const rows = (value: unknown): [string, string][] => uiPairs(value).map((r) => [text(r.name, ''), rw(ctx, r.value)]);
  const query = asJson ? jsonPairs(p.queryParametersJson, 'query parameters') : rows(p.queryParametersUi);
  if (typeof query === 'string') return query;
  const headers = asJson ? jsonPairs(p.headerParametersJson, 'headers') : rows(p.headerParametersUi);
  if (typeof headers === 'string') return headers;
  let url = rw(ctx, p.url);
  if (query.length) url += (url.includes('?') ? '&' : '?') + query.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&');
  const params: Record<string, unknown> = { method, url };
  if (headers.length) params.headers = Object.fromEntries(headers);
  const attention: string[] = [];
  const contentType = text(options.bodyContentType, 'json');
  const sendsBody = ['POST', 'PUT', 'PATCH'].includes(method);
  if (asJson && p.sendBinaryData === true && sendsBody) return 'it sends a binary file as its body, which Flowdesk’s HTTP Request does not';
  const rawBody = asJson ? p.bodyParametersJson : undefined;
  const bodyRows = asJson ? [] : rows(p.bodyParametersUi);
  const hasBody = asJson ? rawBody !== undefined && rawBody !== '' && rawBody !== null : bodyRows.length > 0;
  if (hasBody && method === 'DELETE') attention.push('it sent a body with DELETE: Flowdesk sends DELETE without one');
  else if (hasBody && sendsBody) {
    if (contentType !== 'json') return `its body is sent as ${contentType}: only JSON bodies are read`;
    if (asJson) {
      const body = rewriteJson(rawBody, ctx.g, ctx.node.name, ctx.kept);
      if (body === undefined) return 'its JSON body is not JSON once its expressions are rewritten (built by code?)';
      params.body = body;
    } else params.body = Object.fromEntries(bodyRows);
  }
  if (typeof options.timeout === 'number') params.timeoutMs = Math.min(60_000, Math.max(100, Math.round(options.timeout)));
  if (options.splitIntoItems === true)
    attention.push('n8n split a list answer into one item per element: Flowdesk keeps the list in its body (a For each can go over it)');
  // Where n8n's `$json.x` is in Flowdesk's output ({ status, headers, body }).
  const full = options.fullResponse === true;
  const field = text(p.dataPropertyName, 'data');
  const read = (segments: string[]): string[] | null => {
    if (full) {
      if (segments[0] === 'statusCode') return ['status'];
      if (segments[0] === 'body' || segments[0] === 'headers') return segments;
      return null;
    }
    if (format === 'string') return segments[0] === field ? ['body', ...segments.slice(1)] : null;
    return ['body', ...segments];
  };
  if (format === 'string') attention.push(`n8n put the answer as text in "${field}": Flowdesk's output has it in body (parsed when the answer is JSON)`);
  return { type: 'http_request', params, read, attention: [...attention, ...authAttention(p, ctx)] };
}

/** Switch 3 in rules mode: one comparison per rule, all of one value, at most SWITCH_MAX_RULES; the fallback output → `default`. */
MAPPERS.switch = (p, ctx) => {
  if ((ctx.node.typeVersion ?? 1) < 3) return switchV1(p, ctx);
  if (text(p.mode, 'rules') !== 'rules')
    return 'it routes by an expression that returns the output’s number (expression mode): Flowdesk’s Switch compares one value with rules; rebuild it with rules';
  const options = (p.options ?? {}) as { fallbackOutput?: unknown; allMatchingOutputs?: unknown; ignoreCase?: unknown };
  if (options.allMatchingOutputs === true) return 'it sends an item to every output whose rule matches; Flowdesk’s Switch follows the first';
  const values = ((p.rules as { values?: unknown } | undefined)?.values ?? []) as { conditions?: Record<string, unknown> }[];
  if (!Array.isArray(values) || values.length === 0) return 'it has no rules';
  if (values.length > SWITCH_MAX_RULES) return `it has ${values.length} rules, more than the ${SWITCH_MAX_RULES} of Flowdesk’s Switch`;
  const rules: { operator: ConditionOperatorName; right?: string }[] = [];
  let value: unknown;
  for (const [i, rule] of values.entries()) {
    const c = conditionsOf({ conditions: rule?.conditions });
    if (typeof c === 'string') return `rule ${i + 1}: ${c}`;
    if (c.rules.length !== 1)
      return `rule ${i + 1} has ${c.rules.length} conditions: Flowdesk’s Switch makes one comparison per rule (use Conditions before it)`;
    const r = c.rules[0]!;
    if (i === 0) value = r.left;
    else if (text(r.left) !== text(value))
      return `its rules compare different values (${text(value)}, ${text(r.left)}): Flowdesk’s Switch compares one value (use Conditions)`;
    rules.push({ operator: r.operator, ...('right' in r ? { right: rw(ctx, r.right) } : {}) });
  }
  const outputs = rules.map((_, i) => [String(i + 1)]);
  const fallback = options.fallbackOutput ?? 'none';
  if (fallback === 'extra') outputs.push(['default']);
  else if (typeof fallback === 'number' && Number.isInteger(fallback) && fallback >= 0 && fallback < outputs.length) outputs[fallback]!.push('default');
  else if (fallback !== 'none') return `its fallback output "${text(fallback)}" is not one it has`;
  return {
    type: 'switch',
    params: { value: rw(ctx, value), rules },
    outputs,
    attention: options.ignoreCase === true ? ['n8n ignored letter case in its rules; Flowdesk’s Switch compares text exactly'] : [],
  };
};

/**
 * Switch 1 and 2: one `value1` of one `dataType`, rules of { operation, value2 } (If 1's operations), each sending to output
 * `output` (Switch 1) or its own (Switch 2); `fallbackOutput` an output's number, -1 none.
 */
function switchV1(p: Record<string, unknown>, ctx: { g: Graph; node: N8nNode; kept: string[] }): Mapped | string {
  if (text(p.mode, 'rules') !== 'rules') return 'it routes by an expression that returns the output’s number (expression mode): rebuild it with rules';
  const type = text(p.dataType, 'number');
  const operators = own(V1_OPERATORS, type);
  if (!operators) return `it compares ${type === 'dateTime' ? 'dates' : type} values, which Flowdesk’s Switch does not`;
  const list = ((p.rules as { rules?: unknown } | undefined)?.rules ?? []) as { operation?: unknown; value2?: unknown; output?: unknown }[];
  if (!Array.isArray(list) || list.length === 0) return 'it has no rules';
  if (list.length > SWITCH_MAX_RULES) return `it has ${list.length} rules, more than the ${SWITCH_MAX_RULES} of Flowdesk’s Switch`;
  const v1 = (ctx.node.typeVersion ?? 1) < 2;
  const outputs: string[][] = Array.from({ length: v1 ? 4 : list.length }, () => []);
  const rules: { operator: ConditionOperatorName; right?: string }[] = [];
  for (const [i, r] of list.entries()) {
    const operation = text(r?.operation, own(V1_DEFAULT, type));
    const op = own(operators, operation);
    if (!op) return `rule ${i + 1}: its ${type} comparison "${operation}" has no Flowdesk equivalent`;
    const unary = op === 'is_empty' || op === 'is_not_empty';
    rules.push({ operator: op, ...(unary ? {} : { right: rw(ctx, r.value2 ?? '') }) });
    const output = v1 ? r.output : i;
    if (typeof output !== 'number' || !outputs[output]) return `rule ${i + 1} sends to output ${text(output)}, which it does not have`;
    outputs[output].push(String(i + 1));
  }
  const fallback = typeof p.fallbackOutput === 'number' ? p.fallbackOutput : -1;
  if (fallback >= 0) {
    if (!outputs[fallback]) return `its fallback output ${fallback} is not one it has`;
    outputs[fallback].push('default');
  }
  return { type: 'switch', params: { value: rw(ctx, p.value1 ?? ''), rules }, outputs };
}

/** Loop Over Items (Split in Batches 3): its `loop` output → For each's `each`, `done` → `done`; the edge back into it was recognised and dropped. */
MAPPERS.splitInBatches = (p, ctx) => {
  if ((ctx.node.typeVersion ?? 1) < 3)
    return 'Split in Batches before version 3 (Loop Over Items) loops by an edge back into it and a check of “no items left”: rebuild the loop as a For each';
  const items = inputOf(ctx);
  if (!items) return 'the items it loops over are not the output of one step Flowdesk has';
  const size = typeof p.batchSize === 'number' ? p.batchSize : 1;
  return {
    type: 'for_each',
    params: { items, concurrency: '1' },
    outputs: [['done'], ['each']],
    attention: [
      `n8n looped over the items reaching it; Flowdesk's For each loops over one list (${items}): check it is the list meant`,
      ...(size === 1 ? [] : [`n8n ran its loop once per batch of ${size} items; Flowdesk’s For each runs it once per item`]),
    ],
  };
};

/** Aggregate: the items reaching it → one list of one field (or of whole items), read after it as `$json.<output field>`. */
function aggregateOf(p: Record<string, unknown>, ctx: { g: Graph; node: N8nNode; kept: string[] }): Mapped | string {
  const options = (p.options ?? {}) as { mergeLists?: unknown; keepMissing?: unknown; disableDotNotation?: unknown };
  if (options.mergeLists === true) return 'it merges the lists it collects into one; Flowdesk’s Aggregate keeps them as they are';
  let field: string | undefined;
  let key: string;
  if (text(p.aggregate, 'aggregateIndividualFields') === 'aggregateAllItemData') {
    if (text(p.include, 'allFields') !== 'allFields') return 'it keeps only some fields of each item; Flowdesk’s Aggregate keeps whole items or one field';
    key = text(p.destinationFieldName, 'data');
  } else {
    const list = ((p.fieldsToAggregate as { fieldToAggregate?: unknown } | undefined)?.fieldToAggregate ?? []) as Record<string, unknown>[];
    if (!Array.isArray(list) || list.length !== 1) return `it aggregates ${Array.isArray(list) ? list.length : 0} fields; Flowdesk’s Aggregate takes one`;
    const f = list[0]!;
    field = text(f.fieldToAggregate, '').trim();
    if (!field || /[{}]/.test(field)) return `its field "${field}" is not a field path`;
    key = f.renameField === true && typeof f.outputFieldName === 'string' && f.outputFieldName ? f.outputFieldName : field;
  }
  let items = inputOf(ctx);
  let fromLoop = false;
  // After a Loop Over Items (its done output): n8n collects what the loop's last node output per item, Flowdesk's For each's results.
  const source = ctx.g.sourceOf.get(ctx.node.name);
  if (source && ctx.g.stepType.get(source) === 'for_each' && !ctx.g.loopBody.get(source)?.has(ctx.node.name)) {
    const last = ctx.g.loopLast.get(source);
    const type = last ? ctx.g.stepType.get(last) : undefined;
    if (!last || !type || PASS_THROUGH.has(type) || ctx.g.placeholders.has(last) || type === 'for_each')
      return 'it collects what a loop gave back, and no one step of the loop gives the items back';
    const read = ctx.g.read.get(last);
    const path = read ? read(field ? field.split('.') : []) : field ? field.split('.') : [];
    if (!path) return `the loop's last step ("${last}") has no "${field ?? 'item'}" in its Flowdesk output`;
    field = path.join('.') || undefined;
    items = `{{nodes.${ctx.g.idOf.get(source)!}.results}}`;
    fromLoop = true;
  }
  if (!items) return 'the items it collects are not the output of one step Flowdesk has';
  return {
    type: 'aggregate',
    params: { items, ...(field ? { field } : {}), into: 'list' },
    read: (segments) => (segments[0] === key ? ['items', ...segments.slice(1)] : null),
    attention: [
      ...(fromLoop ? [] : [`n8n collected the items reaching it; Flowdesk's Aggregate collects one list (${items}): check it is the list meant`]),
      ...(options.keepMissing === true ? ['n8n kept an empty value for an item without the field; Flowdesk leaves the item out (counted in `missing`)'] : []),
    ],
  };
}
MAPPERS.aggregate = aggregateOf;

/** Split Out → a For each over the list it splits: the steps after it (its loop, `each`) ran once per element in n8n too. */
function splitOutOf(p: Record<string, unknown>, ctx: { g: Graph; node: N8nNode; kept: string[] }): Mapped | string {
  const field = text(p.fieldToSplitOut, '').trim();
  if (!field || field.includes(',')) return `it splits ${field ? 'several fields' : 'no field'} out: a For each loops over one list`;
  const segments = field.split('.');
  if (!segments.every((s) => /^[\w-]+$/.test(s))) return `its field "${field}" is not a field path`;
  const path = producerPath(ctx.g, ctx.g.sourceOf.get(ctx.node.name), segments, ctx.node.name);
  if (!path) return `the list it splits ("${field}") is not in the output of one step Flowdesk has`;
  return {
    type: 'for_each',
    params: { items: `{{${path}}}`, concurrency: '1' },
    outputs: [['each'], ['done']],
    attention: [
      `n8n ran the nodes after it once per element of "${field}": they are the For each's loop (each), {{item}} the element; an Aggregate after them follows the loop's done`,
      ...(text(p.include, 'noOtherFields') !== 'noOtherFields'
        ? ['n8n added other fields of its input to each element; in the loop read them from the step before it']
        : []),
    ],
  };
}
MAPPERS.splitOut = splitOutOf;

/** Nodes Flowdesk has no step for, with what to use instead. */
const NO_STEP: Record<string, (p: Record<string, unknown>) => string> = {
  limit: (p) => `Flowdesk has no Limit step: a Code step can keep the first ${text(p.maxItems, '1')} items of a list`,
  sort: () => 'Flowdesk has no Sort step: a Code step (or a {{= }} expression with $sort) can sort a list',
  removeDuplicates: () => 'Flowdesk has no Remove Duplicates step: a Code step can drop the repeated items of a list',
  summarize: () => 'Flowdesk has no Summarize step: a Code step can count, sum or group a list',
  dateTime: () => 'Flowdesk has no Date & Time step: a {{= }} expression or a Code step can format or shift a date',
  merge: (p) =>
    `it combines its inputs’ items (${text(p.mode)}${p.combineBy ? `, ${text(p.combineBy)}` : ''}${p.combinationMode ? `, ${text(p.combinationMode)}` : ''}): Flowdesk joins branches but has no step that combines their items; a Code step reading each branch's output ({{nodes.<id>}}) can`,
};
for (const [type, reason] of Object.entries(NO_STEP)) MAPPERS[type] = (p) => reason(p);
/** Item Lists (before n8n split it into Aggregate, Split Out, Sort, Limit, Remove Duplicates, Summarize): by its operation. */
MAPPERS.itemLists = (p, ctx) => {
  const operation = text(p.operation, 'splitOutItems');
  if (operation === 'aggregateItems') return aggregateOf(p, ctx);
  if (operation === 'splitOutItems') return splitOutOf(p, ctx);
  const as: Record<string, string> = { removeDuplicates: 'removeDuplicates', sort: 'sort', limit: 'limit', summarize: 'summarize' };
  const as_ = own(as, operation);
  return as_ ? NO_STEP[as_]!(p) : `its operation "${operation}" has no Flowdesk equivalent`;
};

/** Merge modes Flowdesk's join is: the steps after it run once every branch into it is decided (an OR-join). */
export function mergeJoin(node: N8nNode): { note: string; useInput?: number } | null {
  const p = node.parameters ?? {};
  const v = node.typeVersion ?? 1;
  const mode = text(p.mode, 'append');
  if (mode === 'append' || (v < 2 && mode === 'wait'))
    return {
      note: 'the steps after it run once, when every branch into it is done; each branch’s output is read by name ({{nodes.<id>}}), n8n’s one list of all their items is not built',
    };
  if (mode === 'chooseBranch' || (v < 2 && mode === 'passThrough')) {
    const output = v >= 3 ? text(p.output, 'specifiedInput') : text(p.output, 'input1');
    const input =
      v >= 3
        ? output === 'specifiedInput'
          ? Number(p.useDataOfInput ?? 1)
          : undefined
        : output === 'empty'
          ? undefined
          : Number(output.replace(/^input/, ''));
    return {
      note: `the steps after it run once every branch into it is done${mode === 'chooseBranch' ? ' (n8n waited for data on both inputs; Flowdesk runs them when at least one branch ran)' : ''}${input ? `; $json after it reads input ${input}` : ''}`,
      ...(input && Number.isInteger(input) && input >= 1 ? { useInput: input } : {}),
    };
  }
  return null;
}
/** Nodes that pass their input on unchanged: joined over, their edges kept. */
const JOINED = new Set(['noOp']);

/** The Flowdesk step id of an n8n node name: lower-case letters, digits and _, unique. */
function idsOf(names: string[]): Map<string, string> {
  const used = new Set(['trigger']);
  const out = new Map<string, string>();
  for (const name of names) {
    let base = name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 56);
    if (!/^[a-z]/.test(base)) base = `n_${base}`.replace(/_+$/, '');
    let id = base;
    for (let i = 2; used.has(id); i++) id = `${base}_${i}`;
    used.add(id);
    out.set(name, id);
  }
  return out;
}

interface Edge {
  from: string;
  to: string;
  output: number;
  /** The input of `to` it goes into (a Merge has several). */
  input: number;
}

/**
 * n8n's workflow JSON → a Flowdesk workflow file, what readImport leaves out and why, and the
 * problems. Refuses (400) a file that is not n8n's shape, names a node twice, or connects a node it
 * does not have; the graph itself (cycles, limits) is checked by readImport as for any file.
 */
export function fromN8n(body: unknown): N8nImport {
  if (!Check(N8nWorkflowFile, body)) {
    const first = [...Errors(N8nWorkflowFile, body)][0];
    refuse(`${first?.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'the file'} ${first?.message ?? 'is not an n8n workflow'}`);
  }
  const file = body as N8nWorkflowFile;
  const problems: WorkflowImportProblem[] = [];
  const leftOut = new Map<string, string>();
  const byName = new Map<string, N8nNode>();
  for (const n of file.nodes) {
    if (byName.has(n.name)) refuse(`two nodes are named "${n.name}"`);
    byName.set(n.name, n);
  }
  const idOf = idsOf(file.nodes.map((n) => n.name));
  let edges: Edge[] = [];
  let connections = 0;
  for (const [from, outputs] of Object.entries(file.connections)) {
    if (!byName.has(from)) refuse(`connections name the node "${from}", which the file does not have`);
    for (const [kind, list] of Object.entries(outputs)) {
      list.forEach((targets, output) => {
        for (const t of targets ?? []) {
          if (!byName.has(t.node)) refuse(`a connection from "${from}" goes to "${t.node}", which the file does not have`);
          if (++connections > N8N_MAX_CONNECTIONS) refuse(`it has more than ${N8N_MAX_CONNECTIONS} connections`);
          if (kind === 'main') edges.push({ from, to: t.node, output, input: t.index });
          else
            problems.push({
              nodeId: idOf.get(t.node)!,
              kind: 'left_out',
              message: `the ${kind} connection from "${from}" to "${t.node}" is not one Flowdesk has: left out`,
            });
        }
      });
    }
  }

  // The trigger: the first n8n trigger Flowdesk has (enabled), else the first trigger (run by hand), else none.
  const triggers = file.nodes.filter((n) => isTriggerType(n.type));
  const trigger = triggers.find((n) => !n.disabled && Object.hasOwn(TRIGGERS, short(n.type))) ?? triggers[0] ?? null;
  const triggerType: TriggerType = trigger && !trigger.disabled && Object.hasOwn(TRIGGERS, short(trigger.type)) ? TRIGGERS[short(trigger.type)]! : 'manual';
  const triggerConfig: Record<string, unknown> = {};
  if (!trigger) problems.push({ nodeId: null, kind: 'needs_attention', message: 'the n8n workflow has no trigger: the new one starts by hand (Manual)' });
  else if (
    triggerType === 'manual' &&
    short(trigger.type) !== 'manualTrigger' &&
    short(trigger.type) !== 'start' &&
    short(trigger.type) !== 'executeWorkflowTrigger'
  )
    problems.push({
      nodeId: null,
      kind: 'needs_attention',
      message: `n8n's trigger "${trigger.name}" (${trigger.type}) has no Flowdesk equivalent: the new workflow starts by hand (Manual); choose its trigger`,
    });
  else {
    const p = trigger.parameters ?? {};
    if (triggerType === 'webhook') {
      const mode = text(p.responseMode, 'onReceived');
      const method = text(p.httpMethod, 'GET');
      triggerConfig.responseMode = mode === 'responseNode' ? 'respond_node' : mode === 'lastNode' ? 'finished' : 'immediately';
      problems.push({
        nodeId: null,
        kind: 'needs_attention',
        message: `n8n's webhook "${trigger.name}" (${method} ${text(p.path, '')}): the new workflow's webhook has its own URL and secret (X-Webhook-Secret)${method === 'POST' ? '' : ` and takes POST, not ${method}`}: point the caller at it`,
      });
    } else if (triggerType === 'schedule') {
      const s = scheduleCron(p);
      triggerConfig.cron = s.cron ?? '0 0 * * *';
      if (typeof file.settings?.timezone === 'string' && file.settings.timezone !== 'DEFAULT') triggerConfig.timezone = file.settings.timezone;
      if (s.problem)
        problems.push({
          nodeId: null,
          kind: 'needs_attention',
          message: `n8n's schedule "${trigger.name}": ${s.problem}${s.cron ? '' : '; the new workflow runs daily at midnight until its schedule is set'}`,
        });
    } else if (short(trigger.type) === 'executeWorkflowTrigger')
      problems.push({
        nodeId: null,
        kind: 'needs_attention',
        message: `n8n's "${trigger.name}" started it from another workflow: Flowdesk's Run workflow starts it with the payload as {{trigger}}`,
      });
  }
  for (const t of triggers)
    if (t !== trigger)
      problems.push({
        nodeId: idOf.get(t.name)!,
        kind: 'left_out',
        message: `n8n's trigger "${t.name}": a Flowdesk workflow has one trigger (${trigger!.name}): left out`,
      });

  // Loop Over Items: the edges back into it from its loop (what its `loop` output reaches) close n8n's loop; a For each needs none.
  const loopBody = new Map<string, Set<string>>();
  const loopLast = new Map<string, string>();
  for (const n of file.nodes) {
    if (short(n.type) !== 'splitInBatches' || !n.type.startsWith(N8N)) continue;
    const loopOutput = (n.typeVersion ?? 1) >= 3 ? 1 : 0;
    const body = new Set<string>();
    const stack = edges.filter((e) => e.from === n.name && e.output === loopOutput).map((e) => e.to);
    while (stack.length) {
      const at = stack.pop()!;
      if (at === n.name || body.has(at)) continue;
      body.add(at);
      for (const e of edges) if (e.from === at) stack.push(e.to);
    }
    const back = [...new Set(edges.filter((e) => e.to === n.name && body.has(e.from)).map((e) => e.from))];
    if (back.length === 1) loopLast.set(n.name, back[0]!);
    edges = edges.filter((e) => !(e.to === n.name && body.has(e.from)));
    loopBody.set(n.name, body);
  }
  // Split Out: the nodes after it ran once per element — a For each whose loop is everything after it up to an Aggregate,
  // which then follows the loop's `done` (n8n's Aggregate collected what the loop's last node gave, per element).
  const isAggregate = (n: N8nNode) =>
    n.type.startsWith(N8N) && (short(n.type) === 'aggregate' || (short(n.type) === 'itemLists' && n.parameters?.operation === 'aggregateItems'));
  for (const n of file.nodes) {
    if (!isSplitOut(n) || n.disabled) continue;
    const body = new Set<string>();
    const stack = edges.filter((e) => e.from === n.name).map((e) => e.to);
    while (stack.length) {
      const at = stack.pop()!;
      if (at === n.name || body.has(at) || isAggregate(byName.get(at)!)) continue;
      body.add(at);
      for (const e of edges) if (e.from === at) stack.push(e.to);
    }
    const ends = edges.filter((e) => (body.has(e.from) || e.from === n.name) && isAggregate(byName.get(e.to)!));
    const last = [...new Set(ends.map((e) => e.from))];
    if (last.length === 1 && last[0] !== n.name) loopLast.set(n.name, last[0]!);
    edges = [...edges.filter((e) => !ends.includes(e)), ...[...new Set(ends.map((e) => e.to))].map((to) => ({ from: n.name, to, output: 1, input: 0 }))];
    loopBody.set(n.name, body);
  }

  // Joined over: No Op, and a Merge that only waits for its branches (n8n passes the data on; Flowdesk's steps wait for every branch into them).
  const joins = new Map<string, { note: string; useInput?: number } | null>();
  for (const n of file.nodes)
    if (n.type.startsWith(N8N) && !n.disabled && (JOINED.has(short(n.type)) || (short(n.type) === 'merge' && mergeJoin(n))))
      joins.set(n.name, short(n.type) === 'merge' ? mergeJoin(n) : null);
  const sourceOverride = new Map<string, string>();
  for (const n of file.nodes) {
    if (n === trigger || isTriggerType(n.type) || !joins.has(n.name)) continue;
    const join = joins.get(n.name);
    const into = edges.filter((e) => e.to === n.name);
    const out = edges.filter((e) => e.from === n.name && e.output === 0);
    edges = [
      ...edges.filter((e) => e.to !== n.name && e.from !== n.name),
      ...into.flatMap((i) => out.map((o) => ({ from: i.from, to: o.to, output: i.output, input: o.input }))),
    ];
    const chosen = join?.useInput ? [...new Set(into.filter((e) => e.input === join.useInput! - 1).map((e) => e.from))] : [];
    if (chosen.length === 1) for (const o of out) sourceOverride.set(o.to, chosen[0]!);
    problems.push({
      nodeId: idOf.get(n.name)!,
      kind: 'left_out',
      message: join
        ? `"${n.name}" is a Merge (${text(n.parameters?.mode, 'append')}): left out, what fed it now feeds what followed it: ${join.note}`
        : `"${n.name}" is a No Op: left out, what fed it now feeds what followed it`,
    });
  }
  const kept = new Set(file.nodes.filter((n) => n !== trigger && !isTriggerType(n.type) && !joins.has(n.name)).map((n) => n.name));
  edges = edges.filter((e) => (e.from === trigger?.name || kept.has(e.from)) && kept.has(e.to));
  edges = edges.filter((e, i) => edges.findIndex((o) => o.from === e.from && o.to === e.to && o.output === e.output) === i);

  // Without a trigger node, the nodes nothing feeds start the run.
  const starts = trigger ? null : new Set([...kept].filter((name) => !edges.some((e) => e.to === name)));
  const sourceOf = new Map<string, string>();
  for (const name of kept) {
    const feeding = [...new Set(edges.filter((e) => e.to === name).map((e) => e.from))];
    if (feeding.length === 1) sourceOf.set(name, feeding[0]!);
  }
  for (const [to, from] of sourceOverride) if (kept.has(to) && (kept.has(from) || from === trigger?.name)) sourceOf.set(to, from);
  const placeholders = new Set([...kept].filter((name) => byName.get(name)!.disabled === true));
  const g: Graph = {
    idOf,
    byName,
    sourceOf,
    triggerName: trigger?.name ?? null,
    triggerType,
    stepType: new Map(),
    read: new Map(),
    placeholders,
    loopBody,
    loopLast,
  };

  // Steps the trigger never reaches are not in the new workflow (n8n keeps unconnected nodes; a Flowdesk graph does not).
  const reached = new Set<string>();
  const queue = trigger ? [trigger.name] : [...starts!];
  for (const s of starts ?? []) reached.add(s);
  while (queue.length) {
    const at = queue.shift()!;
    for (const e of edges) if (e.from === at && !reached.has(e.to)) queue.push((reached.add(e.to), e.to));
  }

  // Steps the trigger reaches, in the order n8n lists them.
  const pending: N8nNode[] = [];
  for (const n of file.nodes.filter((n) => kept.has(n.name))) {
    if (reached.has(n.name)) pending.push(n);
    else
      problems.push({
        nodeId: idOf.get(n.name)!,
        kind: 'left_out',
        message:
          short(n.type) === 'stickyNote'
            ? `"${n.name}" is a sticky note (text on n8n's canvas): left out`
            : `"${n.name}" is not connected to the trigger: left out`,
      });
  }
  // A disabled node that Flowdesk cannot take as its own type: an empty Set Fields, disabled, named so, where it was.
  const placeholder = (n: N8nNode, why: string): Mapped => ({
    type: 'set_fields',
    params: { fields: [] },
    name: `${n.name.slice(0, 180)} (disabled in n8n)`,
    attention: [
      `it was disabled in n8n (${n.type}) and ${why}: kept as a disabled, empty Set Fields step with its edges, so the graph keeps its shape; rebuild it or delete it`,
    ],
  });
  const mapNode = (n: N8nNode, kept: string[]): Mapped | string => {
    const mapper = n.type.startsWith(N8N) && Object.hasOwn(MAPPERS, short(n.type)) ? MAPPERS[short(n.type)] : undefined;
    const result = mapper ? mapper(n.parameters ?? {}, { g, node: n, kept }) : `${n.type} has no Flowdesk equivalent`;
    if (!n.disabled) return result;
    // A disabled node: its own step, disabled (the engine passes its input on, as n8n did), or a placeholder where it has none.
    // A loop or a collecting step disabled changes what the steps after it read: a placeholder too.
    if (typeof result === 'string') return placeholder(n, result.replace(/: .*$/s, '').slice(0, 300));
    if (result.type === 'for_each' || result.type === 'aggregate') return placeholder(n, `Flowdesk would read the steps after it differently`);
    return {
      ...result,
      attention: [...(result.attention ?? []), 'it was disabled in n8n: imported disabled (runs skip it and pass its input on); enable it to run it'],
    };
  };
  // What each step becomes first (a rewrite reads what the step before outputs; twice, as a step's mapping may read the one before it).
  for (let pass = 0; pass < 2; pass++)
    for (const n of pending) {
      const result = mapNode(n, []);
      if (typeof result !== 'string') {
        g.stepType.set(n.name, result.type);
        if (result.read) g.read.set(n.name, result.read);
      } else g.stepType.delete(n.name);
    }

  const nodes: ({ id: string; type: string } & Record<string, unknown>)[] = [];
  const outputsOf = new Map<string, string[][] | undefined>();
  for (const n of pending) {
    const id = idOf.get(n.name)!;
    const kept: string[] = [];
    const result = mapNode(n, kept);
    const position = n.position ? { x: n.position[0], y: n.position[1] } : undefined;
    if (typeof result === 'string') {
      leftOut.set(id, `"${n.name}" (${n.type}): ${result}: left out, with the steps reached only through it`);
      nodes.push({ id, type: n.type, name: n.name, ...(position ? { position } : {}) });
      continue;
    }
    outputsOf.set(n.name, result.outputs);
    const step: Record<string, unknown> = {
      id,
      type: result.type,
      name: result.name ?? n.name,
      ...(position ? { position } : {}),
      ...(n.disabled ? { disabled: true } : {}),
      params: result.params,
    };
    if (n.onError === 'continueRegularOutput') step.onError = 'continue';
    if (n.onError === 'continueErrorOutput') step.onError = 'branch';
    if (n.retryOnFail === true)
      step.retry = {
        attempts: Math.min(10, Math.max(1, Math.round(n.maxTries ?? 3))),
        backoff: 'fixed',
        delayMs: Math.min(300_000, Math.max(0, Math.round(n.waitBetweenTries ?? 1000))),
      };
    const schema = schemaOf.get(result.type)!;
    if (!Check(schema, step) && n.disabled) {
      // A disabled node whose mapping does not fit its step: the placeholder (it does not run either way).
      const p = placeholder(n, `its settings do not fit a ${result.type} step`);
      Object.assign(step, { type: p.type, name: p.name, params: p.params });
      result.attention = p.attention;
      delete result.outputs;
      outputsOf.set(n.name, undefined);
      g.stepType.set(n.name, p.type);
    }
    if (!Check(schemaOf.get(String(step.type))!, step)) {
      const first = [...Errors(schema, step)][0];
      leftOut.set(id, `"${n.name}" (${n.type}): mapped to ${result.type}, but ${first?.instancePath || 'it'} ${first?.message ?? 'does not match'}: left out`);
      nodes.push({ id, type: n.type, name: n.name });
      continue;
    }
    nodes.push(step);
    for (const a of result.attention ?? []) problems.push({ nodeId: id, kind: 'needs_attention', message: `"${n.name}": ${a}` });
    if (kept.length)
      problems.push({
        nodeId: id,
        kind: 'needs_attention',
        message: `"${n.name}": n8n expressions kept as text (no Flowdesk equivalent found): ${[...new Set(kept)].join(', ')}`,
      });
  }

  // Edges: each n8n output to the step's branches (an If's true / false, a Switch's 1…4 and default, a Loop's done / each, a
  // Wait's resumed), the error output (onError continueErrorOutput, after the others) to the error branch.
  const inGraph = new Set(pending.map((n) => n.name));
  const out: { from: string; to: string; branch?: string }[] = [];
  for (const e of edges) {
    if (!inGraph.has(e.to) || !(e.from === trigger?.name || inGraph.has(e.from))) continue;
    const from = e.from === trigger?.name ? 'trigger' : idOf.get(e.from)!;
    const src = byName.get(e.from)!;
    const type = g.stepType.get(e.from);
    const outputs = outputsOf.get(e.from);
    const errorOutput = src.onError === 'continueErrorOutput' && type !== undefined ? (outputs?.length ?? 1) : -1;
    let branches: (string | undefined)[];
    if (e.output === errorOutput) branches = ['error'];
    else if (outputs && e.output < outputs.length) branches = outputs[e.output]!;
    else if (e.output === 0 || type === undefined) branches = [undefined];
    else branches = [];
    if (branches.length === 0) {
      problems.push({
        nodeId: idOf.get(e.to)!,
        kind: 'left_out',
        message: `the connection from output ${e.output + 1} of "${e.from}" is not one Flowdesk has: left out`,
      });
      continue;
    }
    for (const branch of branches) out.push({ from, to: idOf.get(e.to)!, ...(branch ? { branch } : {}) });
  }
  if (starts) for (const s of starts) if (inGraph.has(s)) out.push({ from: 'trigger', to: idOf.get(s)! });
  // A loop a For each cannot be (a Wait in it, a loop in a loop, a step reached from inside and outside): left out, with the reason.
  for (let tries = 0; tries < N8N_MAX_NODES; tries++) {
    const live = nodes.filter((n) => !leftOut.has(n.id));
    const ids = new Set(live.map((n) => n.id));
    const { problem } = loopBodies({ nodes: live, edges: out.filter((e) => (e.from === 'trigger' || ids.has(e.from)) && ids.has(e.to)) });
    const loopId = problem ? /the loop of "([^"]+)"/.exec(problem)?.[1] : undefined;
    const step = loopId ? live.find((n) => n.id === loopId) : undefined;
    if (!problem || !step) break;
    leftOut.set(step.id, `"${text(step.name)}" (a loop, as a For each): ${problem}: left out, with the steps reached only through it`);
  }
  // A step reached only through a connection left out (an output Flowdesk's step does not have) goes too, listed.
  const reachedIds = new Set(['trigger']);
  for (let grew = true; grew;) {
    grew = false;
    for (const e of out) if (reachedIds.has(e.from) && !reachedIds.has(e.to)) grew = Boolean(reachedIds.add(e.to));
  }
  for (let i = nodes.length - 1; i >= 0; i--) {
    const step = nodes[i]!;
    if (reachedIds.has(step.id)) continue;
    nodes.splice(i, 1);
    leftOut.delete(step.id);
    problems.push({ nodeId: step.id, kind: 'left_out', message: `"${text(step.name)}" was reached only through a connection left out: left out` });
  }
  const unreached = (id: string) => !reachedIds.has(id);
  for (let i = out.length - 1; i >= 0; i--) if (unreached(out[i]!.from) || unreached(out[i]!.to)) out.splice(i, 1);
  if (typeof file.settings?.errorWorkflow === 'string' && file.settings.errorWorkflow)
    problems.push({
      nodeId: null,
      kind: 'left_out',
      message: `its n8n error workflow (${file.settings.errorWorkflow}) is not one of yours: the new workflow has none`,
    });
  const samplePayload = pinned(file, trigger, triggerType, idOf, problems);
  problems.push(...credentialsOf(file, idOf));

  return {
    file: {
      format: WORKFLOW_EXPORT_FORMAT,
      formatVersion: WORKFLOW_EXPORT_FORMAT_VERSION,
      workflow: {
        name: (file.name ?? '').trim() || 'Imported from n8n',
        description: 'Imported from n8n',
        ...(n8nTags(file).length ? { tags: n8nTags(file) } : {}),
        triggerType,
        triggerConfig,
        graph: {
          nodes,
          edges: out,
          ...(trigger?.position ? { triggerPosition: { x: trigger.position[0], y: trigger.position[1] } } : {}),
        },
        requireWebhookSecret: true,
        executionOrder: 'parallel',
        errorWorkflowId: null,
        retention: null,
        samplePayload,
      },
    },
    leftOut,
    problems,
  };
}

/**
 * n8n's tags (`tags: [{ id, name }]`, or names) as Flowdesk tags: spaces and commas become `-`, at most
 * 50 characters, the first 20 distinct ones.
 */
function n8nTags(file: N8nWorkflowFile): string[] {
  const raw = (file as { tags?: unknown }).tags;
  if (!Array.isArray(raw)) return [];
  const names = raw
    .map((t) => (typeof t === 'string' ? t : isObject(t) && typeof t.name === 'string' ? t.name : ''))
    .map((t) =>
      t
        .trim()
        .replace(/[\s,]+/g, '-')
        .slice(0, 50),
    )
    .filter((t) => t !== '');
  return [...new Set(names)].slice(0, 20);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * n8n's pinned data: the trigger's first pinned item is the workflow's sample (a webhook's body; a manual
 * trigger's item); Flowdesk keeps no sample of other steps, so theirs are listed as not kept.
 */
function pinned(
  file: N8nWorkflowFile,
  trigger: N8nNode | null,
  triggerType: TriggerType,
  idOf: Map<string, string>,
  problems: WorkflowImportProblem[],
): Record<string, unknown> | null {
  let sample: Record<string, unknown> | null = null;
  for (const [name, items] of Object.entries(file.pinData ?? {})) {
    const nodeId = idOf.get(name) ?? null;
    const what = `the ${items.length} item${items.length === 1 ? '' : 's'} pinned on "${name}" in n8n`;
    if (!trigger || name !== trigger.name) {
      problems.push({ nodeId, kind: 'left_out', message: `${what}: not kept (Flowdesk keeps a sample of the trigger’s data only)` });
      continue;
    }
    const first = (items[0] as { json?: unknown } | undefined)?.json;
    const data = triggerType === 'webhook' && isObject(first) ? first.body : first;
    if ((triggerType !== 'webhook' && triggerType !== 'manual') || !isObject(data)) {
      problems.push({ nodeId: null, kind: 'left_out', message: `${what}: not kept (not an object a ${triggerType} trigger gives as {{trigger}})` });
      continue;
    }
    sample = data;
    problems.push({
      nodeId: null,
      kind: 'needs_attention',
      message: `${what}: ${items.length > 1 ? 'the first is' : 'it is'} the workflow's sample trigger data${triggerType === 'webhook' ? ' (its body)' : ''}${items.length > 1 ? '; the others are not kept' : ''}`,
    });
  }
  return sample;
}

/** Flowdesk's credential type for some of n8n's (its id), else none. */
const CREDENTIAL_TYPES: Record<string, string> = {
  httpHeaderAuth: 'header',
  httpQueryAuth: 'query',
  httpBearerAuth: 'bearer',
  httpBasicAuth: 'basic',
  oAuth2Api: 'oauth2',
  smtp: 'smtp',
  slackApi: 'slack_bot',
};

/** The n8n credentials the nodes use (their names and types, never a secret: n8n's file has none), one problem each, naming the nodes. */
function credentialsOf(file: N8nWorkflowFile, idOf: Map<string, string>): WorkflowImportProblem[] {
  const used = new Map<string, { name: string; type: string; nodes: string[] }>();
  for (const n of file.nodes)
    for (const [type, ref] of Object.entries(n.credentials ?? {})) {
      const name = text(isObject(ref) ? ref.name : ref, '(no name)').slice(0, 200);
      const key = JSON.stringify([type, name]);
      const entry = used.get(key) ?? { name, type: type.slice(0, 100), nodes: [] };
      entry.nodes.push(`"${n.name}" (${idOf.get(n.name)})`);
      used.set(key, entry);
    }
  return [...used.values()].map((c) => {
    const ours = credentialType(own(CREDENTIAL_TYPES, c.type) ?? '')?.label;
    return {
      nodeId: null,
      kind: 'needs_attention' as const,
      message: `the n8n credential "${c.name}" (${c.type}), used by ${c.nodes.join(', ')}: its secret is not in n8n's file; create a Flowdesk credential${ours ? ` of type "${ours}"` : ''} (Settings → Credentials) and choose it on the step`,
    };
  });
}
