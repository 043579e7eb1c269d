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
