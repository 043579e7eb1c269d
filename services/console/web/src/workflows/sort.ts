import type { Workflow } from '@flowdesk/contracts';

/** How the Workflows list is ordered (docs/console.md): newest created (the API's order), last updated, or by name. */
export type WorkflowSort = 'created' | 'updated' | 'name';
export const WORKFLOW_SORTS: { value: WorkflowSort; label: string }[] = [
  { value: 'created', label: 'Created, newest first' },
  { value: 'updated', label: 'Last updated' },
  { value: 'name', label: 'Name (A–Z)' },
];

const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/** A sorted copy: dates newest first, names A–Z ignoring case and accents (numbers in names in their order); ties by newest created. */
export function sortWorkflows<W extends Pick<Workflow, 'name' | 'createdAt' | 'updatedAt'>>(items: readonly W[], by: WorkflowSort): W[] {
  const created = (a: W, b: W) => b.createdAt.localeCompare(a.createdAt);
  const order: Record<WorkflowSort, (a: W, b: W) => number> = {
    created,
    updated: (a, b) => b.updatedAt.localeCompare(a.updatedAt) || created(a, b),
    name: (a, b) => byName.compare(a.name, b.name) || created(a, b),
  };
  return [...items].sort(order[by]);
}
