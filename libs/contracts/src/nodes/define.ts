/**
 * What one node type is, written once (docs/development.md, "Adding a node type"): its type key,
 * label, description, params schema (TypeBox) with a hint per param for the console's generated
 * form, its branches and what its output holds. The graph union, the MCP tool schemas, the
 * `get_workflow` text, the docs' node table and the console's menu, card, labels and form are
 * derived from these definitions; the engine's handler map is typed over them.
 */
import Type, { type Static, type TNever, type TObject, type TSchema, type TUnion } from 'typebox';
import { StringEnum } from '../common.ts';

/** Every string parameter of a node may hold {{trigger.a.b}} or {{nodes.<id>.body.x}} variables. */
export const Templated = (max = 10_000) => Type.String({ maxLength: max });
export const NODE_ID_PATTERN = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';
export const NodeId = Type.String({ pattern: NODE_ID_PATTERN });
/**
 * What a run does when a node fails (docs/workflow-engine.md, "Error paths"): `fail` the run (the
 * default, as before), `continue` with `{ error }` as the node's output along its usual edges, or
 * follow the node's `error` branch (edges with `branch: "error"`) instead of its usual edges.
 */
export const ON_ERROR = ['fail', 'continue', 'branch'] as const;
export type OnError = (typeof ON_ERROR)[number];
export const OnErrorSchema = StringEnum(ON_ERROR);
/** The branch an edge names to leave a node by its error path (a node with onError "branch"). */
export const ERROR_BRANCH = 'error';

/**
 * Which failures a node's retry policy repeats (docs/workflow-engine.md, "Retries"): `network`
 * (connection refused, reset, DNS), `timeout`, `5xx` and `429` answers (HTTP Request), or `any`
 * failure (a 4xx, a workspace-api refusal, a Code node's exception).
 */
export const RETRY_ON = ['network', 'timeout', '5xx', '429', 'any'] as const;
export type RetryOn = (typeof RETRY_ON)[number];
export const RETRY_BACKOFF = ['fixed', 'exponential'] as const;
/** Limits of a retry policy: delays run in memory today, inside the run's time limit. */
export const RETRY_LIMITS = { maxAttempts: 10, maxDelayMs: 3_600_000 } as const;
/** What an absent field of a retry policy means (attempts absent or 1: no retry). */
export const RETRY_DEFAULTS = {
  attempts: 1,
  backoff: 'exponential',
  delayMs: 1_000,
  maxDelayMs: 30_000,
  jitter: true,
  on: ['network', 'timeout', '5xx', '429'],
} as const satisfies {
  attempts: number;
  backoff: (typeof RETRY_BACKOFF)[number];
  delayMs: number;
  maxDelayMs: number;
  jitter: boolean;
  on: readonly RetryOn[];
};

/**
 * A node's retry policy, beside `onError`: the executor repeats a failed step (same rendered input,
 * same idempotency key) before `onError` decides. `attempts` counts the first one (1 = no retry).
 * POST and PATCH requests are repeated only when they send the step's Idempotency-Key.
 */
export const RetryPolicySchema = Type.Object(
  {
    attempts: Type.Integer({ minimum: 1, maximum: RETRY_LIMITS.maxAttempts, description: 'Attempts in all, the first included (1 = no retry).' }),
    backoff: Type.Optional(StringEnum(RETRY_BACKOFF, { description: 'fixed: delayMs each time; exponential: delayMs·2^(n-1) (default).' })),
    delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: RETRY_LIMITS.maxDelayMs, description: 'First delay (default 1000).' })),
    maxDelayMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: RETRY_LIMITS.maxDelayMs, description: 'Longest delay, Retry-After included (default 30000).' }),
    ),
    jitter: Type.Optional(Type.Boolean({ description: 'Full jitter on exponential delays (default true).' })),
    on: Type.Optional(
      Type.Array(StringEnum(RETRY_ON), { minItems: 1, maxItems: RETRY_ON.length, description: 'Failures to retry (default network, timeout, 5xx, 429).' }),
    ),
  },
  { additionalProperties: false },
);
export type RetryPolicy = Static<typeof RetryPolicySchema>;

/** Where the console's editor draws a node; the engine ignores it. */
export const Position = Type.Object({ x: Type.Number(), y: Type.Number() }, { additionalProperties: false });

/** The icons the console has for node cards (an unknown one falls back to `box`). */
export type NodeIcon = 'world-upload' | 'git-branch' | 'list-check' | 'braces' | 'box';

/**
 * How the generated form edits one param. `text` (the default for strings) and `select` (the default
 * for an enum) hold a string; `key-value` edits a map (`Type.Record`) or a list of `{ name, value }`
 * as rows; `rows` edits a list of objects as rows, one input per property (its hint in `columns`:
 * strings as text, enums as selects); `switch` (the default for a boolean) is an on/off switch;
 * `json` edits any JSON value as text; `project` picks one of the user's projects; `workflow` one of
 * the user's workflows; `credential` (the default for a string param named `credential`, not in a row) offers the
 * owner's credentials of the types whose `usedBy` names the node (credential-types.ts), and takes any
 * name typed; `none` is not shown and keeps the stored value.
 */
