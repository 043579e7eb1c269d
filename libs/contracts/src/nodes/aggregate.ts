import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { defineNode, Templated } from './define.ts';

export const aggregate = defineNode({
  type: 'aggregate',
  action: false,
  label: 'Aggregate',
  description: "Turns a list of items (e.g. a For each's results) into one list of a field or of whole items, or into one text joined with a separator.",
  idPrefix: 'aggregate',
  icon: 'list-check',
  color: 'teal',
  params: Type.Object(
    {
      items: Templated(2_000),
      field: Type.Optional(Type.String({ maxLength: 500, pattern: '^[^{}]*$' })),
      into: StringEnum(['list', 'text']),
      separator: Type.Optional(Type.String({ maxLength: 100 })),
    },
    { additionalProperties: false },
  ),
  fields: {
    items: {
      label: 'List',
      template: true,
      placeholder: '{{nodes.loop_1.results}}',
      description: 'Exactly one variable or expression holding a list (at most 10,000 items).',
    },
    field: {
      label: 'Field of each item',
      trim: true,
      placeholder: 'sku or task.id',
      description: 'A dotted path in each item; empty takes whole items. Items without the field are left out.',
    },
    into: {
      label: 'Into',
      default: 'list',
      options: [
        { value: 'list', label: 'one list' },
        { value: 'text', label: 'one text' },
      ],
    },
    separator: {
      label: 'Separator',
      multiline: true,
      placeholder: ', ',
      description: 'Between the items of the text (default ", "); it may hold line breaks (one item per line).',
      hiddenWhen: (p) => p.into !== 'text',
      dropWhenHidden: true,
    },
  },
  output: '`{ items, count, missing }` (into a list) or `{ text, count, missing }` (into a text; objects as JSON); `missing`: items without the field.',
  summary: (p) => (p.items ? `${p.field ? `${p.field} of ` : ''}${p.items} into ${p.into === 'text' ? 'a text' : 'a list'}` : 'Set the list to aggregate'),
});
