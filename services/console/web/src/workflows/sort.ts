import type { WorkflowListOrder } from '@flowdesk/contracts';

/** How the Workflows list is ordered, by the server (GET /workflows?sort=; docs/console.md): newest created, last updated, or by name. */
export type WorkflowSort = WorkflowListOrder;
export const WORKFLOW_SORTS: { value: WorkflowSort; label: string }[] = [
  { value: 'created', label: 'Created, newest first' },
  { value: 'updated', label: 'Last updated' },
  { value: 'name', label: 'Name (A–Z)' },
];
