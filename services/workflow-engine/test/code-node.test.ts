import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WorkflowGraph } from '@flowdesk/contracts';
import { fixedEvent, orderLines, runInMemory } from './support.ts';

// The sandbox's escapes and limits are tested in code-sandbox.test.ts; this is the node in a workflow.
const event = fixedEvent('evt-code', { lines: orderLines() }, { 'x-github-event': 'push' });

function run(code: string) {
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'who', value: 'Ann' }] } },
      { id: 'code_1', type: 'code', params: { code } },
      { id: 'task_1', type: 'create_task', params: { title: '{{nodes.code_1.title}}', notes: 'total {{nodes.code_1.total}}' } },
    ],
    edges: [
      { from: 'trigger', to: 'set_1' },
      { from: 'set_1', to: 'code_1' },
      { from: 'code_1', to: 'task_1' },
    ],
  };
  return runInMemory(graph, event);
}

test('Code node: its JavaScript reads the trigger, headers and earlier outputs; later steps read what it returns', async () => {
  const code = `return { title: nodes.set_1.who + ' (' + headers['x-github-event'] + ')', total: trigger.lines.reduce((s, l) => s + l.qty * l.price, 0) };`;
  const { record, tasks } = await run(code);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  const step = record.steps.find((s) => s.nodeId === 'code_1')!;
  assert.deepEqual(step.output, { title: 'Ann (push)', total: 28 });
  assert.deepEqual(step.input, { codeChars: code.length }, 'the step records the code size, not another copy of the data');
  assert.deepEqual(tasks, [{ title: 'Ann (push)', notes: 'total 28' }]);
});

test('Code node: an endless loop fails the node (named) and the run stops there; the engine serves the next run', async () => {
  const { record, tasks } = await run('while (true) {}');
  assert.equal(record.status, 'failed');
  assert.equal(record.error, 'node "code_1" failed: the code ran longer than its limit of 1000 ms and was stopped');
  assert.deepEqual(tasks, []);
  const next = await run('return { title: "next", total: 1 };');
  assert.equal(next.record.status, 'succeeded');
  assert.deepEqual(next.tasks, [{ title: 'next', notes: 'total 1' }]);
});
