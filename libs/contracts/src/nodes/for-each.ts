import Type from 'typebox';
import { StringEnum } from '../common.ts';
import { defineNode, Templated } from './define.ts';

/** Items one For each takes (the run-wide limit, FOR_EACH limits in the engine, is usually lower). */
export const FOR_EACH_MAX_ITEMS = 10_000;
/** Items run at the same time, at most. */
export const FOR_EACH_MAX_CONCURRENCY = 10;
const CONCURRENCY = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'] as const;

export const forEach = defineNode({
  type: 'for_each',
  action: false,
  label: 'For each',
  description:
    'Runs the steps on its `each` branch once per item of a list (`{{item}}`, `{{index}}` in scope), one at a time or up to 10 at once, then continues on `done` with the results.',
  idPrefix: 'loop',
  icon: 'list-check',
  color: 'grape',
  params: Type.Object(
    {
      items: Templated(2_000),
      concurrency: Type.Optional(StringEnum([...CONCURRENCY])),
    },
    { additionalProperties: false },
  ),
  fields: {
    items: {
      label: 'List',
      template: true,
      placeholder: '{{trigger.order.lines}}',
      description: `Exactly one variable or expression holding a list (at most ${FOR_EACH_MAX_ITEMS.toLocaleString('en')} items; the run's item limit counts every loop).`,
    },
    concurrency: {
      label: 'Items at a time',
      default: '1',
      options: CONCURRENCY.map((value) => ({ value, label: value === '1' ? '1 (one after another, in order)' : `up to ${value} at once` })),
    },
  },
  branches: ['each', 'done'],
  note: "The steps reachable from `each` are the loop body: inside it {{item}} is the current element, {{index}} its position, and {{nodes.<id>}} of a body step is the current item's. After the last item the run continues on `done`.",
  output:
    '`{ results, count }`: per item, in list order, the output of the last body step that ran for it (`null` when none ran); read after the loop as `{{nodes.<id>.results}}`.',
  summary: (p) => (p.items ? `Each of ${p.items}${p.concurrency && p.concurrency !== '1' ? `, ${p.concurrency} at a time` : ''}` : 'Set the list to loop over'),
});

interface GraphLike {
  nodes: readonly { id: string; type: string; params?: unknown }[];
  edges: readonly { from: string; to: string; branch?: string }[];
}

/** One For each's loop body: the nodes reachable from its `each` edges. */
export interface LoopBody {
  /** The For each node's id. */
  loopId: string;
  nodes: Set<string>;
}

/**
 * The loop bodies of a graph, or the first problem with them: a body is what the For each's `each`
 * edges reach; no edge may enter it from outside (except `each`: what follows the loop hangs off
 * `done`, not off a body step), and a body holds no other For each and no step that parks the run (a Wait,
 * a Run workflow that waits: items run together, one cannot park the run; not supported yet). Shared by the engine
 * (planGraph) and workspace-api (validation on save).
 */
export function loopBodies(graph: GraphLike): { bodies: LoopBody[]; problem: string | null } {
  const bodies: LoopBody[] = [];
  const types = new Map(graph.nodes.map((n) => [n.id, n.type]));
  const next = new Map<string, string[]>();
  for (const e of graph.edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  for (const n of graph.nodes) {
    if (n.type !== 'for_each') continue;
    const body = new Set<string>();
    const stack = graph.edges.filter((e) => e.from === n.id && e.branch === 'each').map((e) => e.to);
    while (stack.length) {
      const id = stack.pop()!;
      if (body.has(id) || id === n.id) continue;
      body.add(id);
      stack.push(...(next.get(id) ?? []));
    }
    bodies.push({ loopId: n.id, nodes: body });
  }
  const waits = new Set(graph.nodes.filter(parks).map((n) => n.id));
  for (const { loopId, nodes } of bodies) {
    for (const id of nodes) {
      if (types.get(id) === 'for_each') return { bodies, problem: `node "${id}" is a For each inside the loop of "${loopId}"; loops do not nest yet` };
      if (waits.has(id))
        return {
          bodies,
          problem: `node "${id}" waits (${types.get(id) === 'wait' ? 'a Wait' : 'a Run workflow that waits for its result'}) inside the loop of "${loopId}": a step that parks the run cannot run per item yet; wait before or after the loop${types.get(id) === 'wait' ? '' : ', or set it not to wait'}`,
        };
    }
    // Everything a body step leads to is in the body, so the one way to break it is an edge into it from outside.
    for (const e of graph.edges)
      if (nodes.has(e.to) && !nodes.has(e.from) && !(e.from === loopId && e.branch === 'each'))
        return {
          bodies,
          problem: `node "${e.to}" is in the loop of "${loopId}" (reached from its "each" branch) and also reached from outside it (edge ${e.from} -> ${e.to}): a loop step leads only to loop steps, and what follows the loop hangs off "done"`,
        };
  }
  return { bodies, problem: null };
}

/** A node that parks its run (a Wait; a Run workflow that waits for its result, the default). */
function parks(n: GraphLike['nodes'][number]): boolean {
  if (n.type === 'wait') return true;
  return n.type === 'run_workflow' && (n.params as { wait?: unknown } | undefined)?.wait !== false;
}
