/**
 * Condition node: checks its rules (each the rendered `left` compared with the rendered `right`),
 * joined by `and` (every rule holds, the default) or `or` (any one), and picks the `true` or `false`
 * branch. Params saved in the older one-comparison shape (`left`, `operator`, `right`) read as one
 * rule (upgradeConditionParams). String comparisons are exact and case-sensitive (a signature or an
 * id differing in case is a different value); `equals` and `not_equals` compare in constant time so
 * a Condition checking a signature header (docs/workflow-engine.md, "Checking a signature header")
 * leaks nothing through timing.
 */
import { upgradeConditionParams, type ConditionOperatorName, type ConditionParams as CurrentParams, type NodeParams } from '@flowdesk/contracts';
import { constantTimeEqual } from '@flowdesk/service-kit';
import type { TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';

/** As stored: rules and a combinator, or the older one comparison. */
export type ConditionParams = NodeParams<'condition'>;
export type ConditionOperator = ConditionOperatorName;
export type ConditionCombinator = NonNullable<CurrentParams['combinator']>;

/** One rendered comparison (a Condition rule, a Switch rule against its value, a Filter's test of one item). */
export interface Comparison {
  left: string;
  operator: ConditionOperator;
  right: string;
}

export interface ConditionInput {
  rules: Comparison[];
  combinator: ConditionCombinator;
}

// These operators test presence, so a missing left-hand variable is the expected case, not a warning.
const PRESENCE = new Set<ConditionOperator>(['exists', 'not_exists', 'is_empty', 'is_not_empty']);
export const isPresenceTest = (operator: ConditionOperator): boolean => PRESENCE.has(operator);
// And these have no right-hand side.
const UNARY = new Set<ConditionOperator>([...PRESENCE, 'is_true', 'is_false']);

/** The rendered right-hand side of a comparison (Condition, Switch, Filter): '' for an operator without one. */
export function renderRight(params: { operator: ConditionOperator; right?: string }, renderer: TemplateRenderer): string {
  return UNARY.has(params.operator) ? '' : renderer.renderString(params.right ?? '');
}

export const conditionHandler: NodeHandler<ConditionParams, ConditionInput> = {
  isAction: false,
  render: (params, renderer) => renderCondition(params, renderer),
  mask: (input) => input,
  execute: async (input) => {
    const result = evaluateRules(input);
    return { output: { result }, branch: result ? 'true' : 'false' };
  },
};

/** Renders each rule's operands; params in the older one-comparison shape are one rule joined by `and`. */
export function renderCondition(params: ConditionParams, renderer: TemplateRenderer): ConditionInput {
  const { rules, combinator } = upgradeConditionParams(params);
  return {
    rules: rules.map((r) => ({
      left: renderer.renderString(r.left, { quiet: isPresenceTest(r.operator) }),
      operator: r.operator,
      right: renderRight(r, renderer),
    })),
    combinator: combinator ?? 'and',
  };
}

/** `and`: every rule holds; `or`: at least one does. */
export function evaluateRules({ rules, combinator }: ConditionInput): boolean {
  return combinator === 'or' ? rules.some(evaluateCondition) : rules.every(evaluateCondition);
}

export function evaluateCondition({ left, operator, right }: Comparison): boolean {
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
    case 'not_starts_with':
      return !left.startsWith(right);
    case 'ends_with':
      return left.endsWith(right);
    case 'not_ends_with':
      return !left.endsWith(right);
    case 'exists':
      return left !== '';
    case 'not_exists':
      return left === '';
    case 'is_empty':
      return isEmpty(left);
    case 'is_not_empty':
      return !isEmpty(left);
    case 'greater_than':
      return compare(left, right) > 0;
    case 'greater_or_equal':
      return left.trim() !== '' && compare(left, right) >= 0;
    case 'less_than':
      return compare(left, right) < 0;
    case 'less_or_equal':
      return left.trim() !== '' && compare(left, right) <= 0;
    case 'is_true':
      return left.trim().toLowerCase() === 'true';
    case 'is_false':
      return left.trim().toLowerCase() === 'false';
  }
}

/** Empty: nothing, only whitespace, or an empty list or object as a template renders it (`[]`, `{}`). */
function isEmpty(value: string): boolean {
  const v = value.trim();
  return v === '' || v === '[]' || v === '{}';
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
