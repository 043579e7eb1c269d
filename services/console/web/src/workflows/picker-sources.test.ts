import { describe, expect, test } from 'vitest';
import type { RunStep, WorkflowRun } from '@flowdesk/contracts';
import { toCanvas, type ApiGraph } from './graph.ts';
import { knownOutputs, NOT_RUN_YET, outputsScope, pickerSources, stepScope } from './picker-sources.ts';
import { preview, previewWithExpressions } from './templates.ts';

// trigger → http_1 → loop_1 (each: set_1 → task_1; done: agg_1); condition_1 hangs off http_1 on its own.
const graph: ApiGraph = {
  nodes: [
    { id: 'http_1', type: 'http_request', name: 'Read the order', params: { method: 'GET', url: 'https://api.example.com/o' } },
    { id: 'loop_1', type: 'for_each', params: { items: '{{nodes.http_1.body.lines}}' } },
    { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'sku', value: '{{item.sku}}' }] } },
    { id: 'task_1', type: 'create_task', params: { title: 'Pick {{item.sku}}' } },
    { id: 'agg_1', type: 'aggregate', params: { items: '{{nodes.loop_1.results}}', into: 'list' } },
    { id: 'condition_1', type: 'condition', params: { left: '{{nodes.http_1.status}}', operator: 'equals', right: '200' } },
  ],
  edges: [
    { from: 'trigger', to: 'http_1' },
    { from: 'http_1', to: 'loop_1' },
    { from: 'loop_1', to: 'set_1', branch: 'each' },
    { from: 'set_1', to: 'task_1' },
    { from: 'loop_1', to: 'agg_1', branch: 'done' },
    { from: 'http_1', to: 'condition_1' },
  ],
};

const step = (nodeId: string, output: unknown, more: Partial<RunStep> = {}): RunStep => ({
  nodeId,
  type: 'x',
  status: 'succeeded',
  input: {},
  output,
  error: null,
  startedAt: '2026-01-05T08:00:00.000Z',
  durationMs: 1,
  ...more,
});
const runOf = (id: string, steps: RunStep[]) => ({ id, steps }) as unknown as WorkflowRun;

const order = { status: 200, body: { id: 'A-1', lines: [{ sku: 'MUG-1', qty: 2 }, { sku: 'CAP-1' }] } };
// Newest first: the newest run stopped after http_1 (a different body); the older one ran the loop.
const runs = [
  runOf('new', [step('http_1', { status: 200, body: { id: 'A-2', lines: [{ sku: 'TEE-M', qty: 1 }] } }), step('loop_1', null, { status: 'failed' })]),
  runOf('old', [
    step('http_1', order),
    step('set_1', { sku: 'CAP-1' }, { item: 1 }),
    step('set_1', { sku: 'MUG-1' }, { item: 0 }),
    step('task_1', { id: 't1' }, { item: 0 }),
    step('loop_1', { results: [{ id: 't1' }], count: 1 }),
    step('agg_1', { items: [], count: 0, missing: 0 }),
    step('condition_1', { result: true }, { status: 'skipped' }),
  ]),
];

describe('the variable picker: earlier nodes and the loop item', () => {
  const { nodes, edges } = toCanvas(graph, 'webhook');

  test('each node’s output comes from the newest run that executed it; a loop body step from its first item; skipped steps give nothing', () => {
    const known = knownOutputs(runs);
    expect(known.get('http_1')).toEqual({ output: runs[0]!.steps[0]!.output, from: 'last run' });
    expect(known.get('loop_1')?.output).toEqual({ results: [{ id: 't1' }], count: 1 });
    expect(known.get('set_1')?.output).toEqual({ sku: 'MUG-1' });
    expect(known.has('condition_1')).toBe(false);
    // Run this step's output is newer than any run.
    expect(knownOutputs(runs, { http_1: order }).get('http_1')).toEqual({ output: order, from: 'Run this step' });
  });

  test('a step lists only the nodes before it (not later nodes, not other branches), with their fields or a hint to run them', () => {
    const known = knownOutputs(runs);
    const scope = { trigger: {}, nodes: outputsScope(known) };
    const after = pickerSources('agg_1', nodes, edges, scope, known);
    expect(after.map((s) => [s.root, s.note])).toEqual([
      ['nodes.http_1', 'last run'],
      ['nodes.loop_1', 'last run'],
    ]);
    expect(pickerSources('http_1', nodes, edges, scope, known)).toEqual([]);
    expect(pickerSources('trigger', nodes, edges, scope, known)).toEqual([]);
    // Never run: the node is listed with the hint instead of fields.
    const none = pickerSources('condition_1', nodes, edges, { trigger: {}, nodes: {} }, new Map());
    expect(none).toEqual([{ root: 'nodes.http_1', title: 'Read the order (http_1)', value: null, note: 'not run yet', empty: NOT_RUN_YET }]);
  });

  test('inside the loop body: item (the first element of the list, from the last run) and index, the earlier body steps, not the For each itself', () => {
    const known = knownOutputs(runs);
    const scope = { trigger: {}, nodes: outputsScope(known) };
    const sources = pickerSources('task_1', nodes, edges, scope, known);
    expect(sources.map((s) => s.root)).toEqual(['', 'nodes.http_1', 'nodes.set_1']);
    expect(sources[0]).toMatchObject({ value: { item: { sku: 'TEE-M', qty: 1 }, index: 0 }, note: 'first item of the list' });
    // No list known yet: item has no fields, and says so.
    expect(pickerSources('set_1', nodes, edges, { trigger: {}, nodes: {} }, new Map())[0]).toMatchObject({
      value: { item: {}, index: 0 },
      note: 'no sample item',
    });
  });

  test('previews inside the loop body resolve item and index; outside it they stay missing', async () => {
    const known = knownOutputs(runs);
    const base = { trigger: {}, nodes: outputsScope(known) };
    const inBody = stepScope('task_1', nodes, edges, base);
    expect(preview('Pick {{item.sku}} × {{item.qty}} (line {{index}}) of {{nodes.http_1.body.id}}', inBody)).toEqual({
      text: 'Pick TEE-M × 1 (line 0) of A-2',
      missing: [],
    });
    expect((await previewWithExpressions('{{= item.qty * 3 }}/{{= index + 1 }}', inBody)).text).toBe('3/1');
    const outside = stepScope('agg_1', nodes, edges, base);
    expect(outside).toBe(base);
    expect(preview('{{item.sku}}{{index}}', outside).missing).toEqual(['item.sku', 'index']);
  });
});
