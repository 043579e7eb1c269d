/**
 * How a run record stores a For each's results without repeating them (docs/workflow-engine.md,
 * "For each"; docs/performance.md, 2026-11-29). A finished For each's output is `{ results, count }`,
 * where `results[i]` is the output of item i's last executed step, which the record already holds as
 * that step's output: over 10 items creating a task each, a quarter of the record's bytes. The store
 * writes `results` as LOOP_RESULTS_FROM_ITEMS when every entry is exactly (the same object as) what
 * `loopResultsOf` finds in the item steps, and puts them back when a run is read, so the API, the run
 * page and MCP read the record as the executor made it. Anything else (a result that is not its item's
 * last output, such as a failed item's null) is stored as it is.
 */
import type { RunStep } from '@flowdesk/contracts';

/** What a stored For each output holds instead of its results: no real `results` is ever this (they are an array). */
export const LOOP_RESULTS_FROM_ITEMS = { fromItemSteps: true } as const;

interface LoopOutput {
  results: unknown;
  count: number;
}

function loopOutput(step: RunStep): LoopOutput | null {
  if (step.type !== 'for_each' || step.status !== 'succeeded') return null;
  const output = step.output as Partial<LoopOutput> | null;
  return output !== null && typeof output === 'object' && typeof output.count === 'number' && 'results' in output ? (output as LoopOutput) : null;
}

/**
 * The results a For each at `at` reports, read from its item steps: the executor records a loop body's
 * steps (those with `item`) right after the For each's own step, so they are the steps with `item` that
 * follow it. For each item, the output of its last step that was not skipped; null for an item with none.
 */
function loopResultsOf(steps: readonly RunStep[], at: number, count: number): { values: unknown[]; found: boolean[] } {
  const values = new Array<unknown>(count).fill(null);
  const found = new Array<boolean>(count).fill(false);
  for (let i = at + 1; i < steps.length && steps[i]!.item !== undefined; i++) {
    const s = steps[i]!;
    if (s.status === 'skipped' || s.item! < 0 || s.item! >= count) continue;
    values[s.item!] = s.output;
    found[s.item!] = true;
  }
  return { values, found };
}

/** The steps as stored: For each outputs whose results are all their items' last outputs carry the marker instead. Never changes `steps`. */
export function compactLoopResults(steps: readonly RunStep[]): readonly RunStep[] {
  let out: RunStep[] | null = null;
  steps.forEach((step, at) => {
    const output = loopOutput(step);
    if (!output || !Array.isArray(output.results) || output.results.length !== output.count) return;
    const { values, found } = loopResultsOf(steps, at, output.count);
    // Identity, not equality: the entry must be the very output the item step records.
    const derivable = output.results.every((r, i) => (found[i] ? r === values[i] : r === null));
    if (!derivable) return;
    out ??= [...steps];
    out[at] = { ...step, output: { ...output, results: LOOP_RESULTS_FROM_ITEMS } };
  });
  return out ?? steps;
}

/** The steps as the executor recorded them: every For each output stored with the marker gets its results back. */
export function expandLoopResults(steps: RunStep[]): RunStep[] {
  steps.forEach((step, at) => {
    const output = loopOutput(step);
    const marker = output?.results as { fromItemSteps?: unknown } | null | undefined;
    if (!output || marker === null || typeof marker !== 'object' || Array.isArray(marker) || marker.fromItemSteps !== true) return;
    steps[at] = { ...step, output: { ...output, results: loopResultsOf(steps, at, output.count).values } };
  });
  return steps;
}
