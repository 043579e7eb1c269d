/** Get Task node: one of the owner's tasks by its (rendered) id; another owner's is 404. */
import type { NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { NodeHandler } from './node-handler.ts';
import { optional, workspacePort } from './workspace-input.ts';

export const getTaskHandler: NodeHandler<NodeParams<'get_task'>, { taskId: string }> = {
  isAction: false,
  render: (params, renderer) => ({ taskId: optional(renderer, params.taskId) }),
  mask: (input) => input,
  execute: async (input, ctx) => {
    if (!input.taskId) throw new NodeFailedError('the task id is empty after rendering its variables');
    return { output: await workspacePort(ctx.ports.workspace).getTask(ctx.ownerId, input.taskId, ctx.signal) };
  },
};
