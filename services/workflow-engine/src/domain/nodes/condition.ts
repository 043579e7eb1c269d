/**
 * Condition node: compares the rendered `left` with the rendered `right` and picks the `true` or
 * `false` branch. String comparisons are exact and case-sensitive (a signature or an id differing
 * in case is a different value); `equals` and `not_equals` compare in constant time so a
 * Condition checking a signature header (docs/workflow-engine.md, "Checking a signature header") leaks nothing through timing.
 */
import type { NodeParams } from '@flowdesk/contracts';
import { constantTimeEqual } from '@flowdesk/service-kit';
import type { TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';

export type ConditionParams = NodeParams<'condition'>;
export type ConditionOperator = ConditionParams['operator'];

export interface ConditionInput {
  left: string;
  operator: ConditionOperator;
  right: string;
}

// These operators test presence, so a missing left-hand variable is the expected case, not a warning,
// and there is no right-hand side.
const PRESENCE = new Set<ConditionOperator>(['exists', 'not_exists']);
export const isPresenceTest = (operator: ConditionOperator): boolean => PRESENCE.has(operator);

/** The rendered right-hand side of a comparison (Condition, Filter): '' for a presence test. */
export function renderRight(params: { operator: ConditionOperator; right?: string }, renderer: TemplateRenderer): string {
  return isPresenceTest(params.operator) ? '' : renderer.renderString(params.right ?? '');
}

export const conditionHandler: NodeHandler<ConditionParams, ConditionInput> = {
  isAction: false,
  render: (params, renderer) => renderCondition(params, renderer),
  mask: (input) => input,
  execute: async (input) => {
    const result = evaluateCondition(input);
    return { output: { result }, branch: result ? 'true' : 'false' };
  },
};

export function renderCondition(params: ConditionParams, renderer: TemplateRenderer): ConditionInput {
  return {
    left: renderer.renderString(params.left, { quiet: isPresenceTest(params.operator) }),
    operator: params.operator,
    right: renderRight(params, renderer),
  };
}

export function evaluateCondition({ left, operator, right }: ConditionInput): boolean {
  switch (operator) {
    case 'equals':
      return constantTimeEqual(left, right);
    case 'not_equals':
      return !constantTimeEqual(left, right);
    case 'contains':
      return left.includes(right);
    case 'not_contains':
      return !left.includes(right);
    case 'starts_with':
      return left.startsWith(right);
    case 'exists':
      return left !== '';
    case 'not_exists':
      return left === '';
    case 'greater_than':
      return compare(left, right) > 0;
    case 'less_than':
      return compare(left, right) < 0;
  }
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Numeric when both sides read as decimal numbers ("10" > "9"); otherwise by code points, which
 * orders ISO dates (2025-01-31 < 2025-02-01) correctly.
 */
function compare(left: string, right: string): number {
  const a = left.trim();
  const b = right.trim();
  if (NUMBER.test(a) && NUMBER.test(b)) return Math.sign(Number(a) - Number(b));
  return a < b ? -1 : a > b ? 1 : 0;
}
