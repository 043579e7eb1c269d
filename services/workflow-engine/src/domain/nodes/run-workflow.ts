/**
 * Run workflow node (docs/workflow-engine.md, "Run workflow"): starts another of the owner's
 * workflows through EnginePorts.startWorkflow (a trigger event whose id is derived from the step's
 * idempotency key, so a step executed again starts the child once) and, when waiting, parks the run
 * until the child's outcome resumes it (process-trigger.ts notifyParent) or the timeout passes.
 */
import type { NodeParams } from '@flowdesk/contracts';
import { NodeFailedError } from '../errors.ts';
import { maskJson } from '../mask.ts';
import type { NodeHandler } from './node-handler.ts';

export type RunWorkflowParams = NodeParams<'run_workflow'>;
export interface RunWorkflowInput {
  workflowId: string;
  payload: unknown;
  wait: boolean;
  timeoutMs: number | null;
}

/** What a waiting Run workflow node outputs: the child's run, its status, last output and error. */
export interface ChildResult {
  runId: string | null;
  status: string;
  output: unknown;
  error: string | null;
}

export const runWorkflowHandler: NodeHandler<RunWorkflowParams, RunWorkflowInput> = {
  isAction: true,
  // The child's event id is the step's key, and a run per event is unique: started again, it runs once.
  exactlyOnce: true,
  render: (params, renderer) => ({
    workflowId: renderer.renderString(params.workflowId ?? '').trim(),
    payload: params.payload === undefined ? {} : renderer.renderDeep(params.payload),
    wait: params.wait !== false,
    timeoutMs: params.timeoutMs ?? null,
  }),
  mask: (input) => ({ ...input, payload: maskJson(input.payload) }),
  // Starting the child again is harmless: its event id is the step's, so it runs once.
  retrySafe: () => true,
  execute: async (input, ctx) => {
    if (ctx.resumed) {
      if (ctx.resumed.resumedBy !== 'resume') throw new NodeFailedError(`the workflow did not finish within ${input.timeoutMs ?? 0} ms`);
      const result = ctx.resumed.body as ChildResult;
      if (result.status !== 'succeeded' && result.status !== 'skipped')
        throw new NodeFailedError(`the workflow's run ${result.status}${result.error ? `: ${result.error}` : ''}`, result);
      return { output: result };
    }
    if (input.workflowId === '') throw new NodeFailedError('no workflow id given');
    const payload = input.payload;
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw new NodeFailedError('the payload must be a JSON object');
    if (!ctx.ports.startWorkflow || !ctx.idempotencyKey || !ctx.nodeId) throw new NodeFailedError('running another workflow is not available here');
    const { eventId } = await ctx.ports.startWorkflow({
      workflowId: input.workflowId,
      payload: payload as Record<string, unknown>,
      wait: input.wait,
      nodeId: ctx.nodeId,
      idempotencyKey: ctx.idempotencyKey,
    });
    if (!input.wait) return { output: { eventId, started: true } };
    const until = input.timeoutMs ? new Date(ctx.ports.clock().getTime() + input.timeoutMs) : undefined;
    return { output: { waitingFor: 'workflow', workflowId: input.workflowId, eventId }, park: until ? { until } : {} };
  },
};
