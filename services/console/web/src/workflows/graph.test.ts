import { describe, expect, test } from 'vitest';
import {
  branchesAfterRemoving,
  branchesOfStep,
  emptyForm,
  fieldsOf,
  nextId,
  nodeOfError,
  remapBranchEdges,
  retrySummary,
  savedRetry,
  toApiGraph,
  toParams,
  toCanvas,
  upstreamOf,
  type ApiGraph,
  type FormRecord,
} from './graph.ts';

const spec: ApiGraph = {
  nodes: [
    {
      id: 'condition_1',
      type: 'condition',
      position: { x: 300, y: 0 },
      params: { rules: [{ left: '{{trigger.customer.name}}', operator: 'exists' }], combinator: 'and' },
    },
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
    (cond.data.form.rules as FormRecord[])[0]!.right = 'ignored';
    edges.push({ id: 'x', source: 'http_1', target: 'task_1', sourceHandle: 'true' });
    const { graph } = toApiGraph(nodes, edges);
    expect(graph.nodes[0]!.params).toEqual({ rules: [{ left: '{{trigger.customer.name}}', operator: 'exists' }], combinator: 'and' });
    expect(graph.edges.at(-1)).toEqual({ from: 'http_1', to: 'task_1' });
  });
  test('a condition saved in the older one-comparison shape opens as one rule and saves as rules', () => {
    const old: ApiGraph = {
      nodes: [{ id: 'c', type: 'condition', position: { x: 1, y: 2 }, params: { left: '{{trigger.total}}', operator: 'greater_than', right: '10' } }],
      edges: [{ from: 'trigger', to: 'c' }],
    };
    const { nodes, edges } = toCanvas(old, 'webhook');
    const c = nodes.find((n) => n.id === 'c')!;
    expect(c.data.kind === 'condition' && c.data.form.rules).toEqual([{ left: '{{trigger.total}}', operator: 'greater_than', right: '10' }]);
    expect(toApiGraph(nodes, edges).graph.nodes[0]!.params).toEqual({
      rules: [{ left: '{{trigger.total}}', operator: 'greater_than', right: '10' }],
      combinator: 'and',
    });
  });
});

describe('switch rules as rows', () => {
  const sw: ApiGraph = {
    nodes: [
      {
        id: 's',
        type: 'switch',
        params: {
          value: '{{trigger.status}}',
          rules: [{ operator: 'equals', right: 'paid' }, { operator: 'equals', right: 'refunded' }, { operator: 'exists' }],
        },
      },
      ...['a', 'b', 'c', 'd'].map((id) => ({ id, type: 'stop' as const, params: { status: 'succeeded' as const } })),
    ],
    edges: [
      { from: 'trigger', to: 's' },
      { from: 's', to: 'a', branch: '1' },
      { from: 's', to: 'b', branch: '2' },
      { from: 's', to: 'c', branch: '3' },
      { from: 's', to: 'd', branch: 'default' },
    ],
  };
  test('the handles follow the rows: one per rule, then default', () => {
    const { nodes } = toCanvas(sw, 'webhook');
    const s = nodes.find((n) => n.id === 's')!;
    if (s.data.kind !== 'switch') throw new Error('kind');
    expect(branchesOfStep(s.data)).toEqual(['1', '2', '3', 'default']);
  });
  test("removing rule 2 drops its edge and moves rule 3's edge to handle 2; default keeps its own", () => {
    const { nodes, edges } = toCanvas(sw, 'webhook');
    const rules = fieldsOf('switch').find((f) => f.key === 'rules')!;
    const moves = branchesAfterRemoving(rules, 3, 1);
    const s = nodes.find((n) => n.id === 's')!;
    if (s.data.kind !== 'switch') throw new Error('kind');
    s.data.form.rules = (s.data.form.rules as FormRecord[]).filter((_, i) => i !== 1);
    const { graph, problems } = toApiGraph(nodes, remapBranchEdges(edges, 's', moves));
    expect(problems).toEqual({});
    expect(graph.nodes[0]!.params).toEqual({ value: '{{trigger.status}}', rules: [{ operator: 'equals', right: 'paid' }, { operator: 'exists' }] });
    expect(graph.edges.filter((e) => e.from === 's')).toEqual([
      { from: 's', to: 'a', branch: '1' },
      { from: 's', to: 'c', branch: '2' },
      { from: 's', to: 'd', branch: 'default' },
    ]);
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

describe('switches and multi-line text from the registry hints', () => {
  test('a boolean is a switch: untouched it saves nothing (the default holds), toggled it saves true or false', () => {
    const data = emptyForm('run_workflow');
    expect(data.form.wait).toBeUndefined();
    expect(toParams(data).params).not.toHaveProperty('wait');
    expect(toParams({ ...data, form: { ...data.form, wait: false } }).params.wait).toBe(false);
    expect(toParams({ ...data, form: { ...data.form, wait: true } }).params.wait).toBe(true);
  });
  test("an Aggregate's separator keeps its line breaks", () => {
    const data = emptyForm('aggregate');
    const form = { ...data.form, items: '{{trigger.lines}}', into: 'text', separator: '\n- ' };
    expect(toParams({ ...data, form }).params).toEqual({ items: '{{trigger.lines}}', into: 'text', separator: '\n- ' });
  });
  test('a new Condition and a new Switch start with one rule row, selects at their defaults', () => {
    expect(emptyForm('condition').form).toEqual({ rules: [{ left: '', operator: 'exists', right: '' }], combinator: 'and' });
    expect(emptyForm('switch').form).toEqual({ value: '', rules: [{ operator: 'equals', right: '' }] });
  });
});
