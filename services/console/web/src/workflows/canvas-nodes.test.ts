import { describe, expect, it } from 'vitest';
import { TRIGGER_TYPE_NAMES } from '@flowdesk/contracts';
import { TRIGGER_ICON } from './canvas-nodes.tsx';

describe('the canvas’s trigger icons', () => {
  it('one per trigger type of the registry, and no other', () => {
    expect(Object.keys(TRIGGER_ICON).sort()).toEqual([...TRIGGER_TYPE_NAMES].sort());
    for (const t of TRIGGER_TYPE_NAMES) expect(TRIGGER_ICON[t], t).toBeTruthy();
  });
});
