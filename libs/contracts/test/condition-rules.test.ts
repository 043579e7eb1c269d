// The Condition's rules joined by AND / OR (and its older one-comparison params, still accepted), the
// Switch's rules as rows, and the form hints the console's generated form reads (rows, switches, multi-line text).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import {
  CONDITION_MAX_RULES,
  CONDITION_OPERATOR_OPTIONS,
  CONDITION_OPERATORS,
  formFields,
  nodeDefinition,
  upgradeConditionParams,
  upgradeParams,
  WorkflowGraph,
  type AnyNodeDefinition,
} from '../src/index.ts';

const graph = Compile(WorkflowGraph);
const withCondition = (params: unknown) => ({
  nodes: [{ id: 'c', type: 'condition', params }],
  edges: [{ from: 'trigger', to: 'c' }],
});
const rule = { left: '{{trigger.status}}', operator: 'equals', right: 'paid' };

test('a condition takes rules joined by and / or; without a combinator it is and', () => {
  assert.ok(graph.Check(withCondition({ rules: [rule, { left: '{{trigger.vip}}', operator: 'is_true' }], combinator: 'or' })));
  assert.ok(graph.Check(withCondition({ rules: [rule], combinator: 'and' })));
  assert.ok(graph.Check(withCondition({ rules: [rule] })));
  for (const [why, params] of [
    ['no rules', { rules: [] }],
    ['an unknown combinator', { rules: [rule], combinator: 'xor' }],
    ['an unknown operator', { rules: [{ ...rule, operator: 'like' }] }],
    ['a rule without left', { rules: [{ operator: 'exists' }] }],
    ['a rule with an extra key', { rules: [{ ...rule, extra: 1 }] }],
    [`more than ${CONDITION_MAX_RULES} rules`, { rules: Array.from({ length: CONDITION_MAX_RULES + 1 }, () => rule) }],
    ['both shapes at once', { ...rule, rules: [rule] }],
    ['neither shape', {}],
  ] as const)
    assert.equal(graph.Check(withCondition(params)), false, why);
});

test('the older one-comparison params still validate and read as one rule joined by and', () => {
  assert.ok(graph.Check(withCondition(rule)));
  assert.ok(graph.Check(withCondition({ left: '{{trigger.coupon}}', operator: 'exists' })));
  assert.equal(graph.Check(withCondition({ left: 'x', operator: 'like' })), false);
  assert.deepEqual(upgradeConditionParams(rule as never), { rules: [rule], combinator: 'and' });
  assert.deepEqual(upgradeConditionParams({ left: 'x', operator: 'exists' }), { rules: [{ left: 'x', operator: 'exists' }], combinator: 'and' });
  const current = { rules: [rule], combinator: 'or' as const };
  assert.equal(upgradeParams(nodeDefinition('condition'), current), current, 'the current shape is kept as it is');
  assert.equal(nodeDefinition('condition')!.summary(upgradeConditionParams(rule as never) as never), '{{trigger.status}} equals paid');
  assert.equal(
    nodeDefinition('condition')!.summary({ rules: [rule, { left: '{{trigger.vip}}', operator: 'is_true' }], combinator: 'or' } as never),
    '{{trigger.status}} equals paid OR {{trigger.vip}} is true',
  );
});

test('every operator has a label in the editor, and the new ones validate in a Switch and a Filter too', () => {
  assert.deepEqual([...CONDITION_OPERATOR_OPTIONS.map((o) => o.value)].sort(), [...CONDITION_OPERATORS].sort());
  const sw = {
    nodes: [{ id: 's', type: 'switch', params: { value: 'x', rules: [{ operator: 'ends_with', right: '.pdf' }, { operator: 'is_empty' }] } }],
    edges: [],
  };
  assert.ok(graph.Check(sw));
  const filter = {
    nodes: [{ id: 'f', type: 'filter', params: { items: '{{trigger.lines}}', field: 'qty', operator: 'greater_or_equal', right: '2' } }],
    edges: [],
  };
  assert.ok(graph.Check(filter));
});

