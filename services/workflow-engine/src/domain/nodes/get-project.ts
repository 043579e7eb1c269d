/** Get Project node: one of the owner's projects by its (rendered) id; another owner's is 404. */
import type { NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { NodeHandler } from './node-handler.ts';
import { optional, workspacePort } from './workspace-input.ts';

export const getProjectHandler: NodeHandler<NodeParams<'get_project'>, { projectId: string }> = {
  isAction: false,
  render: (params, renderer) => ({ projectId: optional(renderer, params.projectId) }),
  mask: (input) => input,
  execute: async (input, ctx) => {
    if (!input.projectId) throw new NodeFailedError('the project id is empty after rendering its variables');
    return { output: await workspacePort(ctx.ports.workspace).getProject(ctx.ownerId, input.projectId, ctx.signal) };
  },
};
