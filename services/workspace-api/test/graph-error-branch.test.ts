// The error path of a node (onError "branch", libs/contracts nodes/define.ts): which edges a saved
// graph may have. Pure: validateGraph is what POST/PATCH /workflows call before saving.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WorkflowGraph } from '@flowdesk/contracts';
import { validateGraph } from '../src/domain/graph.ts';

const graph = (onError?: 'fail' | 'continue' | 'branch', from = 'call'): WorkflowGraph => ({
  nodes: [
    { id: 'call', type: 'http_request', ...(onError ? { onError } : {}), params: { method: 'POST', url: 'https://example.com' } },
    { id: 'check', type: 'condition', ...(onError ? { onError } : {}), params: { left: 'a', operator: 'equals', right: 'a' } },
    { id: 'fallback', type: 'create_task', params: { title: 'x' } },
  ],
  edges: [
    { from: 'trigger', to: 'call' },
    { from: 'call', to: 'check' },
    { from, to: 'fallback', branch: 'error' },
  ],
});

test('an error edge leaves a node whose onError is "branch", next to its usual edges (a condition keeps its true/false)', () => {
  assert.doesNotThrow(() => validateGraph(graph('branch')));
  const g = graph('branch', 'check');
  g.edges.push({ from: 'check', to: 'fallback', branch: 'true' });
  assert.doesNotThrow(() => validateGraph(g));
});

test('an error edge from a node without onError "branch" (or from the trigger) is refused with a message naming it', () => {
  for (const onError of [undefined, 'fail', 'continue'] as const) {
    assert.throws(() => validateGraph(graph(onError)), /body\.graph edge call -> fallback is an error branch but call does not have onError "branch"/);
  }
  assert.throws(() => validateGraph(graph('branch', 'trigger')), /edge trigger -> fallback is an error branch/);
});

test('a Wait inside a For each body is refused on save with the loop problem (a waiting step cannot run per item)', () => {
  const loop: WorkflowGraph = {
    nodes: [
      { id: 'loop_1', type: 'for_each', params: { items: '{{trigger.lines}}' } },
      { id: 'wait_1', type: 'wait', params: { mode: 'duration', durationMs: 60_000 } } as never,
    ],
    edges: [
      { from: 'trigger', to: 'loop_1' },
      { from: 'loop_1', to: 'wait_1', branch: 'each' },
    ],
  };
  assert.throws(() => validateGraph(loop), /node "wait_1" waits \(a Wait\) inside the loop of "loop_1"/);
  loop.edges[1] = { from: 'loop_1', to: 'wait_1', branch: 'done' };
  assert.doesNotThrow(() => validateGraph(loop));
});
