/**
 * The benchmarks' shared workflow graphs, so bench:e2e and bench:vs-n8n measure the same work.
 */

/**
 * The richer line (issue 25): For each over 10 items → Set Fields → Switch → Create Task, 10 tasks a
 * run. `concurrency` is the For each's (absent: items one after the other).
 */
export function richGraph(concurrency?: string) {
  return {
    nodes: [
      { id: 'loop', type: 'for_each', params: { items: '{{= [0..9] }}', ...(concurrency === undefined || concurrency === '1' ? {} : { concurrency }) } },
      {
        id: 'set',
        type: 'set_fields',
        params: {
          fields: [
            { name: 'sku', value: 'SKU-{{trigger.n}}-{{item}}' },
            { name: 'lane', value: '{{= index % 3 }}' },
          ],
        },
      },
      {
        id: 'route',
        type: 'switch',
        params: {
          value: '{{nodes.set.lane}}',
          rules: [
            { operator: 'equals', right: '0' },
            { operator: 'equals', right: '1' },
          ],
        },
      },
      { id: 't', type: 'create_task', params: { title: 'order {{trigger.n}} line {{index}} {{nodes.set.sku}} lane {{nodes.route.branch}}' } },
    ],
    edges: [
      { from: 'trigger', to: 'loop' },
      { from: 'loop', to: 'set', branch: 'each' },
      { from: 'set', to: 'route' },
      { from: 'route', to: 't', branch: '1' },
      { from: 'route', to: 't', branch: '2' },
      { from: 'route', to: 't', branch: 'default' },
    ],
  };
}
