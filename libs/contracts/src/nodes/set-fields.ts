import Type from 'typebox';
import { defineNode, Templated } from './define.ts';

/** A field name is one step of a variable path: {{nodes.<id>.<name>}}. */
const FieldName = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_-]{0,99}$' });

export const setFields = defineNode({
  type: 'set_fields',
  action: false,
  label: 'Set Fields',
  description:
    'Builds an object from name → value pairs, for later steps to use by name. A value that is exactly one variable keeps its type (a number stays a number).',
  idPrefix: 'set',
  icon: 'braces',
  color: 'cyan',
  params: Type.Object(
    {
      fields: Type.Array(Type.Object({ name: FieldName, value: Templated(10_000) }, { additionalProperties: false }), { maxItems: 100 }),
    },
    { additionalProperties: false },
  ),
  fields: {
    fields: {
      label: 'Fields',
      widget: 'key-value',
      template: true,
      noun: 'field',
    },
  },
  output: 'One key per field: `{{nodes.<id>.<name>}}`. A name given twice keeps its last value (with a warning).',
  summary: (p) => (p.fields.length ? p.fields.map((f) => f.name).join(', ') : '(no fields yet)'),
});
