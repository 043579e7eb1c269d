/**
 * The types the executor, its ports and its callers share: a run's limits, its record and a step's
 * checkpoint. They live here, not in executor.ts, so ports.ts (which the node handlers import) does
 * not import the executor back.
 */
import type { RunStep } from '@flowdesk/contracts';

/**
 * A run's own limits. There is no overall wall time (a run may wait for days, parked: "Parking" in
 * docs/workflow-engine.md); each node keeps its own timeout.
 */
export interface RunLimits {
  /** Nodes executed (not counting skipped ones) per run. */
  maxNodesPerRun: number;
  /**
   * Items For each nodes loop over per run, summed over every loop of the run (MAX_LOOP_ITEMS_PER_RUN).
   * Checked before a loop starts: a loop that would pass it fails before its first item, never drops items.
   */
  maxLoopItemsPerRun: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = { maxNodesPerRun: 50, maxLoopItemsPerRun: 1_000 };

export type FinalRunStatus = 'succeeded' | 'failed' | 'skipped' | 'cancelled';

/**
 * A parked run (status `waiting`): the step that parked it, when its timer fires and whether a resume
 * wakes it, and the executed steps not stored yet (the parked one last, status `waiting`), which the
 * caller stores with the run's `waiting` row.
 */
export interface ParkedRun {
  nodeId: string;
  until: Date | null;
  resumable: boolean;
  unsaved: StepCheckpoint[];
}

export interface RunRecord {
  workflowId: string;
  eventId: string;
  status: FinalRunStatus | 'waiting';
  steps: RunStep[];
  warnings: string[];
  error: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Set when status is `waiting`. */
  parked?: ParkedRun;
}

/**
 * One executed step's checkpoint (docs/workflow-engine.md, "Durable runs"): the step as recorded, the
 * output later nodes read and a condition's branch. A resumed run reuses it instead of executing the
 * node again.
 */
export interface StepCheckpoint {
  step: RunStep;
  output: unknown;
  branch?: string;
}

/** The key a step's checkpoint is stored and resumed under: the node id, or `<node id>#<item>` inside a loop body. */
export function checkpointKey(nodeId: string, item?: number): string {
  return item === undefined ? nodeId : `${nodeId}#${item}`;
}
