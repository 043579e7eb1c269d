import { Badge } from '@mantine/core';
import type { WorkflowRun } from '../api.ts';

const COLOR: Record<WorkflowRun['status'], string> = { queued: 'gray', running: 'blue', succeeded: 'green', failed: 'red', skipped: 'yellow' };
const LABEL: Record<WorkflowRun['status'], string> = { queued: 'Queued', running: 'Running', succeeded: 'Succeeded', failed: 'Failed', skipped: 'Skipped' };

/**
 * The label's colour: shade 9 of the tint's colour where that reads at AA on the tint (4.5:1 at the
 * badge's 11 px), a darker one where it does not: Mantine's green.9 and yellow.9 measure 3.8–4.0 on
 * their own tint (axe-core, the workflows list), these 6.6–6.9.
 */
const TEXT: Record<WorkflowRun['status'], string> = { queued: 'gray.9', running: 'blue.9', succeeded: '#1b5e20', failed: 'red.9', skipped: '#7a4a00' };

/** A run's status; dark text on a light tint (readable at AA). */
export function RunStatusBadge({ status }: { status: WorkflowRun['status'] }) {
  return (
    <Badge variant="light" color={COLOR[status]} tt="none" c={TEXT[status]}>
      {LABEL[status]}
    </Badge>
  );
}
