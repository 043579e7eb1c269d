import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TemplateRenderer } from '../src/domain/template.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';

const payload = {
  customer: { name: 'Ada Lovelace', email: 'ada@example.com', vip: true },
  amount: 42.5,
  items: [
    { name: 'Widget', qty: 2 },
    { name: 'Gadget', qty: 1 },
  ],
  empty: null,
  note: 'a {{nodes.http.body.secret}} lookalike',
};
const headers = { 'x-name': 'hello', 'x-hub-signature-256': 'sha256=abc' };

function renderer(nodes: Record<string, unknown> = {}) {
  return new TemplateRenderer({ sandbox: inProcessSandbox, payload, headers, nodes: new Map(Object.entries(nodes)) });
}

test('renders nested trigger fields, array indexes and headers inside a string', () => {
  const r = renderer();
  assert.equal(
    r.renderString('Hi {{trigger.customer.name}}, first item {{trigger.items.0.name}} x{{trigger.items.0.qty}}, header {{trigger.headers.x-name}}'),
    'Hi Ada Lovelace, first item Widget x2, header hello',
  );
  assert.deepEqual(r.warnings, []);
});

test('whitespace inside the braces is allowed', () => {
  assert.equal(renderer().renderString('{{ trigger.customer.name }}|{{   trigger.amount}}'), 'Ada Lovelace|42.5');
});

test('header names are matched case-insensitively, as HTTP does', () => {
  assert.equal(renderer().renderString('{{trigger.headers.X-Hub-Signature-256}}'), 'sha256=abc');
});

test('earlier node outputs are available as nodes.<id>.status and nodes.<id>.body.<path>', () => {
  const r = renderer({ http: { status: 201, headers: {}, body: { id: 'T-9', tags: ['a'] } } });
  assert.equal(r.renderString('{{nodes.http.status}} {{nodes.http.body.id}} {{nodes.http.body.tags.0}}'), '201 T-9 a');
});

test('objects and arrays embedded in a longer string render as JSON; null renders empty', () => {
  const r = renderer();
  assert.equal(r.renderString('c={{trigger.customer}}'), 'c={"name":"Ada Lovelace","email":"ada@example.com","vip":true}');
  assert.equal(r.renderString('i={{trigger.items.1}}'), 'i={"name":"Gadget","qty":1}');
  assert.equal(r.renderString('[{{trigger.empty}}]'), '[]');
  assert.deepEqual(r.warnings, []);
});

test('a missing path renders empty and records a warning naming the variable, without throwing', () => {
  const r = renderer();
  assert.equal(r.renderString('Dear {{trigger.customer.nmae}}!'), 'Dear !');
  assert.deepEqual(r.warnings, ['{{trigger.customer.nmae}} is empty: no such field']);
  r.renderString('{{trigger.customer.nmae}} again');
  assert.equal(r.warnings.length, 1, 'the same warning is recorded once');
});

test('out-of-range indexes, non-numeric indexes, unknown headers, unknown roots and unrun nodes are missing', () => {
  const r = renderer();
  for (const t of [
    '{{trigger.items.5.name}}',
    '{{trigger.items.-1}}',
    '{{trigger.items.01}}',
    '{{trigger.headers.x-none}}',
    '{{secrets.db}}',
    '{{nodes.later.body}}',
  ]) {
    assert.equal(r.renderString(t), '', t);
  }
  assert.equal(r.warnings.length, 6);
  assert.match(r.warnings[3]!, /no such header/);
  assert.match(r.warnings[4]!, /unknown variable/);
  assert.match(r.warnings[5]!, /node "later" has not run/);
});

test('prototype and constructor paths resolve to missing, never to engine internals', () => {
  const r = renderer({ http: { body: {} } });
  for (const t of [
    '{{trigger.__proto__}}',
    '{{trigger.constructor.name}}',
    '{{trigger.customer.constructor}}',
    '{{trigger.customer.__proto__.toString}}',
    '{{trigger.items.constructor}}',
    '{{trigger.customer.name.length}}',
    '{{trigger.customer.hasOwnProperty}}',
    '{{nodes.http.body.__proto__}}',
    '{{trigger.headers.__proto__}}',
    '{{nodes.__proto__}}',
  ]) {
    assert.equal(r.renderString(t), '', t);
  }
  assert.equal(r.warnings.length, 10);
});

