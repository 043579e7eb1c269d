/**
 * Create Task node: renders title, project, due date and notes and creates the task through the
 * CreateTaskPort as the workflow's owner (never as a service identity: the owner's permissions
 * and row-level security apply). The created task is the output: {{nodes.<id>.id}}.
 */
import type { NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { CreateTaskInput } from '../ports.ts';
import type { TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';
import { checkEnum, checkTags, dateOnly, optional, PRIORITIES, tagList } from './workspace-input.ts';

export type CreateTaskParams = NodeParams<'create_task'>;

export const createTaskHandler: NodeHandler<CreateTaskParams, CreateTaskInput> = {
  isAction: true,
  // workspace-api answers the task it created for the step's key: executed again, no second task.
  exactlyOnce: true,
  render: renderCreateTask,
  mask: (input) => input,
  execute: async (input, ctx) => {
    if (!input.title) throw new NodeFailedError('the task title is empty after rendering its variables');
    checkEnum('the priority', input.priority, PRIORITIES);
    checkTags(input.tags);
    // The step's key makes it exactly once: executed again (a resumed run), it answers the same task.
    const task = await ctx.ports.createTask(ctx.ownerId, input, { signal: ctx.signal, idempotencyKey: ctx.idempotencyKey });
    return { output: task };
  },
  // The step's key makes every attempt answer the same task: repeating is exactly-once.
  retrySafe: () => true,
};

/** Optional fields that render empty are left out, so the task gets the API's defaults. */
export function renderCreateTask(params: CreateTaskParams, renderer: TemplateRenderer): CreateTaskInput {
  const input: CreateTaskInput = { title: renderer.renderString(params.title).trim().slice(0, 500) };
  const projectId = optional(renderer, params.projectId);
  const dueDate = optional(renderer, params.dueDate);
  const notes = optional(renderer, params.notes);
  const priority = optional(renderer, params.priority);
  const tags = tagList(optional(renderer, params.tags));
  if (projectId) input.projectId = projectId;
  if (dueDate) input.dueDate = dateOnly(dueDate);
  if (notes) input.notes = notes.slice(0, 20_000);
  // Checked in execute (render never throws): the recorded input shows what was asked for.
  if (priority) input.priority = priority as CreateTaskInput['priority'];
  if (tags.length > 0) input.tags = tags;
  return input;
}
