/**
 * For each node: checks its list and hands it to the executor, which runs the loop body (the nodes
 * its `each` edges reach) once per item (executor.ts runLoop) and replaces this output with the
 * results. The node itself has no side effect.
 */
import { FOR_EACH_MAX_ITEMS, type NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';

export type ForEachParams = NodeParams<'for_each'>;
export interface ForEachInput {
  items: unknown;
  concurrency: number;
}
/** What the handler hands the executor: the list to loop over and how many items run at once. */
export interface ForEachPlan {
  items: unknown[];
  concurrency: number;
}

export const forEachHandler: NodeHandler<ForEachParams, ForEachInput> = {
  isAction: false,
  render: (params, renderer: TemplateRenderer) => ({ items: renderer.renderDeep(params.items.trim()), concurrency: Number(params.concurrency ?? '1') }),
  // The list can be long: the step records its length (the output has the results).
  mask: (input) => ({ count: Array.isArray(input.items) ? input.items.length : null, concurrency: input.concurrency }),
  execute: async (input) => {
    const { items } = input;
    if (!Array.isArray(items))
      throw new NodeFailedError(
        `the list to loop over is ${items === '' ? 'empty or missing' : `not a list (${items === null ? 'null' : typeof items})`}: give exactly one variable holding a list, e.g. {{trigger.lines}}`,
      );
    if (items.length > FOR_EACH_MAX_ITEMS) throw new NodeFailedError(`the list has ${items.length} items; a For each takes at most ${FOR_EACH_MAX_ITEMS}`);
    const plan: ForEachPlan = { items, concurrency: input.concurrency };
    return { output: plan };
  },
};
