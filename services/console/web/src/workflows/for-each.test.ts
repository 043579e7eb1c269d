import { describe, expect, test } from 'vitest';
import { Compile } from 'typebox/compile';
import { WorkflowGraph } from '@flowdesk/contracts';
import { emptyForm, enclosingLoop, fieldsOf, toApiGraph, toCanvas, type ApiGraph } from './graph.ts';
import { loopItemSample } from './templates.ts';

const graph: ApiGraph = {
  nodes: [
    { id: 'loop_1', type: 'for_each', params: { items: '{{trigger.order.lines}}', concurrency: '3' } },
    { id: 'set_1', type: 'set_fields', params: { fields: [{ name: 'sku', value: '{{item.sku}}' }] } },
    { id: 'agg_1', type: 'aggregate', params: { items: '{{nodes.loop_1.results}}', field: 'sku', into: 'text', separator: ' | ' } },
  ],
  edges: [
    { from: 'trigger', to: 'loop_1' },
    { from: 'loop_1', to: 'set_1', branch: 'each' },
    { from: 'loop_1', to: 'agg_1', branch: 'done' },
  ],
};

describe('For each and Aggregate forms (generated from the registry)', () => {
  test('the For each form has the list (a template) and the items-at-a-time select, 1 by default', () => {
    const fields = fieldsOf('for_each');
    expect(fields.map((f) => [f.key, f.widget, f.required])).toEqual([
      ['items', 'text', true],
      ['concurrency', 'select', false],
    ]);
    expect(fields[0]!.hint.template).toBe(true);
    expect(fields[1]!.options!.map((o) => o.value)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(emptyForm('for_each').form).toEqual({ items: '', concurrency: '1' });
  });

  test('the Aggregate form hides the separator unless the result is a text, and drops it when hidden', () => {
    const fields = fieldsOf('aggregate');
    expect(fields.map((f) => f.key)).toEqual(['items', 'field', 'into', 'separator']);
    const sep = fields.find((f) => f.key === 'separator')!;
    expect(sep.hint.hiddenWhen?.({ into: 'list' })).toBe(true);
    expect(sep.hint.hiddenWhen?.({ into: 'text' })).toBe(false);
  });

  test('a loop graph goes to the canvas and back unchanged, with its each/done branches, and passes the graph schema', () => {
    const { nodes, edges } = toCanvas(graph, 'webhook');
    const back = toApiGraph(nodes, edges).graph;
    expect(back.edges).toEqual(graph.edges);
    expect(back.nodes.map((n) => [n.id, n.params])).toEqual(graph.nodes.map((n) => [n.id, n.params]));
    expect(Compile(WorkflowGraph).Check(back)).toBe(true);
  });

  test('the picker knows which loop a step is in, and shows the first element of the sample list as {{item}}', () => {
    const { nodes, edges } = toCanvas(graph, 'webhook');
    expect(enclosingLoop('set_1', nodes, edges)).toBe('loop_1');
    expect(enclosingLoop('agg_1', nodes, edges)).toBeNull();
    expect(enclosingLoop('loop_1', nodes, edges)).toBeNull();
    const scope = { trigger: { order: { lines: [{ sku: 'A-1', qty: 2 }, { sku: 'B-2' }] } }, nodes: {} };
    expect(loopItemSample('{{trigger.order.lines}}', scope)).toEqual({ sku: 'A-1', qty: 2 });
    expect(loopItemSample('{{trigger.order}}', scope)).toBeNull();
    expect(loopItemSample('{{= trigger.order.lines }}', scope)).toBeNull();
  });
});
