/**
 * Set Fields node: renders each name → value pair and outputs them as one object, so later nodes
 * read {{nodes.<id>.<name>}}. A value that is exactly one variable keeps its type (renderDeep, as an
 * HTTP body does); anything else renders to text. Changes nothing outside the run.
 */
import type { NodeParams } from '@flowdesk/contracts';
import type { TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';

export type SetFieldsParams = NodeParams<'set_fields'>;
export interface SetFieldsInput {
  fields: Record<string, unknown>;
  /** Names given more than once (the last value is kept). */
  repeated: string[];
}

export const setFieldsHandler: NodeHandler<SetFieldsParams, SetFieldsInput> = {
  isAction: false,
  render: renderSetFields,
  mask: (input) => input.fields,
  execute: async (input, ctx) => {
    for (const name of input.repeated) ctx.warn(`field "${name}" is set more than once; the last value is kept`);
    return { output: input.fields };
  },
};

export function renderSetFields(params: SetFieldsParams, renderer: TemplateRenderer): SetFieldsInput {
  // A null-prototype object: a field named __proto__ or constructor is an ordinary key.
  const fields = Object.create(null) as Record<string, unknown>;
  const repeated: string[] = [];
  for (const { name, value } of params.fields) {
    if (Object.hasOwn(fields, name) && !repeated.includes(name)) repeated.push(name);
    fields[name] = renderer.renderDeep(value);
  }
  return { fields: { ...fields }, repeated };
}
