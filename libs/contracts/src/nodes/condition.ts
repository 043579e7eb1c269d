import Type, { type Static } from 'typebox';
import { StringEnum } from '../common.ts';
import { defineNode, Templated, type FieldHint } from './define.ts';

/**
 * The comparisons a Condition rule, a Switch rule and a Filter make. The `is_*` and `exists` ones
 * take no right-hand side (UNARY_OPERATORS).
 */
export const CONDITION_OPERATORS = [
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
  'exists',
  'not_exists',
  'is_empty',
  'is_not_empty',
  'greater_than',
  'greater_or_equal',
  'less_than',
  'less_or_equal',
  'is_true',
  'is_false',
] as const;
export const ConditionOperator = StringEnum(CONDITION_OPERATORS);
export type ConditionOperatorName = (typeof CONDITION_OPERATORS)[number];

/** Operators without a right-hand side: the form hides "Compare with" and the saved rule leaves it out. */
export const UNARY_OPERATORS: readonly ConditionOperatorName[] = ['exists', 'not_exists', 'is_empty', 'is_not_empty', 'is_true', 'is_false'];
export const isUnaryOperator = (operator: string | undefined): boolean => UNARY_OPERATORS.includes(operator as ConditionOperatorName);

/** The operators' labels, in the order the editor's selects show them (Condition, Switch, Filter). */
export const CONDITION_OPERATOR_OPTIONS: readonly { value: ConditionOperatorName; label: string }[] = [
  { value: 'exists', label: 'exists' },
  { value: 'not_exists', label: 'does not exist' },
  { value: 'is_empty', label: 'is empty' },
  { value: 'is_not_empty', label: 'is not empty' },
  { value: 'equals', label: 'equals' },
  { value: 'not_equals', label: 'does not equal' },
  { value: 'contains', label: 'contains' },
  { value: 'not_contains', label: 'does not contain' },
  { value: 'starts_with', label: 'starts with' },
  { value: 'not_starts_with', label: 'does not start with' },
  { value: 'ends_with', label: 'ends with' },
  { value: 'not_ends_with', label: 'does not end with' },
  { value: 'greater_than', label: 'is greater than' },
  { value: 'greater_or_equal', label: 'is greater than or equal to' },
  { value: 'less_than', label: 'is less than' },
  { value: 'less_or_equal', label: 'is less than or equal to' },
  { value: 'is_true', label: 'is true' },
  { value: 'is_false', label: 'is false' },
];

/** A Condition holds at most this many rules. */
export const CONDITION_MAX_RULES = 10;
/** How a Condition joins its rules: all must hold (`and`, the default) or any one (`or`). */
export const CONDITION_COMBINATORS = ['and', 'or'] as const;

const strict = { additionalProperties: false } as const;
/** One rule: `left` compared with `right` by `operator` (no `right` for a unary operator). */
export const ConditionRule = Type.Object({ left: Templated(2_000), operator: ConditionOperator, right: Type.Optional(Templated(2_000)) }, strict);
export type ConditionRule = Static<typeof ConditionRule>;

/**
 * The Condition's params before rules (one comparison: `left`, `operator`, `right`). Still accepted
 * on save and in stored workflows; read as one rule joined by `and` (upgradeConditionParams).
 */
export const LegacyConditionParams = Type.Object({ left: Templated(2_000), operator: ConditionOperator, right: Type.Optional(Templated(2_000)) }, strict);
export type LegacyConditionParams = Static<typeof LegacyConditionParams>;

/** The column hints of a rule row's comparison (a Switch rule's whole row). */
export const COMPARISON_COLUMNS: Record<'operator' | 'right', FieldHint> = {
  operator: { label: 'Operator', default: 'equals', options: CONDITION_OPERATOR_OPTIONS },
  right: { label: 'Compare with', template: true, hiddenWhen: (row) => isUnaryOperator(row.operator as string | undefined), dropWhenHidden: true },
};
/** The column hints of one Condition rule row: what to check, then the comparison (a new rule tests `exists`, as the Condition always began). */
const RULE_COLUMNS: Record<string, FieldHint> = {
  left: { label: 'Value to check', template: true, placeholder: '{{trigger.customer.email}}' },
  ...COMPARISON_COLUMNS,
  operator: { ...COMPARISON_COLUMNS.operator, default: 'exists' },
};

/** The hint of a `combinator` param beside `rules` (Condition, Filter): shown from two rules on. */
export const COMBINATOR_HINT: FieldHint<{ rules?: unknown[] }> = {
  label: 'Combine rules with',
  default: 'and',
  options: [
    { value: 'and', label: 'AND: every rule holds' },
    { value: 'or', label: 'OR: any rule holds' },
  ],
  hiddenWhen: (p) => (p.rules?.length ?? 0) < 2,
};

const CurrentParams = Type.Object(
  {
    rules: Type.Array(ConditionRule, { minItems: 1, maxItems: CONDITION_MAX_RULES }),
    combinator: Type.Optional(StringEnum(CONDITION_COMBINATORS)),
  },
  strict,
);
export type ConditionParams = Static<typeof CurrentParams>;

/** Params as stored, in either shape → the current shape (rules and a combinator). */
export function upgradeConditionParams(params: ConditionParams | LegacyConditionParams): ConditionParams {
  if ('rules' in params) return params;
  const { left, operator, right } = params;
  return { rules: [{ left, operator, ...(right !== undefined ? { right } : {}) }], combinator: 'and' };
}

const ruleText = (r: ConditionRule) => `${r.left} ${r.operator.replace(/_/g, ' ')} ${isUnaryOperator(r.operator) ? '' : (r.right ?? '')}`.trim();

export const condition = defineNode({
  type: 'condition',
  action: false,
  label: 'Condition',
  description:
    'Checks one or more rules joined by AND or OR and follows its `true` or `false` branch (numbers numerically, other text exactly; equality in constant time).',
  idPrefix: 'condition',
  icon: 'git-branch',
  color: 'grape',
  params: CurrentParams,
  legacyParams: LegacyConditionParams,
  upgrade: upgradeConditionParams,
  fields: {
    rules: {
      label: 'Rules',
      widget: 'rows',
      noun: 'rule',
      description: `Up to ${CONDITION_MAX_RULES} rows of { "left", "operator", "right" } (no right for exists, not_exists, is_empty, is_not_empty, is_true, is_false). The older single { "left", "operator", "right" } params are still accepted, as one rule.`,
      columns: RULE_COLUMNS,
    },
    combinator: COMBINATOR_HINT,
  },
  branches: ['true', 'false'],
  output: '`{ result }`: whether the condition held. When the false branch has no edge, the run ends there (as skipped when no action ran).',
  note: 'Connect the **true** and **false** handles to what runs in each case. A branch left unconnected ends the run there.',
  summary: (p) => {
    const rules = (p.rules ?? []).filter((r) => r.left);
    if (!rules.length) return 'Set what to check';
    return rules.map(ruleText).join(p.combinator === 'or' ? ' OR ' : ' AND ');
  },
});
