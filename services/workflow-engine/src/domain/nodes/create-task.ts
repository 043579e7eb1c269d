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

export type CreateTaskParams = NodeParams<'create_task'>;

export const createTaskHandler: NodeHandler<CreateTaskParams, CreateTaskInput> = {
  isAction: true,
  render: renderCreateTask,
  mask: (input) => input,
  execute: async (input, ctx) => {
    if (!input.title) throw new NodeFailedError('the task title is empty after rendering its variables');
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
  const optional = (template: string | undefined) => (template === undefined ? '' : renderer.renderString(template).trim());
  const projectId = optional(params.projectId);
  const dueDate = optional(params.dueDate);
  const notes = optional(params.notes);
  if (projectId) input.projectId = projectId;
  if (dueDate) input.dueDate = dueDate.length > 10 && /^\d{4}-\d{2}-\d{2}T/.test(dueDate) ? dueDate.slice(0, 10) : dueDate;
  if (notes) input.notes = notes.slice(0, 20_000);
  return input;
}
