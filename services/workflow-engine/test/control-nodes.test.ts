// Switch, Filter and Stop through executeWorkflow: the branch a switch takes decides which task is
// created; a filter's kept items reach the next step; a stop ends the run as it says.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Compile } from 'typebox/compile';
import { WorkflowGraph } from '@flowdesk/contracts';
import { fixedEvent, runInMemory } from './support.ts';

const checkGraph = Compile(WorkflowGraph);

function run(graph: WorkflowGraph, payload: Record<string, unknown>) {
  assert.ok(checkGraph.Check(graph), 'the graph is valid as the API stores it');
  return runInMemory(graph, fixedEvent('evt-control', payload));
}

const task = (id: string, title: string) => ({ id, type: 'create_task' as const, params: { title } });

const switchGraph: WorkflowGraph = {
  nodes: [
    {
      id: 'route',
      type: 'switch',
      params: {
        value: '{{trigger.status}}',
        rules: [
          { operator: 'equals', right: 'paid' },
          { operator: 'starts_with', right: 'refund' },
          { operator: 'greater_than', right: '{{trigger.limit}}' },
        ],
      },
    },
    task('paid', 'Ship {{trigger.id}}'),
    task('refund', 'Refund {{trigger.id}}'),
    task('other', 'Look at {{trigger.id}} ({{nodes.route.value}})'),
  ],
  edges: [
    { from: 'trigger', to: 'route' },
    { from: 'route', to: 'paid', branch: '1' },
    { from: 'route', to: 'refund', branch: '2' },
    { from: 'route', to: 'other', branch: 'default' },
  ],
};

test('Switch follows the first rule that holds (1, 2, …), else default; a rule whose branch has no edge ends the path as skipped', async () => {
  const cases: [Record<string, unknown>, string, string[]][] = [
    [{ status: 'paid', id: 'A1', limit: 5 }, '1', ['Ship A1']],
    [{ status: 'refund_requested', id: 'A2', limit: 5 }, '2', ['Refund A2']],
    // "2" < "5" numerically (as text, "2" would not be greater either): no rule holds.
    [{ status: 2, id: 'A3', limit: 5 }, 'default', ['Look at A3 (2)']],
    // "9" > "5" numerically: rule 3 holds, and branch 3 has no edge.
    [{ status: 9, id: 'A4', limit: 5 }, '3', []],
  ];
  for (const [payload, branch, titles] of cases) {
    const { record, tasks } = await run(switchGraph, payload);
    assert.deepEqual(record.steps.find((s) => s.nodeId === 'route')!.output, { branch, value: String(payload.status) }, branch);
    assert.deepEqual(
      tasks.map((t) => t.title),
      titles,
      branch,
    );
    assert.equal(record.status, titles.length ? 'succeeded' : 'skipped', branch);
  }
});

test('Filter keeps the items whose field matches, in order; later steps read them; a value that is not a list fails the node', async () => {
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'big', type: 'filter', params: { items: '{{trigger.lines}}', field: 'qty', operator: 'greater_than', right: '{{trigger.min}}' } },
      { id: 'labelled', type: 'filter', params: { items: '{{trigger.lines}}', field: 'labels', operator: 'contains', right: 'gift' } },
      { id: 'tags', type: 'filter', params: { items: '{{trigger.tags}}', operator: 'starts_with', right: 'vip' } },
      task('t', '{{nodes.big.count}} big, {{nodes.big.dropped}} small: {{nodes.big.items.0.sku}}; gifts {{nodes.labelled.count}}; {{nodes.tags.items}}'),
    ],
    edges: [
      { from: 'trigger', to: 'big' },
      { from: 'big', to: 'labelled' },
      { from: 'labelled', to: 'tags' },
      { from: 'tags', to: 't' },
    ],
  };
  const lines = [
    { sku: 'a', qty: 1, labels: [] },
    { sku: 'b', qty: 12, labels: ['gift'] },
    { sku: 'c', qty: 3, labels: ['gift', 'fragile'] },
    { sku: 'd', qty: 10 },
  ];
  const { record, tasks } = await run(graph, { lines, min: 2, tags: ['vip-gold', 'new', 'vip'] });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  // "12" > "2" and "10" > "2" compare as numbers, not as text.
  assert.deepEqual(record.steps[0]!.output, { items: [lines[1], lines[2], lines[3]], count: 3, dropped: 1 });
  assert.deepEqual(tasks[0]!.title, '3 big, 1 small: b; gifts 2; ["vip-gold","vip"]');

  const broken = await run(graph, { lines: 'not a list', min: 2, tags: [] });
  assert.equal(broken.record.status, 'failed');
  assert.match(broken.record.error ?? '', /node "big" failed: the list to filter is not a list/);
  assert.deepEqual(broken.tasks, []);
});

