// A disabled step (WorkflowNode.disabled; docs/workflow-engine.md, "Disabled steps"): not executed,
// its input passed on as its output by its pass-through branch, the steps after it run with that input.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WorkflowGraph } from '@flowdesk/contracts';
import { fixedEvent, runInMemory, type Received } from './support.ts';
import type { HttpClient } from '../src/domain/ports.ts';

const event = fixedEvent('evt-disabled', { order: { id: 'o-7', amount: 5 } });

/** An HTTP client that records each request and answers 500: a step that sent one fails the run. */
function failingHttp(): { http: HttpClient; sent: Received[] } {
  const sent: Received[] = [];
  return {
    sent,
    http: {
      send: async (req: { method: string; url: string }) => {
        sent.push({ method: req.method, url: req.url, headers: {}, body: '' });
        throw new Error('the server answered 500');
      },
    },
  };
}

test('a disabled HTTP Request is not sent; the step after it runs with its input (the trigger’s payload) as the disabled step’s output', async () => {
  const { http, sent } = failingHttp();
  const graph: WorkflowGraph = {
    nodes: [
      {
        id: 'notify',
        type: 'http_request',
        disabled: true,
        params: { method: 'POST', url: 'https://hooks.example.com/x', body: { id: '{{trigger.order.id}}' } },
      },
      { id: 'task_1', type: 'create_task', params: { title: 'Order {{nodes.notify.order.id}}', notes: 'amount {{trigger.order.amount}}' } },
    ],
    edges: [
      { from: 'trigger', to: 'notify' },
      { from: 'notify', to: 'task_1' },
    ],
  };
  const { record, tasks } = await runInMemory(graph, event, http);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.equal(sent.length, 0, 'the disabled request was never sent');
  const step = record.steps.find((s) => s.nodeId === 'notify')!;
  assert.equal(step.status, 'skipped');
  assert.equal(step.disabled, true);
  assert.deepEqual(step.output, { order: { id: 'o-7', amount: 5 } }, 'its output is its input');
  assert.deepEqual(tasks, [{ title: 'Order o-7', notes: 'amount 5' }], 'the step after it ran, reading the passed-on input');

  // The same graph enabled sends the request and fails: the flag is what skipped it.
  const enabled = { ...graph, nodes: graph.nodes.map((n) => ({ ...n, disabled: false })) } as WorkflowGraph;
  const again = await runInMemory(enabled, event, http);
  assert.equal(again.record.status, 'failed');
  assert.equal(sent.length, 1);
});

test('a disabled step passes on the output of the step before it; a disabled Condition takes its true branch', async () => {
  const graph: WorkflowGraph = {
    nodes: [
      { id: 'shape', type: 'set_fields', params: { fields: [{ name: 'label', value: 'big {{trigger.order.id}}' }] } },
      { id: 'old', type: 'set_fields', disabled: true, params: { fields: [{ name: 'label', value: 'never' }] } },
      {
        id: 'check',
        type: 'condition',
        disabled: true,
        params: { rules: [{ left: '{{trigger.order.amount}}', operator: 'greater_than', right: '100' }], combinator: 'and' },
      },
      { id: 'yes', type: 'create_task', params: { title: 'yes {{nodes.old.label}} / {{nodes.check.label}}' } },
      { id: 'no', type: 'create_task', params: { title: 'no' } },
    ],
    edges: [
      { from: 'trigger', to: 'shape' },
      { from: 'shape', to: 'old' },
      { from: 'old', to: 'check' },
      { from: 'check', to: 'yes', branch: 'true' },
      { from: 'check', to: 'no', branch: 'false' },
    ],
  };
  const { record, tasks } = await runInMemory(graph, event);
  assert.equal(record.status, 'succeeded', record.error ?? '');
  assert.deepEqual(
    tasks.map((t) => t.title),
    ['yes big o-7 / big o-7'],
    'the disabled Set Fields passed Set’s output on; the disabled Condition (false if it ran) took true',
  );
  assert.deepEqual(
    record.steps.map((s) => [s.nodeId, s.status, s.disabled ?? false]),
    [
      ['shape', 'succeeded', false],
      ['old', 'skipped', true],
      ['check', 'skipped', true],
      ['yes', 'succeeded', false],
      ['no', 'skipped', false],
    ],
  );
});

test('a disabled For each skips its loop and goes on by done; a disabled step in a loop body passes each item on', async () => {
  const items = fixedEvent('evt-disabled-loop', { lines: ['a', 'b'] });
  const loopGraph = (loopDisabled: boolean): WorkflowGraph => ({
    nodes: [
      { id: 'loop_1', type: 'for_each', ...(loopDisabled ? { disabled: true } : {}), params: { items: '{{trigger.lines}}' } },
      { id: 'tidy', type: 'set_fields', disabled: true, params: { fields: [{ name: 'x', value: 'never' }] } },
      { id: 'task_1', type: 'create_task', params: { title: 'line {{nodes.tidy}}' } },
      { id: 'after', type: 'create_task', params: { title: 'after {{nodes.loop_1.count}}{{nodes.loop_1.lines.0}}' } },
    ],
    edges: [
      { from: 'trigger', to: 'loop_1' },
      { from: 'loop_1', to: 'tidy', branch: 'each' },
      { from: 'tidy', to: 'task_1' },
      { from: 'loop_1', to: 'after', branch: 'done' },
    ],
  });
  const looped = await runInMemory(loopGraph(false), items);
  assert.equal(looped.record.status, 'succeeded', looped.record.error ?? '');
  assert.deepEqual(
    looped.tasks.map((t) => t.title),
    ['line a', 'line b', 'after 2'],
  );
  const skipped = await runInMemory(loopGraph(true), items);
  assert.equal(skipped.record.status, 'succeeded', skipped.record.error ?? '');
  assert.deepEqual(
    skipped.tasks.map((t) => t.title),
    ['after a'],
    'no item ran; the step after done read the disabled For each’s input (the trigger’s payload)',
  );
});
