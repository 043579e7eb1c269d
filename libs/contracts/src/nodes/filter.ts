import Type, { type Static } from 'typebox';
import { StringEnum } from '../common.ts';
import { COMBINATOR_HINT, COMPARISON_COLUMNS, CONDITION_COMBINATORS, CONDITION_MAX_RULES, ConditionOperator, isUnaryOperator } from './condition.ts';
import { defineNode, Templated } from './define.ts';

const Field = Type.String({ maxLength: 500, pattern: '^[^{}]*$' });
const strict = { additionalProperties: false } as const;
/** One rule of a Filter: the Condition's comparison on one field of each item (empty: the item itself). */
const FilterRule = Type.Object({ field: Type.Optional(Field), operator: ConditionOperator, right: Type.Optional(Templated(2_000)) }, strict);
const CurrentParams = Type.Object(
  {
    items: Templated(2_000),
    rules: Type.Array(FilterRule, { minItems: 1, maxItems: CONDITION_MAX_RULES }),
    combinator: Type.Optional(StringEnum(CONDITION_COMBINATORS)),
  },
  strict,
);
type FilterParams = Static<typeof CurrentParams>;
/** The Filter's params before rules (one comparison); still accepted, read as one rule joined by `and`. */
export const LegacyFilterParams = Type.Object(
  { items: Templated(2_000), field: Type.Optional(Field), operator: ConditionOperator, right: Type.Optional(Templated(2_000)) },
  strict,
);
type LegacyFilterParams = Static<typeof LegacyFilterParams>;

/** Params as stored, in either shape → the current shape (rules and a combinator). */
export function upgradeFilterParams(params: FilterParams | LegacyFilterParams): FilterParams {
  if ('rules' in params) return params;
  const { items, field, operator, right } = params;
  return { items, rules: [{ ...(field !== undefined ? { field } : {}), operator, ...(right !== undefined ? { right } : {}) }], combinator: 'and' };
}

export const filter = defineNode({
  type: 'filter',
  action: false,
  label: 'Filter',
  description: "Keeps the items of a list that match its rules joined by AND or OR (the Condition's operators, each on one field of the item).",
  idPrefix: 'filter',
  icon: 'list-check',
  color: 'orange',
  params: CurrentParams,
  legacyParams: LegacyFilterParams,
  upgrade: upgradeFilterParams,
  fields: {
    items: {
      label: 'List',
      template: true,
      placeholder: '{{trigger.order.lines}}',
      description: 'Exactly one variable holding a list (at most 10,000 items).',
    },
    rules: {
      label: 'Rules',
      widget: 'rows',
      noun: 'rule',
      description: `Up to ${CONDITION_MAX_RULES} rows of { "field", "operator", "right" }: field a dotted path in each item (empty: the item itself). The older single { "field", "operator", "right" } params are still accepted, as one rule.`,
      columns: {
        field: { label: 'Field of each item', trim: true, placeholder: 'status or customer.email' },
        ...COMPARISON_COLUMNS,
      },
    },
    combinator: COMBINATOR_HINT,
  },
  output: '`{ items, count, dropped }`: the items kept (in order), how many, and how many were left out.',
  summary: (p) => {
    if (!p.items) return 'Set the list to filter';
    const rules = (p.rules ?? []).map((r) =>
      `${r.field ? `${r.field} ` : ''}${r.operator.replace(/_/g, ' ')} ${isUnaryOperator(r.operator) ? '' : (r.right ?? '')}`.trim(),
    );
    return `${p.items}: ${rules.join(p.combinator === 'or' ? ' OR ' : ' AND ')}`;
  },
});
