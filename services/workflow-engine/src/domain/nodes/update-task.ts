/**
 * Update Task node: changes the task whose (rendered) id it names, as the workflow's owner; only the
 * fields that render non-empty change. Idempotent by nature (executed again, it sets the same values),
 * so it carries no idempotency key. Another owner's task is 404, like a missing one.
 */
import type { NodeParams, UpdateTask } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';
import { checkEnum, checkTags, dateOnly, optional, PRIORITIES, STATUSES, tagList, workspacePort } from './workspace-input.ts';

export type UpdateTaskParams = NodeParams<'update_task'>;
export interface UpdateTaskInput {
  taskId: string;
  changes: Record<string, unknown>;
}

export const updateTaskHandler: NodeHandler<UpdateTaskParams, UpdateTaskInput> = {
  isAction: true,
  render: renderUpdateTask,
  mask: (input) => input,
  execute: async (input, ctx) => {
    if (!input.taskId) throw new NodeFailedError('the task id is empty after rendering its variables');
    const c = input.changes as UpdateTask;
    if (Object.keys(c).length === 0) throw new NodeFailedError('nothing to change: every field is empty after rendering');
    checkEnum('the status', c.status, STATUSES);
    checkEnum('the priority', c.priority, PRIORITIES);
    checkTags(c.tags);
    const task = await workspacePort(ctx.ports.workspace).updateTask(ctx.ownerId, input.taskId, c, ctx.signal);
    return { output: task };
  },
};

export function renderUpdateTask(params: UpdateTaskParams, renderer: TemplateRenderer): UpdateTaskInput {
  const changes: Record<string, unknown> = {};
  const title = optional(renderer, params.title);
  const notes = optional(renderer, params.notes);
  const status = optional(renderer, params.status);
  const priority = optional(renderer, params.priority);
  const dueDate = optional(renderer, params.dueDate);
  const tags = optional(renderer, params.tags);
  const projectId = optional(renderer, params.projectId);
  if (title) changes.title = title.slice(0, 500);
  if (notes) changes.notes = notes.slice(0, 20_000);
  if (status) changes.status = status;
  if (priority) changes.priority = priority;
  if (dueDate) changes.dueDate = dateOnly(dueDate);
  if (tags) changes.tags = tagList(tags);
  if (projectId) changes.projectId = projectId;
  return { taskId: optional(renderer, params.taskId), changes };
}
