import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { constantTimeEqual, verifyHmacSha256 } from '@flowdesk/service-kit';
import { Compile } from 'typebox/compile';
import { ConditionNode } from '@flowdesk/contracts';
import { conditionHandler, evaluateCondition, evaluateRules, type ConditionOperator } from '../src/domain/nodes/condition.ts';
import { TemplateRenderer } from '../src/domain/template.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';

const is = (left: string, operator: ConditionOperator, right = '') => evaluateCondition({ left, operator, right });

test('equals / not_equals are exact and case-sensitive', () => {
  assert.equal(is('paid', 'equals', 'paid'), true);
  assert.equal(is('Paid', 'equals', 'paid'), false);
  assert.equal(is('paid ', 'equals', 'paid'), false);
  assert.equal(is('1.0', 'equals', '1'), false, 'equals compares text, not numbers');
  assert.equal(is('Paid', 'not_equals', 'paid'), true);
  assert.equal(is('x', 'not_equals', 'x'), false);
});

test('contains, not_contains and starts_with are case-sensitive substring tests', () => {
  assert.equal(is('order shipped', 'contains', 'ship'), true);
  assert.equal(is('order shipped', 'contains', 'Ship'), false);
  assert.equal(is('order shipped', 'not_contains', 'cancel'), true);
  assert.equal(is('order shipped', 'not_contains', 'order'), false);
  assert.equal(is('refs/heads/main', 'starts_with', 'refs/heads/'), true);
  assert.equal(is('refs/tags/v1', 'starts_with', 'refs/heads/'), false);
});

test('exists / not_exists test for a non-empty value', () => {
  assert.equal(is('x', 'exists'), true);
  assert.equal(is('', 'exists'), false);
  assert.equal(is('', 'not_exists'), true);
  assert.equal(is('0', 'not_exists'), false);
});

test('greater_than / less_than compare numerically when both sides are numbers, else as text', () => {
  assert.equal(is('10', 'greater_than', '9'), true, 'numeric, not "10" < "9" as text');
  assert.equal(is('-2.5', 'less_than', '-2'), true);
  assert.equal(is('1e3', 'greater_than', '999'), true);
  assert.equal(is('5', 'greater_than', '5'), false);
  assert.equal(is('2025-02-01', 'greater_than', '2025-01-31'), true, 'ISO dates order as text');
  assert.equal(is('', 'greater_than', '5'), false, 'a missing value is not greater than anything');
  assert.equal(is('abc', 'less_than', 'abd'), true);
});

test('ends_with, not_starts_with, not_ends_with; >= and <= numerically, never true for a missing value', () => {
  assert.equal(is('invoice.pdf', 'ends_with', '.pdf'), true);
  assert.equal(is('invoice.PDF', 'ends_with', '.pdf'), false);
  assert.equal(is('invoice.pdf', 'not_ends_with', '.pdf'), false);
  assert.equal(is('refs/tags/v1', 'not_starts_with', 'refs/heads/'), true);
  assert.equal(is('5', 'greater_or_equal', '5'), true);
  assert.equal(is('10', 'greater_or_equal', '9'), true, 'numeric');
  assert.equal(is('4', 'greater_or_equal', '5'), false);
  assert.equal(is('5', 'less_or_equal', '5'), true);
  assert.equal(is('10', 'less_or_equal', '9'), false, 'numeric');
  assert.equal(is('', 'less_or_equal', '5'), false);
  assert.equal(is('', 'greater_or_equal', ''), false);
});

test('is_empty is true for nothing, whitespace and an empty list or object; is_true / is_false read booleans', () => {
  for (const v of ['', '  ', '[]', '{}']) assert.equal(is(v, 'is_empty'), true, JSON.stringify(v));
  for (const v of ['0', 'x', '[1]', '{"a":1}']) assert.equal(is(v, 'is_empty'), false, JSON.stringify(v));
  assert.equal(is('[1]', 'is_not_empty'), true);
  assert.equal(is('true', 'is_true'), true);
  assert.equal(is(' TRUE ', 'is_true'), true);
  assert.equal(is('yes', 'is_true'), false);
  assert.equal(is('false', 'is_false'), true);
  assert.equal(is('', 'is_false'), false, 'a missing value is not false');
});

const order = { sandbox: inProcessSandbox, payload: { status: 'refunded', total: 40 }, headers: {}, nodes: new Map() };
const paidOrBig = (combinator?: 'and' | 'or') => ({
  rules: [
    { left: '{{trigger.status}}', operator: 'equals' as const, right: 'paid' },
    { left: '{{trigger.total}}', operator: 'greater_than' as const, right: '10' },
  ],
  ...(combinator ? { combinator } : {}),
});

test('rules joined by OR: one rule holding takes the true branch; by AND (the default) every rule must hold', async () => {
  const or = await conditionHandler.execute(conditionHandler.render(paidOrBig('or'), new TemplateRenderer(order)), {} as never);
  assert.equal(or.branch, 'true', 'status is not paid but the total is over 10');
  const and = await conditionHandler.execute(conditionHandler.render(paidOrBig('and'), new TemplateRenderer(order)), {} as never);
  assert.equal(and.branch, 'false');
  const byDefault = await conditionHandler.execute(conditionHandler.render(paidOrBig(), new TemplateRenderer(order)), {} as never);
  assert.equal(byDefault.branch, 'false', 'no combinator: and');
  const none = await conditionHandler.execute(
    conditionHandler.render({ ...paidOrBig('or'), rules: paidOrBig().rules.map((r) => ({ ...r, right: '1000' })) }, new TemplateRenderer(order)),
    {} as never,
  );
  assert.equal(none.branch, 'false', 'or with no rule holding');
});

