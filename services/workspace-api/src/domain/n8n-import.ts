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
  HttpError,
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
/** The part of n8n's workflow JSON the import reads (n8n writes more: id, meta, pinData, tags, versionId — ignored). */
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
}
/** Nodes whose n8n output is their input (Flowdesk's outputs differ): `$json` after them reads the node before. */
const PASS_THROUGH = new Set(['condition', 'wait', 'respond', 'stop']);

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

/** The Flowdesk path of n8n node `name`'s output at `segments`, or null when it has none. */
function producerPath(g: Graph, name: string | undefined, segments: string[], hops = 0): string | null {
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
  if (PASS_THROUGH.has(type)) return producerPath(g, g.sourceOf.get(name), segments, hops + 1);
  // n8n's Filter passes on each item kept; Flowdesk's outputs one list ({ items, count, dropped }): no one path says `$json` of it.
  if (type === 'filter') return null;
  return join(`nodes.${g.idOf.get(name)!}`, type === 'http_request' ? ['body', ...segments] : segments);
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
  const path = segs ? producerPath(g, from, segs) : null;
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
    const op = OPERATORS[operation] ?? (type === 'string' ? STRING_OPERATORS[operation] : undefined);
    if (!op || type === 'dateTime' || (type === 'array' && !['exists', 'notExists', 'empty', 'notEmpty'].includes(operation)))
      return `its ${type} comparison "${operation}" has no Flowdesk equivalent`;
    const unary = ['exists', 'not_exists', 'is_empty', 'is_not_empty', 'is_true', 'is_false'].includes(op);
    rules.push({ left: cond.leftValue, operator: op, ...(unary ? {} : { right: cond.rightValue }) });
  }
  return { rules, combinator: c.combinator === 'or' ? 'or' : 'and' };
}

// ---- Nodes ----

interface Mapped {
  type: string;
  params: Record<string, unknown>;
  /** Needs a look before it runs (kept). */
  attention?: string[];
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
  const path = producerPath(ctx.g, ctx.g.sourceOf.get(ctx.node.name), []);
  return path ? `{{${path}}}` : null;
};

