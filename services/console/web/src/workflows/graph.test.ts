import { describe, expect, test } from 'vitest';
import { nextId, nodeOfError, retrySummary, savedRetry, toApiGraph, toCanvas, upstreamOf, type ApiGraph } from './graph.ts';

const spec: ApiGraph = {
  nodes: [
    { id: 'condition_1', type: 'condition', position: { x: 300, y: 0 }, params: { left: '{{trigger.customer.name}}', operator: 'exists' } },
    {
      id: 'http_1',
      type: 'http_request',
      name: 'Notify CRM',
      position: { x: 600, y: 0 },
      params: { method: 'POST', url: 'http://127.0.0.1/x', headers: { 'x-a': '{{trigger.a}}' }, body: { name: '{{trigger.customer.name}}' } },
    },
    { id: 'task_1', type: 'create_task', position: { x: 900, y: 0 }, params: { title: 'Call {{trigger.customer.name}}', projectId: 'p1' } },
  ],
  edges: [
    { from: 'trigger', to: 'condition_1' },
    { from: 'condition_1', to: 'http_1', branch: 'true' },
    { from: 'http_1', to: 'task_1' },
  ],
  triggerPosition: { x: 0, y: 0 },
};

describe('graph ↔ canvas', () => {
  test('a graph survives the round trip through the canvas unchanged', () => {
    const { nodes, edges } = toCanvas(spec, 'webhook');
    expect(nodes[0]).toMatchObject({ id: 'trigger', type: 'trigger' });
    expect(edges.find((e) => e.source === 'condition_1')).toMatchObject({ sourceHandle: 'true' });
    const back = toApiGraph(nodes, edges);
    expect(back.problems).toEqual({});
    expect(back.graph).toEqual(spec);
  });
  test('nodes without a position are laid out by distance from the trigger', () => {
    const { nodes } = toCanvas({ ...spec, nodes: spec.nodes.map(({ position: _p, ...n }) => n) }, 'webhook');
    expect(nodes.map((n) => n.position.x)).toEqual([0, 300, 600, 900]);
  });
  test('a body that is not JSON and a header without a name are problems on that node', () => {
    const { nodes, edges } = toCanvas(spec, 'webhook');
    const http = nodes.find((n) => n.id === 'http_1')!;
    if (http.data.kind !== 'http_request') throw new Error('kind');
    http.data = { ...http.data, form: { ...http.data.form, body: '{name:', headers: [{ name: '', value: 'x' }] } };
    expect(Object.keys(toApiGraph(nodes, edges).problems)).toEqual(['http_1']);
  });
  test('empty optional fields are left out; a condition with exists sends no right operand; branch only from a condition', () => {
    const { nodes, edges } = toCanvas(spec, 'webhook');
    const cond = nodes.find((n) => n.id === 'condition_1')!;
    if (cond.data.kind !== 'condition') throw new Error('kind');
    cond.data.form.right = 'ignored';
    edges.push({ id: 'x', source: 'http_1', target: 'task_1', sourceHandle: 'true' });
    const { graph } = toApiGraph(nodes, edges);
    expect(graph.nodes[0]!.params).toEqual({ left: '{{trigger.customer.name}}', operator: 'exists' });
    expect(graph.edges.at(-1)).toEqual({ from: 'http_1', to: 'task_1' });
  });
});

describe('nodeOfError', () => {
  test('a schema error path names the node by its index in the graph sent', () => {
    expect(nodeOfError('body.graph.nodes.1.params.url must NOT have more than 2000 characters', spec)).toBe('http_1');
  });
  test('the graph check names the node', () => {
    expect(nodeOfError('body.graph node "task_1" is not reachable from the trigger', spec)).toBe('task_1');
    expect(nodeOfError('body.graph has two nodes with id "http_1"', spec)).toBe('http_1');
    expect(nodeOfError('body.graph edge condition_1 -> http_1 leaves a condition without branch "true" or "false"', spec)).toBe('condition_1');
  });
  test('an error about something else names no node', () => {
    expect(nodeOfError('body.name must NOT have fewer than 1 characters', spec)).toBeNull();
  });
});

test('nextId skips ids in use; upstreamOf finds every ancestor', () => {
  expect(nextId('http_request', ['http_1', 'http_3'])).toBe('http_2');
  expect(
    upstreamOf(
      'task_1',
      spec.edges.map((e) => ({ source: e.from, target: e.to })),
    ).sort(),
  ).toEqual(['condition_1', 'http_1', 'trigger']);
});

