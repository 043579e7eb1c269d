/** Field hints shared by the workspace nodes (Create/Update Task, Find Tasks). */
export const PRIORITY_HINT = { label: 'Priority', template: true, trim: true, placeholder: 'none, low, medium, high or urgent' } as const;
export const STATUS_HINT = { label: 'Status', template: true, trim: true, placeholder: 'todo, in_progress, done or cancelled' } as const;
export const TAGS_HINT = {
  label: 'Tags',
  template: true,
  placeholder: 'lead, {{trigger.source}}',
  description: 'Comma-separated; up to 20, each without spaces.',
} as const;
export const DATE_HINT = (label: string) =>
  ({
    label,
    template: true,
    trim: true,
    placeholder: '2026-12-01 or {{trigger.dueDate}}',
    description: 'A date (YYYY-MM-DD) or a variable holding one.',
  }) as const;
