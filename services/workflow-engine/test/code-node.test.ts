import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TriggerEvent, WorkflowGraph } from '@flowdesk/contracts';
import { executeWorkflow } from '../src/domain/executor.ts';
import type { CreateTaskInput, HttpClient } from '../src/domain/ports.ts';
import { fixedClock, silentLog } from './support.ts';

// The sandbox's escapes and limits are tested in code-sandbox.test.ts; this is the node in a workflow.
const event: TriggerEvent = {
  eventId: 'evt-code',
  workflowId: '00000000-0000-4000-8000-000000000001',
  ownerId: '00000000-0000-4000-8000-0000000000aa',
  source: 'webhook',
  receivedAt: '2025-03-01T10:00:00.000Z',
  payload: {
    lines: [
      { sku: 'A', qty: 3, price: 4.5 },
      { sku: 'B', qty: 1, price: 10 },
      { sku: 'C', qty: 2, price: 0.25 },
      { sku: 'D', qty: 4, price: 1 },
    ],
  },
  headers: { 'x-github-event': 'push' },
};
const noHttp: HttpClient = { send: () => Promise.reject(new Error('no HTTP in this test')) };

async function run(code: string) {
  const tasks: CreateTaskInput[] = [];
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
  const record = await executeWorkflow({
    workflow: { id: event.workflowId, ownerId: event.ownerId, graph },
    event,
    ports: { http: noHttp, createTask: async (_o, input) => (tasks.push(input), { id: 't1', ...input }), clock: fixedClock(), log: silentLog },
  });
  return { record, tasks };
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
