import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WorkflowGraph } from '@flowdesk/contracts';
import type { HttpClient } from '../src/domain/ports.ts';
import type { OutboundRequest } from '@flowdesk/service-kit';
import { fixedEvent, orderLines, runInMemory } from './support.ts';

const event = fixedEvent(
  'evt-expr',
  {
    customer: { name: 'Ann', email: 'Ann@Example.COM' },
    labels: ['bug', 'vip'],
    requested: '2025-03-01T09:00:00.000Z',
    lines: orderLines(),
  },
  { 'x-github-event': 'push' },
);

async function run(graph: WorkflowGraph) {
  const requests: OutboundRequest[] = [];
  const http: HttpClient = {
    send: async (req) => (
      requests.push(req),
      { status: 201, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{"id":"r1"}'), truncated: false, url: req.url }
    ),
  };
  return { ...(await runInMemory(graph, event, http)), requests };
}

const setThenTask = (fields: { name: string; value: string }[], title: string): WorkflowGraph => ({
  nodes: [
    { id: 'set_1', type: 'set_fields', params: { fields } },
    { id: 'task_1', type: 'create_task', params: { title } },
  ],
  edges: [
    { from: 'trigger', to: 'set_1' },
    { from: 'set_1', to: 'task_1' },
  ],
});

test('expressions compute numbers, strings, dates and arrays; a whole-field expression keeps its JSON type, in text it is stringified', async () => {
  const { record, tasks } = await run(
    setThenTask(
      [
        { name: 'total', value: '{{= $sum(trigger.lines.(qty * price)) }}' },
        { name: 'first', value: '{{= trigger.lines[0].qty * trigger.lines[0].price }}' },
        { name: 'email', value: '{{= $lowercase(trigger.customer.email) }}' },
        { name: 'due', value: "{{= $fromMillis($toMillis(trigger.requested) + 3 * 86400000, '[Y0001]-[M01]-[D01]') }}" },
        // The date functions (libs/contracts expression-dates.ts), as the sandbox runs them.
        { name: 'monday', value: '{{= $dateStartOf($dateAdd(trigger.requested, 3, "days"), "week", "Europe/Berlin") }}' },
        { name: 'vip', value: '{{= "vip" in trigger.labels }}' },
        { name: 'skus', value: '{{= trigger.lines[qty > 1].sku }}' },
        { name: 'all_lines', value: '{{= $count(trigger.lines) }}' },
        { name: 'summary', value: '{{= {"n": $count(trigger.lines), "skus": $join(trigger.lines.sku, ",")} }}' },
        { name: 'event', value: "{{= headers.'x-github-event' }}" },
        { name: 'now', value: '{{= now }}' },
        { name: 'text', value: 'Total {{= $sum(trigger.lines.(qty * price)) }} for {{trigger.customer.name}}' },
      ],
      '{{nodes.set_1.email}}: {{= $string(nodes.set_1.total * 2) }} due {{= nodes.set_1.due }}',
    ),
  );
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(record.steps[0]!.output, {
    total: 28, // 13.5 + 10 + 0.5 + 4: all four lines, none dropped
    first: 13.5,
    email: 'ann@example.com',
    due: '2025-03-04',
    monday: '2025-03-03T00:00:00.000+01:00',
    vip: true,
    skus: ['A', 'C', 'D'],
    all_lines: 4,
    summary: { n: 4, skus: 'A,B,C,D' },
    event: 'push',
    now: record.steps[0]!.output && (record.steps[0]!.output as { now: string }).now,
    text: 'Total 28 for Ann',
  });
  // `now` is the run's clock (the test's fixed one), not the machine's.
  assert.match((record.steps[0]!.output as { now: string }).now, /^2025-03-01T10:00:00\.\d{3}Z$/);
  assert.deepEqual(tasks, [{ title: 'ann@example.com: 56 due 2025-03-04' }]);
  assert.deepEqual(record.warnings, []);
});

test('an HTTP Request body written as JSON text sends typed expression results', async () => {
  const { record, requests } = await run({
    nodes: [
      {
        id: 'http_1',
        type: 'http_request',
        params: {
          method: 'POST',
          url: 'https://api.example.com/orders/{{= $lowercase(trigger.lines[0].sku) }}',
          body: '{"total": "{{= $sum(trigger.lines.(qty * price)) }}", "skus": "{{= trigger.lines.sku }}", "who": "{{= \\"Mr \\" & trigger.customer.name }}"}',
        },
      },
    ],
    edges: [{ from: 'trigger', to: 'http_1' }],
  });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.equal(requests[0]!.url, 'https://api.example.com/orders/a');
  assert.deepEqual(JSON.parse(requests[0]!.body!), { total: 28, skus: ['A', 'B', 'C', 'D'], who: 'Mr Ann' });
});

test('an expression that yields nothing renders empty with a warning; no prototype or constructor is reachable', async () => {
  const { record, tasks } = await run(
    setThenTask(
      [
        { name: 'missing', value: '{{= trigger.nope }}' },
        { name: 'proto', value: '{{= $string(trigger.constructor) & $string(trigger.__proto__) }}' },
      ],
      'x{{= trigger.customer.constructor.constructor }}y',
    ),
  );
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(record.steps[0]!.output, { missing: '', proto: '' });
  assert.equal(tasks[0]!.title, 'xy');
  assert.ok(record.warnings.includes('node "set_1": {{= trigger.nope }} is empty: the expression yields nothing'), record.warnings.join('\n'));
});

for (const [what, source, reason] of [
  ['a syntax error (stored before validation existed)', 'trigger.lines[', /expression \{\{= trigger\.lines\[ \}\} is not valid: .*/],
  ['an endless loop', '($f := function($n) { $f($n + 1) }; $f(0))', /failed: Evaluation timeout after 1000 milliseconds/],
  [
    'a recursion too deep',
    '($f := function($n) { $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100000))',
    /failed: Stack overflow\. Check for non-terminating recursive function/,
  ],
  ['a huge sequence', '$count([1..200000])', /failed: The maximum sequence length of \d+ was exceeded/],
  ['a huge range', '$count([1..100000000])', /failed: The size of the sequence allocated by the range operator/],
  ['a huge result', '($s := $pad("", 900000, "x"); $s & $s)', /yields more than 1000000 characters/],
  ['a memory bomb through $pad', '$pad("", 500000000)', /\$pad's width is limited to 1000000/],
  ['a function as the result', 'function($x) { $x }', /yields a function, not a value/],
  ['calling something that is not a function', '($f := trigger.constructor.constructor; $f("return process")())', /failed: Attempted to invoke a non-function/],
] as const) {
  test(`${what} fails its node with an error naming the node and the expression; the next run is served`, async () => {
    const { record, tasks } = await run(setThenTask([{ name: 'x', value: `{{= ${source} }}` }], 'after'));
    assert.equal(record.status, 'failed');
    assert.match(record.error ?? '', /^node "set_1" failed: expression \{\{= /);
    assert.match(record.error ?? '', reason);
    const step = record.steps.find((s) => s.nodeId === 'set_1')!;
    assert.equal(step.status, 'failed');
    assert.match(step.error ?? '', reason);
    assert.deepEqual(tasks, [], 'the run stops at the failed node');
    const next = await run(setThenTask([{ name: 'x', value: '{{= 1 + 1 }}' }], '{{= nodes.set_1.x }}'));
    assert.equal(next.record.status, 'succeeded');
    assert.deepEqual(next.tasks, [{ title: '2' }]);
  });
}
