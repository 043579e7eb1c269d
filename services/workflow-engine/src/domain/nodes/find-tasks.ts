/**
 * Find Tasks node: the owner's tasks matching the public list's filters (GET /api/v1/tasks as the
 * owner), newest first: `limit` of them (default 25), or with `returnAll` every match, both at most
 * FIND_TASKS_MAX, read in pages of 100 following the list's cursor. Output `{ items, count, hasMore }`
 * (items for For each; hasMore: more matches than returned).
 */
import { FIND_TASKS_MAX, type NodeParams, type TaskStatus } from '@flowdesk/contracts';
import type { FindTasksInput } from '../ports.ts';
import type { TemplateRenderer } from '../template.ts';
import type { NodeHandler } from './node-handler.ts';
import { checkEnum, dateOnly, optional, STATUSES, tagList, workspacePort } from './workspace-input.ts';

export type FindTasksParams = NodeParams<'find_tasks'>;
type RenderedQuery = Omit<FindTasksInput, 'status' | 'cursor'> & { status?: string[] };
/** The public list's page limit. */
const PAGE = 100;

export const findTasksHandler: NodeHandler<FindTasksParams, RenderedQuery> = {
  isAction: false,
  render: renderFindTasks,
  mask: (input) => input,
  execute: async (input, ctx) => {
    const { status, ...rest } = input;
    const statuses: TaskStatus[] | undefined = status?.map((s) => checkEnum('the status', s, STATUSES)!);
    const port = workspacePort(ctx.ports.workspace);
    const want = rest.limit ?? FIND_TASKS_MAX;
    const items: Record<string, unknown>[] = [];
    let cursor: string | null = null;
    do {
      const limit = Math.min(PAGE, want - items.length);
      const page = await port.findTasks(ctx.ownerId, { ...rest, ...(statuses ? { status: statuses } : {}), limit, ...(cursor ? { cursor } : {}) }, ctx.signal);
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor && items.length < want);
    return { output: { items, count: items.length, hasMore: cursor !== null } };
  },
};

export function renderFindTasks(params: FindTasksParams, renderer: TemplateRenderer): RenderedQuery {
  const query: RenderedQuery = { limit: params.returnAll ? FIND_TASKS_MAX : Math.min(params.limit ?? 25, FIND_TASKS_MAX) };
  const projectId = optional(renderer, params.projectId);
  const status = tagList(optional(renderer, params.status));
  const tag = optional(renderer, params.tag);
  const dueBefore = optional(renderer, params.dueBefore);
  const text = optional(renderer, params.text);
  if (projectId) query.projectId = projectId;
  if (status.length > 0) query.status = status;
  if (tag) query.tag = tag;
  if (dueBefore) query.dueBefore = dateOnly(dueBefore);
  if (params.overdue) query.overdue = true;
  if (text) query.q = text;
  return query;
}
