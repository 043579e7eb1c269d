import { describe, expect, test } from 'vitest';
import { insertAt, preview, previewWithExpressions, segments, tree, variable } from './templates.ts';

describe('insertAt', () => {
  test('inserts at the caret and puts the caret after the variable', () => {
    expect(insertAt('Hello !', 6, 6, variable('trigger.customer.name'))).toEqual({ value: 'Hello {{trigger.customer.name}}!', caret: 31 });
  });
  test('replaces the selection', () => {
    expect(insertAt('Hello NAME!', 6, 10, '{{trigger.a}}')).toEqual({ value: 'Hello {{trigger.a}}!', caret: 19 });
  });
  test('appends when the field never had a caret, and clamps positions past the end', () => {
    expect(insertAt('ab', null, null, 'X').value).toBe('abX');
    expect(insertAt('ab', 9, 12, 'X')).toEqual({ value: 'abX', caret: 3 });
  });
});

describe('segments (highlighting)', () => {
  test('splits text and variables, tolerating spaces in the braces', () => {
    expect(segments('New order from {{ trigger.customer.name }} ({{nodes.http_1.status}})')).toEqual([
      { kind: 'text', text: 'New order from ' },
      { kind: 'variable', text: '{{ trigger.customer.name }}', path: 'trigger.customer.name' },
      { kind: 'text', text: ' (' },
      { kind: 'variable', text: '{{nodes.http_1.status}}', path: 'nodes.http_1.status' },
      { kind: 'text', text: ')' },
    ]);
  });
  test('plain text is one segment; unbalanced braces are text', () => {
    expect(segments('no {{ variables')).toEqual([{ kind: 'text', text: 'no {{ variables' }]);
  });
});

describe('preview', () => {
  const scope = { trigger: { customer: { name: 'Ada', tags: ['vip'] }, amount: 42 }, nodes: { http_1: { status: 201, body: { id: 'x1' } } } };
  test('renders trigger and node variables as the engine does', () => {
    expect(preview('{{trigger.customer.name}} paid {{trigger.amount}} → {{nodes.http_1.body.id}} {{trigger.customer.tags.0}}', scope)).toEqual({
      text: 'Ada paid 42 → x1 vip',
      missing: [],
    });
  });
  test('objects render as JSON; missing paths are empty and listed once', () => {
    expect(preview('{{trigger.customer.tags}}|{{trigger.nope}}|{{trigger.nope}}|{{nodes.other.status}}', scope)).toEqual({
      text: '["vip"]|||',
      missing: ['trigger.nope', 'nodes.other.status'],
    });
  });
  test('no prototype walk, and no sample yet means every trigger variable is missing', () => {
    expect(preview('{{trigger.constructor}}{{trigger.__proto__}}', scope).missing).toEqual(['trigger.constructor', 'trigger.__proto__']);
    expect(preview('{{trigger.a}}', { trigger: null, nodes: {} }).missing).toEqual(['trigger.a']);
  });
});

describe('tree', () => {
  test('flattens nested objects and arrays into picker rows with paths', () => {
    expect(tree({ customer: { name: 'Ada' }, items: [{ sku: 'A' }], ok: true })).toEqual([
      { path: 'customer', key: 'customer', depth: 0, summary: '1 field', leaf: false },
      { path: 'customer.name', key: 'name', depth: 1, summary: 'Ada', leaf: true },
      { path: 'items', key: 'items', depth: 0, summary: '1 item', leaf: false },
      { path: 'items.0', key: '0', depth: 1, summary: '1 field', leaf: false },
      { path: 'items.0.sku', key: 'sku', depth: 2, summary: 'A', leaf: true },
      { path: 'ok', key: 'ok', depth: 0, summary: 'true', leaf: true },
    ]);
  });
  test('stops at the row limit', () => {
    expect(tree(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])), 10)).toHaveLength(10);
  });
});

describe('expressions in the preview', () => {
  const scope = {
    trigger: {
      lines: [
        { qty: 3, price: 4.5 },
        { qty: 1, price: 10 },
      ],
      name: 'Ada',
    },
    nodes: { set_1: { total: 23.5 } },
  };
  test('segments highlights an expression, braces inside it included', () => {
    expect(segments('Total {{= {"t": $sum(trigger.lines.price)} }}!')).toEqual([
      { kind: 'text', text: 'Total ' },
      { kind: 'expression', text: '{{= {"t": $sum(trigger.lines.price)} }}', source: '{"t": $sum(trigger.lines.price)}' },
      { kind: 'text', text: '!' },
    ]);
  });
  test('renders expressions against the sample as the engine does, with variables beside them', async () => {
    expect(
      await previewWithExpressions('{{trigger.name}}: {{= $sum(trigger.lines.(qty * price)) }} / {{= nodes.set_1.total * 2 }} {{= trigger.nope }}', scope),
    ).toEqual({
      text: 'Ada: 23.5 / 47 ',
      missing: ['= trigger.nope'],
      error: null,
    });
    expect(
      (await previewWithExpressions("{{= $fromMillis($toMillis(now) + 86400000, '[Y0001]-[M01]-[D01]') }}", scope, new Date('2026-02-28T12:00:00Z'))).text,
    ).toBe('2026-03-01');
  });
  test('a syntax error or a runaway expression shows the engine error instead of a text', async () => {
    expect((await previewWithExpressions('{{= $sum(trigger.lines.price }}', scope)).error).toMatch(
      /^expression \{\{= \$sum\(trigger\.lines\.price \}\} is not valid: .*at character/,
    );
    expect((await previewWithExpressions('{{= ($f := function($n) { $f($n + 1) }; $f(0)) }}', scope)).error).toMatch(
      /Evaluation timeout after 1000 milliseconds/,
    );
  });
});
