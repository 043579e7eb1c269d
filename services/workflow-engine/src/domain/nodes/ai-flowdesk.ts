/**
 * The owner's own Flowdesk tools for an AI step (docs/workflow-engine.md, "AI step", "Flowdesk
 * tools"): find, read and (with `read_write`) create and update the owner's tasks, called through the
 * engine's workspace ports as the workflow's owner (row-level security applies, as for the workspace
 * nodes). A create carries an idempotency key derived from the step's and the tool call's number, so
 * a tool call made again (a crash mid-call) answers the task it created first.
 */
import { NodeFailedError } from '../errors.ts';
import type { CreateTaskInput, FindTasksInput } from '../ports.ts';
import type { ModelTool } from './ai-models.ts';
import type { NodeContext } from './node-handler.ts';

export type FlowdeskToolsMode = 'none' | 'read' | 'read_write';

export interface LocalTool extends ModelTool {
  write: boolean;
  run(args: Record<string, unknown>, ctx: NodeContext, key: string | undefined): Promise<unknown>;
}

const str = (description: string, extra: Record<string, unknown> = {}) => ({ type: 'string', description, ...extra });
const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required, additionalProperties: false });
const STATUS = ['todo', 'in_progress', 'done', 'cancelled'];
const PRIORITY = ['none', 'low', 'medium', 'high', 'urgent'];

function workspace(ctx: NodeContext) {
  if (!ctx.ports.workspace) throw new NodeFailedError('the Flowdesk tools are not available in this engine (no workspace client)');
  return ctx.ports.workspace;
}

function pick(args: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (args[k] !== undefined && args[k] !== null && args[k] !== '') out[k] = args[k];
  return out;
}

const TASK_FIELDS = ['title', 'notes', 'dueDate', 'priority', 'projectId', 'tags'] as const;

export const FLOWDESK_TOOLS: readonly LocalTool[] = [
  {
    name: 'find_tasks',
    description: "Finds the owner's tasks (at most 50): by text, status, tag, project, due date or overdue.",
    inputSchema: obj({
      q: str('Text in the title or notes.'),
      status: { type: 'array', items: { type: 'string', enum: STATUS }, description: 'Statuses to include.' },
      tag: str('A tag.'),
      projectId: str('A project id.'),
      dueBefore: str('YYYY-MM-DD.'),
      overdue: { type: 'boolean', description: 'Only open tasks past their due date.' },
      limit: { type: 'integer', minimum: 1, maximum: 50, description: 'Default 25.' },
    }),
    write: false,
    run: async (args, ctx) => {
      const query = pick(args, ['q', 'status', 'tag', 'projectId', 'dueBefore', 'overdue', 'limit']) as FindTasksInput;
      const page = await workspace(ctx).findTasks(ctx.ownerId, { limit: 25, ...query }, ctx.signal);
      return { items: page.items, hasMore: page.nextCursor !== null };
    },
  },
  {
    name: 'get_task',
    description: 'Reads one task by id.',
    inputSchema: obj({ taskId: str('The task id.') }, ['taskId']),
    write: false,
    run: (args, ctx) => workspace(ctx).getTask(ctx.ownerId, String(args.taskId), ctx.signal),
  },
  {
    name: 'get_project',
    description: 'Reads one project by id.',
    inputSchema: obj({ projectId: str('The project id.') }, ['projectId']),
    write: false,
    run: (args, ctx) => workspace(ctx).getProject(ctx.ownerId, String(args.projectId), ctx.signal),
  },
  {
    name: 'create_task',
    description: 'Creates a task for the owner.',
    inputSchema: obj(
      {
        title: str('The title.'),
        notes: str('Notes (Markdown).'),
        dueDate: str('YYYY-MM-DD.'),
        priority: str('The priority.', { enum: PRIORITY }),
        projectId: str('A project id; absent: the inbox.'),
        tags: { type: 'array', items: { type: 'string' }, description: 'Tags.' },
      },
      ['title'],
    ),
    write: true,
    run: (args, ctx, key) =>
      ctx.ports.createTask(ctx.ownerId, pick(args, TASK_FIELDS) as CreateTaskInput, { signal: ctx.signal, ...(key ? { idempotencyKey: key } : {}) }),
  },
  {
    name: 'update_task',
    description: 'Changes a task: its title, status, notes, due date or priority.',
    inputSchema: obj(
      {
        taskId: str('The task id.'),
        title: str('New title.'),
        status: str('New status.', { enum: STATUS }),
        notes: str('New notes.'),
        dueDate: str('YYYY-MM-DD.'),
        priority: str('New priority.', { enum: PRIORITY }),
      },
      ['taskId'],
    ),
    write: true,
    run: (args, ctx) =>
      workspace(ctx).updateTask(ctx.ownerId, String(args.taskId), pick(args, ['title', 'status', 'notes', 'dueDate', 'priority']), ctx.signal),
  },
];

/** The tools a mode offers. */
export const flowdeskTools = (mode: FlowdeskToolsMode): LocalTool[] => (mode === 'none' ? [] : FLOWDESK_TOOLS.filter((t) => mode === 'read_write' || !t.write));

/**
 * Runs one Flowdesk tool as the owner. workspace-api's refusals (4xx: a bad field, a task that is not
 * the owner's) are fed back to the model as the tool's error; anything else fails the step.
 */
export async function runFlowdeskTool(
  tool: LocalTool,
  args: unknown,
  ctx: NodeContext,
  key: string | undefined,
): Promise<{ content: string; isError: boolean }> {
  const input = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  try {
    return { content: JSON.stringify(await tool.run(input, ctx, key)), isError: false };
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) return { content: `Error: ${(err as Error).message}`, isError: true };
    throw err;
  }
}
