/**
 * Filter node: keeps the items of a list (one variable holding an array) for which the Condition
 * node's operator holds on one field of the item (a dotted path; empty: the item itself). The
 * field's value reads as it would inside a template (numbers as text, objects as JSON), so the
 * operators behave as in a Condition. At most FILTER_MAX_ITEMS items: more fails the node, loudly.
 */
import type { NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import { stringify, valueAtPath, type TemplateRenderer } from '../template.ts';
import { evaluateCondition, renderRight, type ConditionInput } from './condition.ts';
import type { NodeHandler } from './node-handler.ts';

export const FILTER_MAX_ITEMS = 10_000;

export type FilterParams = NodeParams<'filter'>;
/** What a Filter compares: a Condition whose left-hand side is each item's field. */
export interface FilterInput extends Omit<ConditionInput, 'left'> {
  items: unknown;
  field: string;
}

export const filterHandler: NodeHandler<FilterParams, FilterInput> = {
  isAction: false,
  render: (params, renderer: TemplateRenderer) => ({
    items: renderer.renderDeep(params.items.trim()),
    field: (params.field ?? '').trim(),
    operator: params.operator,
    right: renderRight(params, renderer),
  }),
  // The list can be long: the step records what was asked, not the list again (the output has the kept items).
  mask: (input) => ({ count: Array.isArray(input.items) ? input.items.length : null, field: input.field, operator: input.operator, right: input.right }),
  execute: async (input) => {
    const { items } = input;
    if (!Array.isArray(items))
      throw new NodeFailedError(
        `the list to filter is ${items === '' ? 'empty or missing' : `not a list (${typeof items})`}: give exactly one variable holding a list, e.g. {{trigger.lines}}`,
      );
    if (items.length > FILTER_MAX_ITEMS) throw new NodeFailedError(`the list has ${items.length} items; a Filter takes at most ${FILTER_MAX_ITEMS}`);
    const kept = items.filter((item) => evaluateCondition({ left: stringify(valueAtPath(item, input.field)), operator: input.operator, right: input.right }));
    return { output: { items: kept, count: kept.length, dropped: items.length - kept.length } };
  },
};
