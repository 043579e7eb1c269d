import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Compile } from 'typebox/compile';
import { WorkflowGraph } from '@flowdesk/contracts';
import { fixedEvent, runInMemory } from './support.ts';

const event = fixedEvent('evt-set', { customer: { name: 'Ann' }, amount: 42, tags: ['vip'] });
const run = (graph: WorkflowGraph) => runInMemory(graph, event);

const graph = (fields: { name: string; value: string }[], title = '{{nodes.set_1.greeting}}'): WorkflowGraph => ({
  nodes: [
    { id: 'set_1', type: 'set_fields', params: { fields } },
    { id: 'task_1', type: 'create_task', params: { title, notes: 'amount {{nodes.set_1.amount}}' } },
  ],
  edges: [
    { from: 'trigger', to: 'set_1' },
    { from: 'set_1', to: 'task_1' },
  ],
});

test('Set Fields builds an object from name → template pairs; later nodes read {{nodes.<id>.<name>}}', async () => {
  const { record, tasks } = await run(
    graph([
      { name: 'greeting', value: 'Hi {{trigger.customer.name}}' },
      { name: 'amount', value: '{{trigger.amount}}' },
      { name: 'tags', value: '{{trigger.tags}}' },
      { name: 'fixed', value: 'plain text' },
    ]),
  );
  assert.equal(record.status, 'succeeded', record.error ?? '');
  const step = record.steps.find((s) => s.nodeId === 'set_1')!;
  // A value that is exactly one variable keeps its type; anything else is text.
  assert.deepEqual(step.output, { greeting: 'Hi Ann', amount: 42, tags: ['vip'], fixed: 'plain text' });
  assert.equal(step.type, 'set_fields');
  assert.deepEqual(tasks, [{ title: 'Hi Ann', notes: 'amount 42' }]);
  assert.deepEqual(record.warnings, []);
});

test('a name given twice keeps its last value, with a warning naming the node; a missing variable warns as elsewhere', async () => {
  const { record, tasks } = await run(
    graph([
      { name: 'greeting', value: 'first' },
      { name: 'greeting', value: 'Hello {{trigger.customer.nmae}}' },
    ]),
  );
  assert.equal(record.status, 'succeeded');
  assert.deepEqual(record.steps[0]!.output, { greeting: 'Hello ' });
  assert.equal(tasks[0]!.title, 'Hello');
  assert.ok(record.warnings.includes('node "set_1": field "greeting" is set more than once; the last value is kept'), record.warnings.join('\n'));
  assert.ok(
    record.warnings.some((w) => w.startsWith('node "set_1": {{trigger.customer.nmae}} is empty')),
    record.warnings.join('\n'),
  );
});

test('the graph schema takes a Set Fields node and refuses a field name that cannot be a variable path step', () => {
  const check = Compile(WorkflowGraph);
  assert.equal(check.Check(graph([{ name: 'order_id', value: '{{trigger.id}}' }])), true);
  assert.equal(check.Check(graph([{ name: 'order.id', value: 'x' }])), false, 'a dot would split the path');
  assert.equal(check.Check(graph([{ name: '', value: 'x' }])), false);
  assert.equal(check.Check({ ...graph([]), nodes: [{ id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'a', value: 'x', extra: 1 }] } }] }), false);
});