test('Filter rules joined by AND keep items matching every rule, by OR any rule; the older one-comparison params are one rule', async () => {
  const lines = [
    { sku: 'a', qty: 1, labels: ['gift'] },
    { sku: 'b', qty: 12, labels: [] },
    { sku: 'c', qty: 30, labels: ['gift'] },
    { sku: 'd', qty: 0 },
  ];
  const rules = [
    { field: 'qty', operator: 'greater_than', right: '10' },
    { field: 'labels', operator: 'contains', right: 'gift' },
  ] as const;
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'both', type: 'filter', params: { items: '{{trigger.lines}}', rules: [...rules] } },
      { id: 'either', type: 'filter', params: { items: '{{trigger.lines}}', rules: [...rules], combinator: 'or' } },
      { id: 'old', type: 'filter', params: { items: '{{trigger.lines}}', field: 'labels', operator: 'is_empty' } },
    ],
    edges: [
      { from: 'trigger', to: 'both' },
      { from: 'both', to: 'either' },
      { from: 'either', to: 'old' },
    ],
  };
  const { record } = await run(graph, { lines });
  assert.equal(record.status, 'succeeded', record.error ?? '');
  const skus = (id: string) => ((record.steps.find((s) => s.nodeId === id)!.output as { items: { sku: string }[] }).items ?? []).map((i) => i.sku);
  assert.deepEqual(skus('both'), ['c'], 'and (the default): over 10 and a gift');
  assert.deepEqual(skus('either'), ['a', 'b', 'c'], 'or: over 10 or a gift');
  assert.deepEqual(skus('old'), ['b', 'd'], 'the older shape: labels empty or missing');
});

test('Filter refuses a list over its limit loudly instead of dropping items', async () => {
  const graph: WorkflowGraph = {
    nodes: [{ id: 'f', type: 'filter', params: { items: '{{trigger.xs}}', operator: 'exists' } }],
    edges: [{ from: 'trigger', to: 'f' }],
  };
  const { record } = await run(graph, { xs: Array.from({ length: 10_001 }, (_, i) => i) });
  assert.equal(record.status, 'failed');
  assert.match(record.error ?? '', /10001 items; a Filter takes at most 10000/);
});

test('Stop ends the run: failed with its message as the error, or succeeded with nothing after it running', async () => {
  const graph = (status: 'failed' | 'succeeded'): WorkflowGraph => ({
    nodes: [
      { id: 'check', type: 'condition', params: { left: '{{trigger.lines}}', operator: 'exists' } },
      { id: 'stop', type: 'stop', params: { status, message: 'Order {{trigger.id}} has no lines' } },
      task('work', 'Pack {{trigger.id}}'),
      task('after', 'never'),
    ],
    edges: [
      { from: 'trigger', to: 'check' },
      { from: 'check', to: 'work', branch: 'true' },
      { from: 'check', to: 'stop', branch: 'false' },
      { from: 'stop', to: 'after' },
    ],
  });
  const failed = await run(graph('failed'), { id: 'O7' });
  assert.equal(failed.record.status, 'failed');
  assert.equal(failed.record.error, 'node "stop" failed: Order O7 has no lines');
  assert.deepEqual(failed.tasks, []);

  const ended = await run(graph('succeeded'), { id: 'O8' });
  assert.equal(ended.record.status, 'succeeded', ended.record.error ?? '');
  assert.deepEqual(ended.record.steps.find((s) => s.nodeId === 'stop')!.output, { status: 'succeeded', message: 'Order O8 has no lines' });
  assert.deepEqual(ended.tasks, [], 'the step after the stop did not run');

  const normal = await run(graph('failed'), { id: 'O9', lines: [1] });
  assert.deepEqual(
    normal.tasks.map((t) => t.title),
    ['Pack O9'],
  );
});