test('a value that itself looks like a template is inserted literally, not rendered again', () => {
  const r = renderer({ http: { body: { secret: 'leak' } } });
  assert.equal(r.renderString('{{trigger.note}}'), 'a {{nodes.http.body.secret}} lookalike');
});

test('renderDeep keeps the JSON type of a string that is exactly one variable', () => {
  const r = renderer();
  const out = r.renderDeep({
    amount: '{{trigger.amount}}',
    vip: '{{ trigger.customer.vip }}',
    items: '{{trigger.items}}',
    nothing: '{{trigger.empty}}',
    label: 'Total: {{trigger.amount}}',
    nested: [{ who: '{{trigger.customer.name}}' }, 7, false, null],
    '{{trigger.customer.name}}': 'keys are not rendered',
  });
  assert.deepEqual(out, {
    amount: 42.5,
    vip: true,
    items: payload.items,
    nothing: null,
    label: 'Total: 42.5',
    nested: [{ who: 'Ada Lovelace' }, 7, false, null],
    '{{trigger.customer.name}}': 'keys are not rendered',
  });
  (out as { items: Array<{ name: string }> }).items[0]!.name = 'changed';
  assert.equal(payload.items[0]!.name, 'Widget', 'the body is a copy, not the trigger payload itself');
});

test('renderDeep turns a missing exact variable into an empty string with a warning', () => {
  const r = renderer();
  assert.deepEqual(r.renderDeep({ id: '{{trigger.order.id}}' }), { id: '' });
  assert.deepEqual(r.warnings, ['{{trigger.order.id}} is empty: no such field']);
});

test('renderMap renders each header value as a string', () => {
  assert.deepEqual(renderer().renderMap({ 'x-amount': '{{trigger.amount}}', 'x-who': 'u:{{trigger.customer.email}}' }), {
    'x-amount': '42.5',
    'x-who': 'u:ada@example.com',
  });
});

test('quiet rendering (used by exists / not_exists) records no warning for a missing path', () => {
  const r = renderer();
  assert.equal(r.renderString('{{trigger.absent}}', { quiet: true }), '');
  assert.deepEqual(r.warnings, []);
});

test('text without variables and unbalanced braces pass through unchanged', () => {
  assert.equal(renderer().renderString('{ "a": 1 } {{ not closed'), '{ "a": 1 } {{ not closed');
});

test('{{wait.<id>.resumeUrl}} renders the link the scope gives; a node that is no resume Wait, or no link source, renders empty with the reason', () => {
  const links = new TemplateRenderer({
    sandbox: inProcessSandbox,
    payload: {},
    headers: {},
    nodes: new Map(),
    resumeUrl: (id) => (id === 'approve' ? { url: 'https://x.test/api/v1/resume/w?secret=s' } : { why: `node "${id}" is not a Wait node in resume mode` }),
  });
  assert.equal(links.renderString('Approve: {{wait.approve.resumeUrl}}'), 'Approve: https://x.test/api/v1/resume/w?secret=s');
  assert.equal(links.renderString('{{wait.ask.resumeUrl}}'), '');
  assert.equal(links.renderString('{{wait.approve.secret}}'), '');
  assert.deepEqual(links.warnings, [
    '{{wait.ask.resumeUrl}} is empty: node "ask" is not a Wait node in resume mode',
    '{{wait.approve.secret}} is empty: write {{wait.<nodeId>.resumeUrl}}',
  ]);
  const none = new TemplateRenderer({ sandbox: inProcessSandbox, payload: {}, headers: {}, nodes: new Map() });
  assert.equal(none.renderString('{{wait.approve.resumeUrl}}'), '');
  assert.deepEqual(none.warnings, ['{{wait.approve.resumeUrl}} is empty: this run has no resume links']);
});
