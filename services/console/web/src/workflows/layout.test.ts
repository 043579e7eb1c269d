import { describe, expect, test } from 'vitest';
import { freeSpot, layout, NODE_SIZE } from './layout.ts';

const node = (id: string) => ({ id, position: { x: 0, y: 0 } });

describe('layout', () => {
  test('left to right: each step right of the one it follows; two branches in one column, apart', () => {
    const nodes = ['trigger', 'cond', 'yes', 'no', 'end'].map(node);
    const edges = [
      { source: 'trigger', target: 'cond' },
      { source: 'cond', target: 'yes', sourceHandle: 'true' },
      { source: 'cond', target: 'no', sourceHandle: 'false' },
      { source: 'yes', target: 'end' },
    ];
    const at = layout(nodes, edges, (e) => (e.sourceHandle === 'false' ? 1 : 0));
    expect(at.get('cond')!.x).toBeGreaterThan(at.get('trigger')!.x + NODE_SIZE.width);
    expect(at.get('yes')!.x).toBe(at.get('no')!.x);
    expect(Math.abs(at.get('yes')!.y - at.get('no')!.y)).toBeGreaterThanOrEqual(NODE_SIZE.height);
    expect(at.get('end')!.x).toBeGreaterThan(at.get('yes')!.x);
  });

  test('no two cards overlap in a 30-step graph', () => {
    const nodes = Array.from({ length: 31 }, (_, i) => node(`n${i}`));
    const edges = nodes.slice(1).map((n, i) => ({ source: `n${Math.floor(i / 2)}`, target: n.id }));
    const at = [...layout(nodes, edges).values()];
    for (let i = 0; i < at.length; i++)
      for (let j = i + 1; j < at.length; j++)
        expect(Math.abs(at[i]!.x - at[j]!.x) >= NODE_SIZE.width || Math.abs(at[i]!.y - at[j]!.y) >= NODE_SIZE.height).toBe(true);
  });

  test('a new step moves off a step already at its spot', () => {
    const spot = freeSpot({ x: 300, y: 0 }, [
      { id: 'a', position: { x: 300, y: 0 } },
      { id: 'b', position: { x: 310, y: 130 } },
    ]);
    expect(spot.x).toBe(300);
    expect(spot.y).toBeGreaterThanOrEqual(130 + NODE_SIZE.height);
  });
});
