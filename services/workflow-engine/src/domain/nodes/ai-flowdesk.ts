/**
 * The owner's own Flowdesk tools for an AI step (docs/workflow-engine.md, "AI step", "Flowdesk
 * tools"): the MCP gateway's task and project tools (AI_FLOWDESK_TOOL_NAMES), offered to the model
 * under the gateway's names with the gateway's descriptions and input schemas (libs/contracts
 * TOOLS: derived, not declared again), and called through the engine's workspace ports as the
 * workflow's owner (row-level security applies, as for the workspace nodes) — the same workspace-api
 * requests the gateway's handlers make. A create carries an idempotency key derived from the step's
 * and the tool call's number, so a tool call made again (a crash mid-call) answers the task it
 * created first. Why not over MCP through the gateway itself: the decision in the docs.
 */
import Schema from 'typebox/schema';
import { AI_FLOWDESK_TOOL_NAMES, TOOL } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import type { CreateTaskInput } from '../ports.ts';
import type { ModelTool } from './ai-models.ts';
import type { NodeContext } from './node-handler.ts';

export type FlowdeskToolsMode = 'none' | 'read' | 'read_write';

export interface LocalTool extends ModelTool {
  write: boolean;
  run(args: Record<string, unknown>, ctx: NodeContext, key: string | undefined): Promise<unknown>;
}

type FlowdeskToolName = (typeof AI_FLOWDESK_TOOL_NAMES)['read' | 'write'][number];

function workspace(ctx: NodeContext) {
  if (!ctx.ports.workspace) throw new NodeFailedError('the Flowdesk tools are not available in this engine (no workspace client)');
  return ctx.ports.workspace;
}

/** The arguments without the empty ones (models send null or "" for a filter they do not want) and without `drop`. */
function given(args: Record<string, unknown>, drop: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) if (!drop.includes(k) && v !== undefined && v !== null && v !== '') out[k] = v;
  return out;
}

/** What each tool does, as the gateway's handler of that name does it (services/mcp-gateway tool-handlers.ts). */
const RUN: Record<FlowdeskToolName, LocalTool['run']> = {
  list_tasks: async (args, ctx) => workspace(ctx).findTasks(ctx.ownerId, given(args), ctx.signal),
  get_task: (args, ctx) => workspace(ctx).getTask(ctx.ownerId, String(args.taskId), ctx.signal),
  get_project: (args, ctx) => workspace(ctx).getProject(ctx.ownerId, String(args.projectId), ctx.signal),
  create_task: (args, ctx, key) =>
    ctx.ports.createTask(ctx.ownerId, given(args) as CreateTaskInput, { signal: ctx.signal, ...(key ? { idempotencyKey: key } : {}) }),
  // null clears a due date or a project here, as in the gateway's update_task: kept.
  update_task: (args, ctx) => {
    const { taskId, ...changes } = args;
    return workspace(ctx).updateTask(ctx.ownerId, String(taskId), changes, ctx.signal);
  },
  complete_task: (args, ctx) => workspace(ctx).updateTask(ctx.ownerId, String(args.taskId), { status: 'done' }, ctx.signal),
};

const toLocal = (name: FlowdeskToolName, write: boolean): LocalTool => {
  const def = TOOL[name];
  return { name, description: def.description, inputSchema: def.inputSchema, write, run: RUN[name] };
};

export const FLOWDESK_TOOLS: readonly LocalTool[] = [
  ...AI_FLOWDESK_TOOL_NAMES.read.map((n) => toLocal(n, false)),
  ...AI_FLOWDESK_TOOL_NAMES.write.map((n) => toLocal(n, true)),
];

/** The tools a mode offers. */
export const flowdeskTools = (mode: FlowdeskToolsMode): LocalTool[] => (mode === 'none' ? [] : FLOWDESK_TOOLS.filter((t) => mode === 'read_write' || !t.write));

/** Where the arguments do not fit the tool's input schema (as the gateway refuses them), or null. */
function argumentProblem(tool: LocalTool, args: Record<string, unknown>): string | null {
  let errors: { instancePath: string; message: string }[];
  try {
    errors = Schema.Errors(tool.inputSchema as never, args)[1];
  } catch {
    return null;
  }
  if (!errors.length) return null;
  return errors
    .slice(0, 4)
    .map((e) => `${e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : 'arguments'} ${e.message}`)
    .join('; ');
}

/**
 * Runs one Flowdesk tool as the owner. Arguments that do not fit the tool's schema, and
 * workspace-api's refusals (4xx: a bad field, a task that is not the owner's), are fed back to the
 * model as the tool's error; anything else fails the step.
 */
export async function runFlowdeskTool(
  tool: LocalTool,
  args: unknown,
  ctx: NodeContext,
  key: string | undefined,
): Promise<{ content: string; isError: boolean }> {
  const input = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const problem = argumentProblem(tool, input);
  if (problem) return { content: `Error: invalid arguments for ${tool.name}: ${problem}`, isError: true };
  try {
    return { content: JSON.stringify(await tool.run(input, ctx, key)), isError: false };
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) return { content: `Error: ${(err as Error).message}`, isError: true };
    throw err;
  }
}
