import { describe, expect, test } from 'vitest';
import type { DryRunResult } from '@flowdesk/contracts';
import { dryRunOutputs, FROM_DRY_RUN, mergeKnown } from './dry-run.ts';
import type { KnownOutput } from './picker-sources.ts';

const result: DryRunResult = {
  steps: [
    { nodeId: 'set_1', type: 'set_fields', status: 'succeeded', output: { who: 'ADA' }, error: null },
    { nodeId: 'http_1', type: 'http_request', status: 'not_run', output: null, error: null },
    { nodeId: 'loop_1', type: 'for_each', status: 'succeeded', output: { results: [1, 2], count: 2 }, error: null },
    { nodeId: 'body_1', type: 'set_fields', status: 'succeeded', output: { n: 1 }, error: null, item: 0 },
    { nodeId: 'body_1', type: 'set_fields', status: 'succeeded', output: { n: 2 }, error: null, item: 1 },
    { nodeId: 'if_1', type: 'condition', status: 'skipped', output: null, error: null },
  ],
  warnings: [],
  error: null,
};

describe('the dry run in the editor', () => {
  test('each executed step gives its output (a loop-body step its first item’s); actions not run and skipped steps give none', () => {
    const out = dryRunOutputs(result);
    expect([...out.keys()].sort()).toEqual(['body_1', 'loop_1', 'set_1']);
    expect(out.get('set_1')).toEqual({ output: { who: 'ADA' }, from: FROM_DRY_RUN });
    expect(out.get('body_1')?.output).toEqual({ n: 1 });
  });

  test('Run this step comes first; with a pinned sample the dry run comes before the last run, else after it', () => {
    const fromRuns = new Map<string, KnownOutput>([
      ['set_1', { output: { who: 'Old' }, from: 'last run' }],
      ['loop_1', { output: { tried: true }, from: 'Run this step' }],
      ['http_1', { output: { status: 200 }, from: 'last run' }],
    ]);
    const dry = dryRunOutputs(result);
    const pinned = mergeKnown(fromRuns, dry, true);
    expect(pinned.get('set_1')?.output).toEqual({ who: 'ADA' });
    expect(pinned.get('loop_1')?.from).toBe('Run this step');
    expect(pinned.get('http_1')?.from).toBe('last run');
    expect(pinned.get('body_1')?.from).toBe(FROM_DRY_RUN);
    const unpinned = mergeKnown(fromRuns, dry, false);
    expect(unpinned.get('set_1')?.output).toEqual({ who: 'Old' });
    expect(unpinned.get('body_1')?.from, 'a node no run reached still gets the dry run’s output').toBe(FROM_DRY_RUN);
  });
});
