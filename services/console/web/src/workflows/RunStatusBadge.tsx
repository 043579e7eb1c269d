import { Badge } from '@mantine/core';
import type { WorkflowRun } from '../api.ts';

const COLOR: Record<WorkflowRun['status'], string> = { queued: 'gray', running: 'blue', succeeded: 'green', failed: 'red', skipped: 'yellow' };
const LABEL: Record<WorkflowRun['status'], string> = { queued: 'Queued', running: 'Running', succeeded: 'Succeeded', failed: 'Failed', skipped: 'Skipped' };

/** A run's status; dark text on a light tint (readable at AA). */
export function RunStatusBadge({ status }: { status: WorkflowRun['status'] }) {
  return (
    <Badge variant="light" color={COLOR[status]} tt="none" c={`${COLOR[status]}.9`}>
      {LABEL[status]}
    </Badge>
  );
}
