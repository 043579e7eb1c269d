import Type from 'typebox';
import { COMPARISON_COLUMNS, ConditionOperator } from './condition.ts';
import { defineNode, Templated } from './define.ts';

/** Rules are tried in order; the first that holds names the branch (`1` … `4`), none: `default`. */
export const SWITCH_MAX_RULES = 4;
export const SWITCH_BRANCHES = ['1', '2', '3', '4', 'default'] as const;

export const switchNode = defineNode({
  type: 'switch',
  action: false,
  label: 'Switch',
  description: "Compares one value with up to four rules (the Condition's operators) and follows the branch of the first that holds (`1`–`4`), else `default`.",
  idPrefix: 'switch',
  icon: 'git-branch',
  color: 'violet',
  params: Type.Object(
    {
      value: Templated(2_000),
      rules: Type.Array(Type.Object({ operator: ConditionOperator, right: Type.Optional(Templated(2_000)) }, { additionalProperties: false }), {
        minItems: 1,
        maxItems: SWITCH_MAX_RULES,
      }),
    },
    { additionalProperties: false },
  ),
  fields: {
    value: { label: 'Value to route on', template: true, placeholder: '{{trigger.order.status}}' },
    rules: {
      label: 'Rules (branch 1, 2, … in order)',
      widget: 'rows',
      noun: 'rule',
      description: `Up to ${SWITCH_MAX_RULES} rows of { "operator", "right" } (the Condition's operators); the first that holds takes its branch, none: default.`,
      columns: COMPARISON_COLUMNS,
      rowBranch: (index) => String(index + 1),
    },
  },
  branches: SWITCH_BRANCHES,
  branchesOf: (p) => [...SWITCH_BRANCHES.slice(0, Math.min(p.rules?.length ?? 0, SWITCH_MAX_RULES)), 'default'],
  output:
    '`{ branch, value }`: the branch taken (`1`–`4` or `default`) and the value compared. A branch without an edge ends that path (the run is skipped when no action ran).',
  note: 'Connect handle **1** for the first rule, **2** for the second, …, and **default** for a value no rule matched.',
  summary: (p) => (p.value ? `${p.value}: ${p.rules.length} rule${p.rules.length === 1 ? '' : 's'}` : 'Set the value to route on'),
});
