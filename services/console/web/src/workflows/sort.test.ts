import { describe, expect, it } from 'vitest';
import { sortWorkflows } from './sort.ts';

const w = (name: string, createdAt: string, updatedAt: string) => ({ name, createdAt, updatedAt });
const items = [
  w('beta 10', '2026-12-01T10:00:00.000Z', '2026-12-01T10:00:00.000Z'),
  w('Alpha', '2026-12-02T10:00:00.000Z', '2026-12-02T10:00:00.000Z'),
  w('beta 9', '2026-11-30T10:00:00.000Z', '2026-12-03T10:00:00.000Z'),
  w('Émile', '2026-11-29T10:00:00.000Z', '2026-11-29T10:00:00.000Z'),
];

describe('sortWorkflows', () => {
  it('newest created first, last updated first, or by name ignoring case and accents with numbers in order', () => {
    expect(sortWorkflows(items, 'created').map((x) => x.name)).toEqual(['Alpha', 'beta 10', 'beta 9', 'Émile']);
    expect(sortWorkflows(items, 'updated').map((x) => x.name)).toEqual(['beta 9', 'Alpha', 'beta 10', 'Émile']);
    expect(sortWorkflows(items, 'name').map((x) => x.name)).toEqual(['Alpha', 'beta 9', 'beta 10', 'Émile']);
  });

  it('leaves the list it was given alone', () => {
    const copy = [...items];
    sortWorkflows(items, 'name');
    expect(items).toEqual(copy);
  });
});
