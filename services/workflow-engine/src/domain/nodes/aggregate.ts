/**
 * Aggregate node: a list (one variable or expression; a For each's `results`) into one list of a
 * field of each item (or the whole items), or into one text joined with a separator. Items without
 * the field are left out (counted in `missing`), never turned into empty entries.
 */
import type { NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import { stringify, valueAtPath, type TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';

export const AGGREGATE_MAX_ITEMS = 10_000;

export type AggregateParams = NodeParams<'aggregate'>;
export interface AggregateInput {
  items: unknown;
  field: string;
  into: 'list' | 'text';
  separator: string;
}

export const aggregateHandler: NodeHandler<AggregateParams, AggregateInput> = {
  isAction: false,
  render: (params, renderer: TemplateRenderer) => ({
    items: renderer.renderDeep(params.items.trim()),
    field: (params.field ?? '').trim(),
    into: params.into,
    separator: params.separator ?? ', ',
  }),
  mask: (input) => ({ count: Array.isArray(input.items) ? input.items.length : null, field: input.field, into: input.into, separator: input.separator }),
  execute: async (input) => {
    const { items } = input;
    if (!Array.isArray(items))
      throw new NodeFailedError(
        `the list to aggregate is ${items === '' ? 'empty or missing' : `not a list (${items === null ? 'null' : typeof items})`}: give exactly one variable holding a list, e.g. {{nodes.loop_1.results}}`,
      );
    if (items.length > AGGREGATE_MAX_ITEMS) throw new NodeFailedError(`the list has ${items.length} items; an Aggregate takes at most ${AGGREGATE_MAX_ITEMS}`);
    const values = items.map((item) => valueAtPath(item, input.field)).filter((v) => v !== undefined);
    const missing = items.length - values.length;
    if (input.into === 'text') return { output: { text: values.map(stringify).join(input.separator), count: values.length, missing } };
    return { output: { items: values, count: values.length, missing } };
  },
};
