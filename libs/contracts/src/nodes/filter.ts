import Type from 'typebox';
import { ConditionOperator } from './condition.ts';
import { defineNode, Templated } from './define.ts';

const unary = (operator: string | undefined) => operator === 'exists' || operator === 'not_exists';

export const filter = defineNode({
  type: 'filter',
  action: false,
  label: 'Filter',
  description: "Keeps the items of a list that match a condition (the Condition's operators on one field of each item).",
  idPrefix: 'filter',
  icon: 'list-check',
  color: 'orange',
  params: Type.Object(
    {
      items: Templated(2_000),
      field: Type.Optional(Type.String({ maxLength: 500, pattern: '^[^{}]*$' })),
      operator: ConditionOperator,
      right: Type.Optional(Templated(2_000)),
    },
    { additionalProperties: false },
  ),
  fields: {
    items: {
      label: 'List',
      template: true,
      placeholder: '{{trigger.order.lines}}',
      description: 'Exactly one variable holding a list (at most 10,000 items).',
    },
    field: {
      label: 'Field of each item',
      trim: true,
      placeholder: 'status or customer.email',
      description: 'A dotted path in each item; empty compares the item itself.',
    },
    operator: {
      label: 'Operator',
      default: 'equals',
      options: [
        { value: 'equals', label: 'equals' },
        { value: 'not_equals', label: 'does not equal' },
        { value: 'contains', label: 'contains' },
        { value: 'not_contains', label: 'does not contain' },
        { value: 'starts_with', label: 'starts with' },
        { value: 'exists', label: 'exists' },
        { value: 'not_exists', label: 'does not exist' },
        { value: 'greater_than', label: 'is greater than' },
        { value: 'less_than', label: 'is less than' },
      ],
    },
    right: { label: 'Compare with', template: true, hiddenWhen: (p) => unary(p.operator), dropWhenHidden: true },
  },
  output: '`{ items, count, dropped }`: the items kept (in order), how many, and how many were left out.',
  summary: (p) => (p.items ? `${p.items}: ${p.field ? `${p.field} ` : ''}${p.operator.replace('_', ' ')} ${p.right ?? ''}`.trim() : 'Set the list to filter'),
});