export type FieldWidget = 'text' | 'select' | 'switch' | 'key-value' | 'rows' | 'json' | 'project' | 'workflow' | 'credential' | 'none';
export const FIELD_WIDGETS: readonly FieldWidget[] = ['text', 'select', 'switch', 'key-value', 'rows', 'json', 'project', 'workflow', 'credential', 'none'];

export interface FieldHint<Params = Record<string, unknown>> {
  label: string;
  widget?: FieldWidget;
  /** The value may hold {{…}} variables: the variable picker inserts into it, the preview renders it. */
  template?: boolean;
  multiline?: boolean;
  /** The empty value's text (a `project` widget: its empty option, default "No project (inbox)"). */
  placeholder?: string;
  description?: string;
  /** Labels of an enum's values, in the order the select shows them (default: the schema's order, as written). */
  options?: readonly { value: string; label: string }[];
  /** The value a new node starts with (selects), or what an absent boolean means (switches). */
  default?: string | boolean;
  /** The field is not shown while this holds (e.g. the body of a GET). */
  hiddenWhen?: (params: Partial<Params>) => boolean;
  /** A hidden field is also left out of what is saved. */
  dropWhenHidden?: boolean;
  /** Sent trimmed. */
  trim?: boolean;
  /** What one row or the value is called in messages and buttons: `header` → "Add header", "A header has a value but no name". */
  noun?: string;
  /** A URL the engine will fetch: the editor warns when it names a private or loopback address (the SSRF guard refuses those unless SSRF_ALLOWLIST opens them). */
  outboundUrl?: boolean;
  /** A `rows` field: the hint of each property of a row (its `hiddenWhen` sees the row). */
  columns?: Record<string, FieldHint>;
  /**
   * A `rows` field whose rows are branches (a Switch's rules): the branch row `index` takes. Removing
   * a row moves the edges of the rows after it up one and drops the removed row's own.
   */
  rowBranch?: (index: number) => string;
}

type HintsOf<Params> = { [K in keyof Params]-?: FieldHint<Params> };

export interface NodeDefinition<T extends string = string, P extends TObject = TObject, L extends TSchema = TNever> {
  type: T;
  /**
   * The node may change something outside the run (sends a request, writes to the workspace, starts a
   * run): the engine's handler says the same (`isAction`, checked by its node-registry test), and the
   * console's Run this step asks before running it. False: it only computes.
   */
  action: boolean;
  label: string;
  /** One sentence: what the node does (docs table, add-step menu). */
  description: string;
  /** New node ids in the editor: `<prefix>_1`, `<prefix>_2`, … */
  idPrefix: string;
  icon: NodeIcon;
  /** A Mantine colour name for the card's icon. */
  color: string;
  params: P;
  /** One hint per param: the generated form renders from these and the schema. */
  fields: HintsOf<Static<P>>;
  /** The branches an edge leaving this node must name (Condition: true/false); absent: edges name none. */
  branches?: readonly string[];
  /** The branches a node with these params offers (a Switch: one per rule and `default`); absent: all of `branches`. */
  branchesOf?(params: Partial<Static<P>>): readonly string[];
  /**
   * An older params shape still accepted (on save and in stored workflows): the graph's schema takes
   * either, and `upgrade` turns a stored value into the current shape wherever it is read (the
   * engine before running the node, the editor before showing it).
   */
  legacyParams?: L;
  upgrade?(params: Static<P> | Static<L>): Static<P>;
  /** What {{nodes.<id>.…}} holds after the node ran. */
  output: string;
  /** A line under the form (e.g. how branches work). */
  note?: string;
  /** The card's line under the node's name, from the params as saved. */
  summary(params: Static<P>): string;
}

/** Checks a definition against its params schema (one hint per param) and keeps its literal type. */
export const defineNode = <const T extends string, P extends TObject, L extends TSchema = TNever>(
  definition: NodeDefinition<T, P, L>,
): NodeDefinition<T, P, L> => definition;

/** The params a graph may store: the current shape, or either it or the older one a definition still accepts. */
export type StoredParams<P extends TObject, L extends TSchema> = [L] extends [TNever] ? P : TUnion<[P, L]>;

/** The graph's node object for one definition: `{ id, type, name?, position?, params }`. */
export function nodeSchema<const T extends string, P extends TObject, L extends TSchema = TNever>(definition: NodeDefinition<T, P, L>) {
  const params = (definition.legacyParams ? Type.Union([definition.params, definition.legacyParams]) : definition.params) as StoredParams<P, L>;
  return Type.Object(
    {
      id: NodeId,
      type: Type.Literal(definition.type),
      name: Type.Optional(Type.String({ maxLength: 200 })),
      position: Type.Optional(Position),
      onError: Type.Optional(OnErrorSchema),
      retry: Type.Optional(RetryPolicySchema),
      /**
       * A disabled step (docs/workflow-engine.md, "Disabled steps"): kept in the graph with its params
       * and edges, not executed; its input (the output of the step before it) is its output, on its
       * pass-through branch (disabledBranch), as n8n does with a deactivated node.
       */
      disabled: Type.Optional(Type.Boolean()),
      params,
    },
    { additionalProperties: false },
  );
}

/** A node's params as stored (possibly the older shape a definition still accepts) in the current shape. */
export function upgradeParams<P extends TObject>(definition: { upgrade?(params: never): Static<P> } | undefined, params: unknown): Static<P> {
  return (definition?.upgrade ? definition.upgrade(params as never) : params) as Static<P>;
}