test('a filter takes rules on fields of each item joined by and / or; its older one-comparison params still validate', () => {
  const filter = (params: unknown) => ({ nodes: [{ id: 'f', type: 'filter', params }], edges: [] });
  const rules = [{ field: 'qty', operator: 'greater_than', right: '10' }, { operator: 'is_not_empty' }];
  assert.ok(graph.Check(filter({ items: '{{trigger.lines}}', rules, combinator: 'or' })));
  assert.ok(graph.Check(filter({ items: '{{trigger.lines}}', field: 'qty', operator: 'equals', right: '1' })), 'the older shape');
  assert.equal(graph.Check(filter({ items: '{{trigger.lines}}', rules, field: 'qty', operator: 'equals' })), false, 'not a mix');
  assert.equal(
    graph.Check(filter({ items: '{{trigger.lines}}', rules: [{ field: '{{x}}', operator: 'exists' }] })),
    false,
    'a field is a path, not a template',
  );
  assert.deepEqual(upgradeParams(nodeDefinition('filter'), { items: '{{trigger.lines}}', field: 'qty', operator: 'exists' }), {
    items: '{{trigger.lines}}',
    rules: [{ field: 'qty', operator: 'exists' }],
    combinator: 'and',
  });
  assert.deepEqual(
    fields('filter').map((f) => [f.key, f.widget]),
    [
      ['items', 'text'],
      ['rules', 'rows'],
      ['combinator', 'select'],
    ],
  );
});

function fields(type: string) {
  return formFields(nodeDefinition(type)!);
}

test('the Condition and Switch rules are row fields with a text or select per column; Switch rows are branches', () => {
  const rules = fields('condition').find((f) => f.key === 'rules')!;
  assert.equal(rules.widget, 'rows');
  assert.equal(rules.maxRows, CONDITION_MAX_RULES);
  assert.deepEqual(
    rules.columns!.map((c) => [c.key, c.widget, c.required]),
    [
      ['left', 'text', true],
      ['operator', 'select', true],
      ['right', 'text', false],
    ],
  );
  const right = rules.columns!.find((c) => c.key === 'right')!;
  assert.equal(right.hint.hiddenWhen?.({ operator: 'is_empty' }), true, 'no right-hand side for a unary operator');
  assert.equal(right.hint.hiddenWhen?.({ operator: 'contains' }), false);
  assert.equal(fields('condition').find((f) => f.key === 'combinator')!.widget, 'select');
  const swRules = fields('switch').find((f) => f.key === 'rules')!;
  assert.equal(swRules.widget, 'rows');
  assert.deepEqual(
    swRules.columns!.map((c) => c.key),
    ['operator', 'right'],
  );
  assert.deepEqual(
    [0, 1, 3].map((i) => swRules.hint.rowBranch!(i)),
    ['1', '2', '4'],
  );
  assert.deepEqual(nodeDefinition('switch')!.branchesOf!({ rules: [{ operator: 'exists' }, { operator: 'exists' }] } as never), ['1', '2', 'default']);
});

test('booleans are switches, enums selects, and an Aggregate separator is multi-line text (from the registry hints)', () => {
  const widget = (type: string, key: string) => fields(type).find((f) => f.key === key)!;
  for (const [type, key] of [
    ['find_tasks', 'overdue'],
    ['find_tasks', 'returnAll'],
    ['run_workflow', 'wait'],
    ['create_calendar_entry', 'allDay'],
  ] as const)
    assert.equal(widget(type, key).widget, 'switch', `${type}.${key}`);
  assert.equal(widget('run_workflow', 'wait').hint.default, true, 'absent means wait');
  assert.equal(widget('aggregate', 'into').widget, 'select');
  assert.equal(widget('aggregate', 'separator').hint.multiline, true);
});

test('the form generator refuses a rows field without column hints and a switch on a non-boolean', () => {
  const condition = nodeDefinition('condition')!;
  const noColumns = { ...condition, fields: { ...condition.fields, rules: { label: 'Rules', widget: 'rows' } } } as unknown as AnyNodeDefinition;
  assert.throws(() => formFields(noColumns), /param "rules", column "left" has no field hint/);
  const badSwitch = { ...condition, fields: { ...condition.fields, combinator: { label: 'x', widget: 'switch' } } } as unknown as AnyNodeDefinition;
  assert.throws(() => formFields(badSwitch), /param "combinator" is a switch but not a boolean/);
});