test('the older one-comparison params still validate and run as one rule', async () => {
  const legacy = { left: '{{trigger.total}}', operator: 'greater_than', right: '100' } as const;
  const schema = Compile(ConditionNode);
  assert.equal(schema.Check({ id: 'c', type: 'condition', params: legacy }), true, 'the old shape is accepted');
  assert.equal(schema.Check({ id: 'c', type: 'condition', params: paidOrBig('or') }), true, 'the new shape too');
  assert.equal(schema.Check({ id: 'c', type: 'condition', params: { ...legacy, rules: paidOrBig().rules } }), false, 'not a mix of both');
  const renderer = new TemplateRenderer({ sandbox: inProcessSandbox, payload: { total: 120 }, headers: {}, nodes: new Map() });
  const input = conditionHandler.render(legacy, renderer);
  assert.deepEqual(input, { rules: [{ left: '120', operator: 'greater_than', right: '100' }], combinator: 'and' });
  assert.equal((await conditionHandler.execute(input, {} as never)).branch, 'true');
  const exists = conditionHandler.render({ left: '{{trigger.coupon}}', operator: 'not_exists' }, renderer);
  assert.equal((await conditionHandler.execute(exists, {} as never)).branch, 'true');
});

test('the node renders its operands, outputs { result } and picks the matching branch', async () => {
  const renderer = new TemplateRenderer({ sandbox: inProcessSandbox, payload: { status: 'paid', total: 120 }, headers: {}, nodes: new Map() });
  const input = conditionHandler.render({ rules: [{ left: '{{trigger.total}}', operator: 'greater_than', right: '100' }] }, renderer);
  assert.deepEqual(input, { rules: [{ left: '120', operator: 'greater_than', right: '100' }], combinator: 'and' });
  const res = await conditionHandler.execute(input, {} as never);
  assert.deepEqual(res.output, { result: true });
  assert.equal(res.branch, 'true');
  const no = await conditionHandler.execute(
    conditionHandler.render({ rules: [{ left: '{{trigger.status}}', operator: 'equals', right: 'refunded' }] }, renderer),
    {} as never,
  );
  assert.deepEqual(no.output, { result: false });
  assert.equal(no.branch, 'false');
});

test('exists on a missing field records no warning (absence is what it tests); equals on one does', () => {
  const r = new TemplateRenderer({ sandbox: inProcessSandbox, payload: {}, headers: {}, nodes: new Map() });
  conditionHandler.render({ rules: [{ left: '{{trigger.coupon}}', operator: 'exists' }] }, r);
  conditionHandler.render({ rules: [{ left: '{{trigger.coupon}}', operator: 'is_empty' }] }, r);
  assert.deepEqual(r.warnings, []);
  conditionHandler.render({ rules: [{ left: '{{trigger.coupon}}', operator: 'equals', right: 'X' }] }, r);
  assert.deepEqual(r.warnings, ['{{trigger.coupon}} is empty: no such field']);
});

test('constantTimeEqual agrees with === on equal, different and different-length strings', () => {
  assert.equal(constantTimeEqual('sha256=abc', 'sha256=abc'), true);
  assert.equal(constantTimeEqual('sha256=abc', 'sha256=abd'), false);
  assert.equal(constantTimeEqual('sha256=abc', 'sha256=ab'), false);
  assert.equal(constantTimeEqual('', ''), true);
  assert.equal(constantTimeEqual('é', 'e'), false);
});

test('a signature header can be checked with equals against a precomputed value', () => {
  const raw = '{"action":"opened"}';
  const sig = `sha256=${createHmac('sha256', 'whsec').update(raw).digest('hex')}`;
  const r = new TemplateRenderer({
    sandbox: inProcessSandbox,
    payload: {},
    headers: { 'x-hub-signature-256': sig },
    nodes: new Map([['sign', { body: { expected: sig } }]]),
  });
  const input = conditionHandler.render(
    { rules: [{ left: '{{trigger.headers.x-hub-signature-256}}', operator: 'equals', right: '{{nodes.sign.body.expected}}' }] },
    r,
  );
  assert.equal(evaluateRules(input), true);
  assert.equal(evaluateCondition({ ...input.rules[0]!, right: `sha256=${'0'.repeat(64)}` }), false);
});

test('verifyHmacSha256 accepts the right GitHub-style signature over the raw bytes and refuses others', () => {
  const raw = Buffer.from('{"action":"opened", "n": 1}');
  const good = `sha256=${createHmac('sha256', 'whsec').update(raw).digest('hex')}`;
  assert.equal(verifyHmacSha256(raw, 'whsec', good), true);
  assert.equal(verifyHmacSha256(raw, 'whsec', good.toUpperCase().replace('SHA256=', 'sha256=')), true, 'hex case does not matter');
  assert.equal(verifyHmacSha256(raw, 'other', good), false, 'wrong secret');
  assert.equal(verifyHmacSha256(JSON.stringify(JSON.parse(raw.toString())), 'whsec', good), false, 're-serialised JSON is not the signed bytes');
  assert.equal(verifyHmacSha256(raw, 'whsec', ''), false);
});
