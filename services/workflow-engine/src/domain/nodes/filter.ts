/**
 * Filter node: keeps the items of a list (one variable holding an array) for which its rules hold,
 * joined by `and` (the default) or `or`: each the Condition node's operator on one field of the item
 * (a dotted path; empty: the item itself). The
 * field's value reads as it would inside a template (numbers as text, objects as JSON), so the
 * operators behave as in a Condition. At most FILTER_MAX_ITEMS items: more fails the node, loudly.
 */
import { upgradeFilterParams, type NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import { stringify, valueAtPath, type TemplateRenderer } from '../template.ts';
import { evaluateRules, renderRight, type Comparison, type ConditionCombinator } from './condition.ts';
import type { NodeHandler } from './node-handler.ts';

export const FILTER_MAX_ITEMS = 10_000;

/** As stored: rules and a combinator, or the older one comparison (read as one rule joined by `and`). */
export type FilterParams = NodeParams<'filter'>;
/** What a Filter compares: per rule, a Condition whose left-hand side is each item's field. */
export interface FilterInput {
  items: unknown;
  rules: (Omit<Comparison, 'left'> & { field: string })[];
  combinator: ConditionCombinator;
}

export const filterHandler: NodeHandler<FilterParams, FilterInput> = {
  isAction: false,
  render: (stored, renderer: TemplateRenderer) => {
    const params = upgradeFilterParams(stored);
    return {
      items: renderer.renderDeep(params.items.trim()),
      rules: params.rules.map((r) => ({ field: (r.field ?? '').trim(), operator: r.operator, right: renderRight(r, renderer) })),
      combinator: params.combinator ?? 'and',
    };
  },
  // The list can be long: the step records what was asked, not the list again (the output has the kept items).
  mask: (input) => ({ count: Array.isArray(input.items) ? input.items.length : null, rules: input.rules, combinator: input.combinator }),
  execute: async (input) => {
    const { items } = input;
    if (!Array.isArray(items))
      throw new NodeFailedError(
        `the list to filter is ${items === '' ? 'empty or missing' : `not a list (${typeof items})`}: give exactly one variable holding a list, e.g. {{trigger.lines}}`,
      );
    if (items.length > FILTER_MAX_ITEMS) throw new NodeFailedError(`the list has ${items.length} items; a Filter takes at most ${FILTER_MAX_ITEMS}`);
    const kept = items.filter((item) =>
      evaluateRules({
        rules: input.rules.map((r) => ({ left: stringify(valueAtPath(item, r.field)), operator: r.operator, right: r.right })),
        combinator: input.combinator,
      }),
    );
    return { output: { items: kept, count: kept.length, dropped: items.length - kept.length } };
  },
};
