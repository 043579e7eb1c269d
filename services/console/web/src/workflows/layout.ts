import dagre from '@dagrejs/dagre';

/**
 * The canvas laid out left to right by dagre (@dagrejs/dagre; docs/console.md, "Layout", says why
 * dagre and not elkjs): each step in the column after the steps it follows, branches fanned out
 * below each other, edges leaving on the right and entering on the left as the handles sit.
 */

export interface LayoutNode {
  id: string;
  position: { x: number; y: number };
  measured?: { width?: number; height?: number };
}
export interface LayoutEdge {
  source: string;
  target: string;
  sourceHandle?: string | null;
}

/** A card's size before React Flow has measured it (styles.css .fd-node: 200–240 px wide). */
export const NODE_SIZE = { width: 240, height: 90 };
const GAP = { column: 90, row: 40 };

/** New positions for every node (top-left corners, as React Flow keeps them). */
export function layout(
  nodes: readonly LayoutNode[],
  edges: readonly LayoutEdge[],
  branchOrder: (e: LayoutEdge) => number = () => 0,
): Map<string, { x: number; y: number }> {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: GAP.row, ranksep: GAP.column, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  const size = new Map<string, { width: number; height: number }>();
  for (const n of nodes) {
    const s = { width: n.measured?.width || NODE_SIZE.width, height: n.measured?.height || NODE_SIZE.height };
    size.set(n.id, s);
    g.setNode(n.id, s);
  }
  const ids = new Set(nodes.map((n) => n.id));
  // A node's outputs in the order of its handles (true above false, 1 above 2): dagre keeps the
  // order edges are added in when nothing else decides.
  const sorted = [...edges].filter((e) => ids.has(e.source) && ids.has(e.target)).sort((a, b) => branchOrder(a) - branchOrder(b));
  sorted.forEach((e, i) => g.setEdge(e.source, e.target, {}, `e${i}`));
  dagre.layout(g);
  const out = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const p = g.node(n.id) as { x: number; y: number };
    const s = size.get(n.id)!;
    out.set(n.id, { x: Math.round(p.x - s.width / 2), y: Math.round(p.y - s.height / 2) });
  }
  return out;
}

/** True when two cards would overlap (with a margin), so one could not be clicked. */
const overlaps = (a: { x: number; y: number }, b: { x: number; y: number }) =>
  Math.abs(a.x - b.x) < NODE_SIZE.width + 20 && Math.abs(a.y - b.y) < NODE_SIZE.height + 20;

/** The first free spot from `wanted` downwards: a new step never lands on another. */
export function freeSpot(wanted: { x: number; y: number }, nodes: readonly LayoutNode[]): { x: number; y: number } {
  const spot = { ...wanted };
  for (let i = 0; i < 200 && nodes.some((n) => overlaps(n.position, spot)); i++) spot.y += NODE_SIZE.height + GAP.row;
  return spot;
}
