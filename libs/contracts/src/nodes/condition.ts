import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { defineNode, Templated } from './define.ts';

export const ConditionOperator = StringEnum([
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'starts_with',
  'exists',
  'not_exists',
  'greater_than',
  'less_than',
]);
const unary = (operator: string | undefined) => operator === 'exists' || operator === 'not_exists';

export const condition = defineNode({
  type: 'condition',
  action: false,
  label: 'Condition',
  description: 'Compares a value and follows its `true` or `false` branch (numbers numerically, other text exactly; equality in constant time).',
  idPrefix: 'condition',
  icon: 'git-branch',
  color: 'grape',
  params: Type.Object(
    {
      left: Templated(2_000),
      operator: ConditionOperator,
      right: Type.Optional(Templated(2_000)),
    },
    { additionalProperties: false },
  ),
  fields: {
    left: { label: 'Value to check', template: true, placeholder: '{{trigger.customer.email}}' },
    operator: {
      label: 'Operator',
      default: 'exists',
      options: [
        { value: 'exists', label: 'exists' },
        { value: 'not_exists', label: 'does not exist' },
        { value: 'equals', label: 'equals' },
        { value: 'not_equals', label: 'does not equal' },
        { value: 'contains', label: 'contains' },
        { value: 'not_contains', label: 'does not contain' },
        { value: 'starts_with', label: 'starts with' },
        { value: 'greater_than', label: 'is greater than' },
        { value: 'less_than', label: 'is less than' },
      ],
    },
    right: { label: 'Compare with', template: true, hiddenWhen: (p) => unary(p.operator), dropWhenHidden: true },
  },
  branches: ['true', 'false'],
  output: '`{ result }`. When the false branch has no edge, the run ends there (as skipped when no action ran).',
  note: 'Connect the **true** and **false** handles to what runs in each case. A branch left unconnected ends the run there.',
  summary: (p) => (p.left ? `${p.left} ${p.operator.replace('_', ' ')} ${p.right ?? ''}`.trim() : 'Set what to check'),
});