const MAPPERS: Record<string, Mapper> = {
  if: (p, ctx) => {
    const c = conditionsOf(p);
    if (typeof c === 'string') return c;
    return {
      type: 'condition',
      params: {
        rules: c.rules.map((r) => ({ left: rw(ctx, r.left), operator: r.operator, ...('right' in r ? { right: rw(ctx, r.right) } : {}) })),
        combinator: c.combinator,
      },
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
    if ((ctx.node.typeVersion ?? 1) < 3) return 'HTTP Request before version 3 is not read: open it in a recent n8n and export again';
    const method = text(p.method, 'GET').toUpperCase();
    if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) return `its method ${method} is not one Flowdesk sends`;
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
    const auth = text(p.authentication, 'none');
    const creds = Object.values(ctx.node.credentials ?? {})
      .map((c) => (c as { name?: unknown }).name)
      .filter((n) => typeof n === 'string');
    return {
      type: 'http_request',
      params,
      attention:
        auth !== 'none'
          ? [
              `it used the n8n credential ${creds.map((c) => `"${c}"`).join(', ') || auth}: set its Credential to a Flowdesk credential (credentials are not in n8n's file)`,
            ]
          : [],
    };
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
      return { type: 'wait', params: { mode: 'duration', amount: rw(ctx, p.amount ?? 1), unit } };
    }
    if (mode === 'specificTime') return { type: 'wait', params: { mode: 'until', until: rw(ctx, p.dateTime) } };
    if (mode === 'webhook')
      return { type: 'wait', params: { mode: 'resume' }, attention: ['it waited for a call to n8n’s resume URL: the Flowdesk run has its own resume URL'] };
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
          if (kind === 'main') edges.push({ from, to: t.node, output });
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

  // Joined over: No Op and disabled nodes (n8n passes their input on). Their first output's edges continue from what fed them.
  for (const n of file.nodes) {
    if (n === trigger || isTriggerType(n.type) || !(JOINED.has(short(n.type)) || n.disabled)) continue;
    const into = edges.filter((e) => e.to === n.name);
    const out = edges.filter((e) => e.from === n.name && e.output === 0);
    edges = [
      ...edges.filter((e) => e.to !== n.name && e.from !== n.name),
      ...into.flatMap((i) => out.map((o) => ({ from: i.from, to: o.to, output: i.output }))),
    ];
    problems.push({
      nodeId: idOf.get(n.name)!,
      kind: 'left_out',
      message: n.disabled
        ? `"${n.name}" was disabled in n8n: left out, what fed it now feeds what followed it`
        : `"${n.name}" is a No Op: left out, what fed it now feeds what followed it`,
    });
  }
  const kept = new Set(file.nodes.filter((n) => n !== trigger && !isTriggerType(n.type) && !JOINED.has(short(n.type)) && !n.disabled).map((n) => n.name));
  edges = edges.filter((e) => (e.from === trigger?.name || kept.has(e.from)) && kept.has(e.to));
  edges = edges.filter((e, i) => edges.findIndex((o) => o.from === e.from && o.to === e.to && o.output === e.output) === i);

  // Without a trigger node, the nodes nothing feeds start the run.
  const starts = trigger ? null : new Set([...kept].filter((name) => !edges.some((e) => e.to === name)));
  const sourceOf = new Map<string, string>();
  for (const name of kept) {
    const feeding = [...new Set(edges.filter((e) => e.to === name).map((e) => e.from))];
    if (feeding.length === 1) sourceOf.set(name, feeding[0]!);
  }
  const g: Graph = { idOf, byName, sourceOf, triggerName: trigger?.name ?? null, triggerType, stepType: new Map() };

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
  const mapNode = (n: N8nNode, kept: string[]): Mapped | string => {
    const mapper = n.type.startsWith(N8N) && Object.hasOwn(MAPPERS, short(n.type)) ? MAPPERS[short(n.type)] : undefined;
    return mapper ? mapper(n.parameters ?? {}, { g, node: n, kept }) : `${n.type} has no Flowdesk equivalent`;
  };
  // What each step becomes first (a rewrite reads what the step before outputs; twice, as a step's mapping may read the one before it).
  for (let pass = 0; pass < 2; pass++)
    for (const n of pending) {
      const result = mapNode(n, []);
      if (typeof result !== 'string') g.stepType.set(n.name, result.type);
      else g.stepType.delete(n.name);
    }

  const nodes: ({ id: string; type: string } & Record<string, unknown>)[] = [];
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
    const step: Record<string, unknown> = { id, type: result.type, name: n.name, ...(position ? { position } : {}), params: result.params };
    if (n.onError === 'continueRegularOutput') step.onError = 'continue';
    if (n.onError === 'continueErrorOutput') step.onError = 'branch';
    if (n.retryOnFail === true)
      step.retry = {
        attempts: Math.min(10, Math.max(1, Math.round(n.maxTries ?? 3))),
        backoff: 'fixed',
        delayMs: Math.min(300_000, Math.max(0, Math.round(n.waitBetweenTries ?? 1000))),
      };
    const schema = schemaOf.get(result.type)!;
    if (!Check(schema, step)) {
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

  // Edges: an If's outputs are true / false, a Wait's resumed, an error output (onError continueErrorOutput) the error branch.
  const inGraph = new Set(pending.map((n) => n.name));
  const out: { from: string; to: string; branch?: string }[] = [];
  for (const e of edges) {
    if (!inGraph.has(e.to) || !(e.from === trigger?.name || inGraph.has(e.from))) continue;
    const from = e.from === trigger?.name ? 'trigger' : idOf.get(e.from)!;
    const src = byName.get(e.from)!;
    const type = g.stepType.get(e.from);
    let branch: string | undefined;
    const errorOutput = src.onError === 'continueErrorOutput' && type !== undefined ? (type === 'condition' ? 2 : 1) : -1;
    if (e.output === errorOutput) branch = 'error';
    else if (type === 'condition') branch = e.output === 0 ? 'true' : 'false';
    else if (type === 'wait') branch = 'resumed';
    else if (e.output > 0 && type !== undefined) {
      problems.push({
        nodeId: idOf.get(e.to)!,
        kind: 'left_out',
        message: `the connection from output ${e.output + 1} of "${e.from}" is not one Flowdesk has: left out`,
      });
      continue;
    }
    out.push({ from, to: idOf.get(e.to)!, ...(branch ? { branch } : {}) });
  }
  if (starts) for (const s of starts) if (inGraph.has(s)) out.push({ from: 'trigger', to: idOf.get(s)! });
  if (typeof file.settings?.errorWorkflow === 'string' && file.settings.errorWorkflow)
    problems.push({
      nodeId: null,
      kind: 'left_out',
      message: `its n8n error workflow (${file.settings.errorWorkflow}) is not one of yours: the new workflow has none`,
    });

  return {
    file: {
      format: WORKFLOW_EXPORT_FORMAT,
      formatVersion: WORKFLOW_EXPORT_FORMAT_VERSION,
      workflow: {
        name: (file.name ?? '').trim() || 'Imported from n8n',
        description: 'Imported from n8n',
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
        samplePayload: null,
      },
    },
    leftOut,
    problems,
  };
}
