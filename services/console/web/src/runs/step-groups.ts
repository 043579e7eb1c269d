/**
 * The run page's step list: steps outside loops in order, and a For each's body steps (RunStep.item)
 * grouped by item, item 0 first — with items running concurrently their steps interleave in the
 * record, so each stretch of body steps is regrouped by item (docs/workflow-engine.md, "For each").
 */
import type { RunStep } from '@flowdesk/contracts';

export interface NumberedStep {
  step: RunStep;
  /** Position in run.steps (the step's number on the page is index + 1). */
  index: number;
}

export type StepEntry = { kind: 'step'; step: RunStep; index: number } | { kind: 'item'; item: number; steps: NumberedStep[] };

export function groupSteps(steps: readonly RunStep[]): StepEntry[] {
  const out: StepEntry[] = [];
  let stretch: Map<number, NumberedStep[]> | null = null;
  const flush = () => {
    if (!stretch) return;
    for (const item of [...stretch.keys()].sort((a, b) => a - b)) out.push({ kind: 'item', item, steps: stretch.get(item)! });
    stretch = null;
  };
  steps.forEach((step, index) => {
    if (step.item === undefined) {
      flush();
      out.push({ kind: 'step', step, index });
      return;
    }
    stretch ??= new Map();
    const list = stretch.get(step.item) ?? [];
    list.push({ step, index });
    stretch.set(step.item, list);
  });
  flush();
  return out;
}
