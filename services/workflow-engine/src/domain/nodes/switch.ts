/**
 * Switch node: compares the rendered `value` with each rule in order (the Condition node's
 * operators, equality in constant time) and follows the branch of the first that holds: `1` … `4`,
 * else `default`.
 */
import type { NodeParams } from '@flowdesk/contracts';
import type { TemplateRenderer } from '../template.ts';
import { evaluateCondition, isPresenceTest, renderRight, type ConditionOperator } from './condition.ts';
import type { NodeHandler } from './node-handler.ts';

export type SwitchParams = NodeParams<'switch'>;
export interface SwitchInput {
  value: string;
  rules: { operator: ConditionOperator; right: string }[];
}

export const switchHandler: NodeHandler<SwitchParams, SwitchInput> = {
  isAction: false,
  render: (params, renderer: TemplateRenderer) => ({
    // A missing value is expected when a rule tests presence.
    value: renderer.renderString(params.value, { quiet: params.rules.some((r) => isPresenceTest(r.operator)) }),
    rules: params.rules.map((r) => ({ operator: r.operator, right: renderRight(r, renderer) })),
  }),
  mask: (input) => input,
  execute: async (input) => {
    const index = input.rules.findIndex((r) => evaluateCondition({ left: input.value, operator: r.operator, right: r.right }));
    const branch = index < 0 ? 'default' : String(index + 1);
    return { output: { branch, value: input.value }, branch };
  },
};
