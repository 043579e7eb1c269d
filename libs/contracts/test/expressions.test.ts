import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluateExpression, templateExpressionProblem, templateParts } from '../src/expressions.ts';

test('templateParts splits text, {{path}} variables and {{= … }} expressions, which may hold braces and }} in strings', () => {
  assert.deepEqual(templateParts('Hi {{trigger.name}}: {{= {"a": {"b": "}}"}} }} and {{=1+1}}!'), [
    { kind: 'text', text: 'Hi ' },
    { kind: 'variable', text: '{{trigger.name}}', path: 'trigger.name' },
    { kind: 'text', text: ': ' },
    { kind: 'expression', text: '{{= {"a": {"b": "}}"}} }}', source: '{"a": {"b": "}}"}}' },
    { kind: 'text', text: ' and ' },
    { kind: 'expression', text: '{{=1+1}}', source: '1+1' },
    { kind: 'text', text: '!' },
  ]);
  assert.deepEqual(templateParts('no {{= end'), [{ kind: 'text', text: 'no {{= end' }]);
});

test('templateExpressionProblem names a syntax error with its position, an unclosed expression and an empty one', () => {
  assert.equal(templateExpressionProblem('{{trigger.a}} {{= trigger.a + 1 }}'), null);
  assert.match(templateExpressionProblem('x {{= trigger.a + }}') ?? '', /^expression \{\{= trigger\.a \+ \}\} is not valid: .*\(at character \d+\)$/);
  assert.match(templateExpressionProblem('x {{= trigger.a') ?? '', /without its closing \}\}/);
  assert.match(templateExpressionProblem('{{= }}') ?? '', /is empty/);
});

test('evaluateExpression returns a JSON copy that shares nothing with the scope', async () => {
  const trigger = { list: [{ a: 1 }] };
  const out = (await evaluateExpression('trigger.list', { trigger, nodes: {}, now: '2025-01-01T00:00:00.000Z' })) as { a: number }[];
  assert.deepEqual(out, [{ a: 1 }]);
  out[0]!.a = 2;
  assert.equal(trigger.list[0]!.a, 1);
});

test('expressionRunsInline: paths, literals and operators run inline; anything that can loop or backtrack goes to the sandbox', async () => {
  const { expressionRunsInline } = await import('../src/expressions.ts');
  for (const source of [
    'index % 3',
    'trigger.qty * trigger.price',
    'trigger.a ? "x" : "y"',
    '"vip" in trigger.labels',
    'trigger.lines[0].sku',
    '[1..5]',
    '{"a": trigger.x}',
    'trigger.first & " " & trigger.last',
  ])
    assert.equal(expressionRunsInline(source), true, source);
  for (const source of [
    '$match(trigger.s, /^(a+)+$/)',
    '$sum(trigger.lines.qty)',
    '[1..trigger.n]',
    '[1..100000]',
    '($f := function($n) { $f($n) }; $f(0))',
    'trigger.lines[qty > 1]',
    '$$.trigger',
    'trigger.**',
    'not(trigger.a)',
    'trigger.a{"k": b}',
    'not valid (',
  ])
    assert.equal(expressionRunsInline(source), false, source);
  const long = Array.from({ length: 70 }, (_, i) => `trigger.a${i}`).join(' + ');
  assert.equal(expressionRunsInline(long), false, 'more than 64 syntax nodes');
});
