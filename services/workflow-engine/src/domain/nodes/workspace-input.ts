/**
 * Rendering helpers shared by the workspace nodes (Create/Update Task, Find Tasks, Create Note, …):
 * optional templates that render empty are left out, tags are a comma-separated list, dates keep
 * their YYYY-MM-DD part, enum values are checked with a clear message (workspace-api checks again).
 */
import type { TaskPriority, TaskStatus } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { TemplateRenderer } from '../template.ts';

export const PRIORITIES: readonly TaskPriority[] = ['none', 'low', 'medium', 'high', 'urgent'];
export const STATUSES: readonly TaskStatus[] = ['todo', 'in_progress', 'done', 'cancelled'];

/** The rendered, trimmed value of an optional template; '' when absent. */
export const optional = (renderer: TemplateRenderer, template: string | undefined): string =>
  template === undefined ? '' : renderer.renderString(template).trim();

/** `a, b,,c` → ['a', 'b', 'c'] (each trimmed, duplicates dropped). */
export const tagList = (text: string): string[] => [
  ...new Set(
    text
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  ),
];

/** A date-time keeps its date (a task's due date is a day). */
export const dateOnly = (text: string): string => (text.length > 10 && /^\d{4}-\d{2}-\d{2}T/.test(text) ? text.slice(0, 10) : text);

export function checkEnum<T extends string>(what: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new NodeFailedError(`${what} "${value.slice(0, 50)}" is not one of ${allowed.join(', ')}`);
  return value as T;
}

export function checkTags(tags: string[] | undefined): void {
  if (!tags) return;
  if (tags.length > 20) throw new NodeFailedError(`at most 20 tags (got ${tags.length})`);
  const bad = tags.find((t) => t.length > 50 || /\s/.test(t));
  if (bad !== undefined) throw new NodeFailedError(`the tag "${bad.slice(0, 50)}" has spaces or is longer than 50 characters`);
}

/** The port of the other workspace nodes, or a clear failure where the engine was built without it. */
export function workspacePort<T>(port: T | undefined): T {
  if (!port) throw new NodeFailedError('this engine has no workspace connection for this node');
  return port;
}