describe('on error', () => {
  const graph: ApiGraph = {
    nodes: [
      { id: 'http_1', type: 'http_request', onError: 'branch', position: { x: 300, y: 0 }, params: { method: 'POST', url: 'https://example.com' } },
      { id: 'task_1', type: 'create_task', onError: 'continue', position: { x: 600, y: 0 }, params: { title: 'ok' } },
      { id: 'task_2', type: 'create_task', position: { x: 600, y: 150 }, params: { title: 'fallback' } },
    ],
    edges: [
      { from: 'trigger', to: 'http_1' },
      { from: 'http_1', to: 'task_1' },
      { from: 'http_1', to: 'task_2', branch: 'error' },
    ],
    triggerPosition: { x: 0, y: 0 },
  };

  test('a step’s on error and its error edges survive the canvas and back', () => {
    const { nodes, edges } = toCanvas(graph, 'webhook');
    expect(edges.find((e) => e.target === 'task_2')?.sourceHandle).toBe('error');
    expect(toApiGraph(nodes, edges).graph).toEqual(graph);
  });

  test('an error edge from a step set back to "fail the run" is saved as a plain edge; "fail" itself is not saved', () => {
    const { nodes, edges } = toCanvas(graph, 'webhook');
    const changed = nodes.map((n) => (n.id === 'http_1' ? { ...n, data: { ...n.data, onError: 'fail' as const } } : n));
    const saved = toApiGraph(changed, edges).graph;
    expect(saved.nodes[0]).not.toHaveProperty('onError');
    expect(saved.edges.find((e) => e.to === 'task_2')).toEqual({ from: 'http_1', to: 'task_2' });
  });
});

describe('retry (the step form’s Retry section, beside On error)', () => {
  const graph: ApiGraph = {
    nodes: [
      {
        id: 'http_1',
        type: 'http_request',
        onError: 'continue',
        retry: { attempts: 3, backoff: 'fixed', delayMs: 2000, on: ['5xx', '429'] },
        position: { x: 300, y: 0 },
        params: { method: 'GET', url: 'https://example.com' },
      },
      { id: 'task_1', type: 'create_task', position: { x: 600, y: 0 }, params: { title: 'ok' } },
    ],
    edges: [
      { from: 'trigger', to: 'http_1' },
      { from: 'http_1', to: 'task_1' },
    ],
    triggerPosition: { x: 0, y: 0 },
  };

  test('a step’s retry policy survives the canvas and back, for any node type', () => {
    const { nodes, edges } = toCanvas(graph, 'webhook');
    expect(nodes.find((n) => n.id === 'http_1')?.data).toMatchObject({ retry: graph.nodes[0]!.retry });
    expect(toApiGraph(nodes, edges).graph).toEqual(graph);
    const withTaskRetry = nodes.map((n) => (n.id === 'task_1' ? { ...n, data: { ...n.data, retry: { attempts: 2 } } } : n));
    expect(toApiGraph(withTaskRetry, edges).graph.nodes[1]).toMatchObject({ retry: { attempts: 2 } });
  });

  test('one attempt saves no policy; numbers are kept within the schema’s limits; failure kinds once, in order', () => {
    const { nodes, edges } = toCanvas(graph, 'webhook');
    const one = nodes.map((n) => (n.id === 'http_1' ? { ...n, data: { ...n.data, retry: { attempts: 1, delayMs: 5 } } } : n));
    expect(toApiGraph(one, edges).graph.nodes[0]).not.toHaveProperty('retry');
    expect(savedRetry(undefined)).toBeUndefined();
    expect(savedRetry({ attempts: 40, delayMs: -3, maxDelayMs: 99_999_999, on: ['any', '5xx', 'any'] })).toEqual({
      attempts: 10,
      delayMs: 0,
      maxDelayMs: 3_600_000,
      on: ['5xx', 'any'],
    });
  });

  test('the section’s summary line says what the policy does', () => {
    expect(retrySummary(undefined)).toBe('No retry');
    expect(retrySummary({ attempts: 1 })).toBe('No retry');
    expect(retrySummary({ attempts: 3 })).toBe('3 attempts, exponential from 1 s (max 30 s)');
    expect(retrySummary({ attempts: 4, backoff: 'fixed', delayMs: 250 })).toBe('4 attempts, 250 ms apart');
  });
});
