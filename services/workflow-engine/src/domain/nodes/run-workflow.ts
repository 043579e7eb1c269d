/**
 * Run workflow node (docs/workflow-engine.md, "Run workflow"): starts another of the owner's
 * workflows through EnginePorts.startWorkflow (a trigger event whose id is derived from the step's
 * idempotency key, so a step executed again starts the child once) and, when waiting, parks the run
 * until the child's outcome resumes it (process-trigger.ts notifyParent) or the timeout passes.
 */
import { WEBHOOK_REPLY_MAX_BODY, type NodeParams } from '@flowdesk/contracts';
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
  outputOmitted?: string;
}

/** The largest child output a parent's Run workflow node receives (as the resume body; above it: null and `outputOmitted`). */
export const CHILD_OUTPUT_MAX_BYTES = WEBHOOK_REPLY_MAX_BODY;

/**
 * A finished child run as its parent's Run workflow node outputs it (the resume body): the last
 * succeeded step's output. Built where the child ends: its own handler, the parent's park look-up,
 * and a cancel of the child while it is parked (run-store.ts).
 */
export function childResult(run: {
  id: string | null;
  status?: string;
  steps?: readonly { status: string; output: unknown }[];
  error?: string | null;
}): ChildResult {
  let output = run.steps?.findLast((s) => s.status === 'succeeded')?.output ?? null;
  const tooBig = Buffer.byteLength(JSON.stringify(output) ?? 'null') > CHILD_OUTPUT_MAX_BYTES;
  if (tooBig) output = null;
  return {
    runId: run.id,
    status: run.status ?? 'failed',
    output,
    error: run.error ?? null,
    ...(tooBig ? { outputOmitted: `larger than ${CHILD_OUTPUT_MAX_BYTES} bytes` } : {}),
  };
}

/** Why a child's outcome fails the parent's step: a cancelled child says so, a failed one gives its error. */
const childFailure = (r: ChildResult): string =>
  r.status === 'cancelled' ? `child run ${r.runId} was cancelled` : `the workflow's run ${r.status}${r.error ? `: ${r.error}` : ''}`;

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
      if (result.status !== 'succeeded' && result.status !== 'skipped') throw new NodeFailedError(childFailure(result), result);
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
