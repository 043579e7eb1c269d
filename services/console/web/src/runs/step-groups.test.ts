import { describe, expect, it } from 'vitest';
import type { RunStep } from '@flowdesk/contracts';
import { groupSteps } from './step-groups.ts';

const step = (nodeId: string, item?: number): RunStep => ({
  nodeId,
  type: 'set_fields',
  status: 'succeeded',
  input: null,
  output: null,
  error: null,
  startedAt: '2026-11-28T10:00:00.000Z',
  durationMs: 1,
  ...(item === undefined ? {} : { item }),
});

describe('the run page groups a For each body’s steps by item', () => {
  it('keeps steps outside loops in order and groups interleaved item steps, item 0 first', () => {
    const entries = groupSteps([step('loop_1'), step('set_1', 1), step('set_1', 0), step('task_1', 0), step('task_1', 1), step('agg_1')]);
    expect(
      entries.map((e) => (e.kind === 'step' ? e.step.nodeId : `item ${e.item}: ${e.steps.map((s) => `${s.step.nodeId}#${s.index + 1}`).join(' ')}`)),
    ).toEqual(['loop_1', 'item 0: set_1#3 task_1#4', 'item 1: set_1#2 task_1#5', 'agg_1']);
  });
  it('a run without loops is its steps as they are', () => {
    const entries = groupSteps([step('a'), step('b')]);
    expect(entries).toEqual([
      { kind: 'step', step: step('a'), index: 0 },
      { kind: 'step', step: step('b'), index: 1 },
    ]);
  });
});
