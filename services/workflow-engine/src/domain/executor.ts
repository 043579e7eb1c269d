/**
 * Runs one workflow graph for one trigger event and returns the run record. Pure orchestration:
 * every effect goes through the ports, so the bus consumer (idempotency, persistence) and the
 * workspace-api client are wired in by adapters.
 *
 * Walk: breadth-first from 'trigger' in edge order; each node at most once. Join (OR-join): a
 * node waits until every edge into it from a node reachable from the trigger is decided; it runs
 * when at least one of those edges was taken, and is recorded as `skipped` when none was (its
 * predecessors were skipped or a condition took the other branch). A skipped node passes
 * "not taken" down all its edges.
 */
import { createHash } from 'node:crypto';
import { ERROR_BRANCH, type RunStep, type TriggerEvent, type WorkflowGraph, type WorkflowNode } from '@flowdesk/contracts';
import { withSpan } from '@flowdesk/telemetry';
import { findCause, NodeFailedError, SsrfBlockedError } from './errors.ts';
import type { EnginePorts } from './ports.ts';
import { TemplateRenderer } from './template.ts';
import type { HttpNodeOptions } from './nodes/http-request.ts';
import { nodeHandlers } from './nodes/index.ts';
import type { NodeHandler, NodeResult } from './nodes/node-handler.ts';
import { abortableSleep, failureKind, resolveRetry, retries, retryDelay } from './retry.ts';

/** Earlier attempts' errors kept on a step: each cut to this many characters (RunStep.attemptErrors). */
const ATTEMPT_ERROR_CHARS = 500;

export interface RunLimits {
  /** Nodes executed (not counting skipped ones) per run. */
  maxNodesPerRun: number;
  /** Wall time of the whole run; the node running when it passes is aborted and fails. */
  runTimeoutMs: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = { maxNodesPerRun: 50, runTimeoutMs: 5 * 60_000 };

export type FinalRunStatus = 'succeeded' | 'failed' | 'skipped' | 'cancelled';

export interface RunRecord {
  workflowId: string;
  eventId: string;
  status: FinalRunStatus;
  steps: RunStep[];
  warnings: string[];
  error: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

/**
 * One executed step's checkpoint (docs/workflow-engine.md, "Durable runs"): the step as recorded, the
 * output later nodes read and a condition's branch. A resumed run reuses it instead of executing the
 * node again.
 */
export interface StepCheckpoint {
  step: RunStep;
  output: unknown;
  branch?: string;
}

/**
 * The idempotency key of one side-effecting step: deterministic in (workflow, trigger event, node), so
 * the step executed again (a resumed run, a retry) sends the same key. Hashed: a receiver outside
 * Flowdesk learns no workflow or event id. `fd1-` + 43 base64url characters.
 */
export function stepIdempotencyKey(workflowId: string, eventId: string, nodeId: string): string {
  return `fd1-${createHash('sha256').update(`${workflowId}\n${eventId}\n${nodeId}`).digest('base64url')}`;
}

export interface ExecuteWorkflowInput {
  workflow: { id: string; ownerId: string; graph: WorkflowGraph };
  event: TriggerEvent;
  ports: EnginePorts;
  limits?: Partial<RunLimits>;
  httpNode?: Partial<HttpNodeOptions>;
  /** Plaintext of the credentials the graph refers to, by name (docs/credentials.md). */
  credentials?: ReadonlyMap<string, string>;
  /** True once a person cancelled the run: it stops before its next step (docs/workflow-engine.md). */
  cancelled?: () => boolean;
  /** A signal aborted when a person cancels the run (asked for only before a retry's delay, which it interrupts). */
  cancelSignal?: () => AbortSignal;
  /** Checkpoints of an earlier claim of this run, by node id: those steps are reused, not executed. */
  resume?: ReadonlyMap<string, StepCheckpoint>;
  /**
   * Stores executed steps durably (batched across runs). Called before a side-effecting step when an
   * earlier side effect of the run is not stored yet, so a resumed run never repeats it. A rejection
   * ends the run unfinished (executeWorkflow rejects): the bus delivers the event again.
   */
  checkpoint?: (steps: StepCheckpoint[]) => Promise<void>;
}

// Each handler is typed by its own node's params (nodes/index.ts); the executor dispatches on node.type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyHandler = NodeHandler<any, any>;

type EdgeState = 'pending' | 'taken' | 'not_taken';

/**
 * Plans per graph object: the engine's definition cache hands every run of one workflow version the
 * same graph, so the checks and indexes are built once per version, not once per run (a plan is
 * only read).
 */
const plans = new WeakMap<WorkflowGraph, ReturnType<typeof planGraph>>();
function planOf(graph: WorkflowGraph): ReturnType<typeof planGraph> {
  let plan = plans.get(graph);
  if (!plan) plans.set(graph, (plan = planGraph(graph)));
  return plan;
}

export async function executeWorkflow(input: ExecuteWorkflowInput): Promise<RunRecord> {
  const { workflow, event, ports } = input;
  const limits = { ...DEFAULT_RUN_LIMITS, ...input.limits };
  const handlers: Record<WorkflowNode['type'], AnyHandler> = nodeHandlers({ httpNode: input.httpNode });
  const started = ports.clock();
  const steps: RunStep[] = [];
  const warnings: string[] = [];
  const outputs = new Map<string, unknown>();
  const renderer = new TemplateRenderer({ payload: event.payload, headers: event.headers, nodes: outputs, credentials: input.credentials, clock: ports.clock });
  let error: string | null = null;
  let actionsRun = 0;
  let conditionStopped = false;
  let cancelled = false;
  // Executed steps not stored yet, and whether one of them had a side effect.
  const unsaved: StepCheckpoint[] = [];
  let unsavedEffect = false;
  const storeFailed: { error?: Error } = {};

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new NodeFailedError(`the run exceeded its time limit of ${limits.runTimeoutMs} ms`)), limits.runTimeoutMs);

  try {
    const plan = planOf(workflow.graph);
    if (plan.problem) throw new NodeFailedError(plan.problem);
    if (plan.reachable.size === 0) warnings.push('the workflow has no nodes after the trigger');

    const edgeState = workflow.graph.edges.map((e): EdgeState => (e.from === 'trigger' ? 'taken' : 'pending'));
    const decided = new Set<string>();
    const queue: string[] = plan.outgoing.get('trigger')!.map((i) => workflow.graph.edges[i]!.to);
    let executed = 0;

    while (queue.length > 0) {
      // A step boundary: a cancelled run stops here; the step in flight (if any) has finished.
      if (input.cancelled?.()) {
        cancelled = true;
        break;
      }
      const id = queue.shift()!;
      if (decided.has(id)) continue;
      const incoming = plan.incoming.get(id) ?? [];
      if (incoming.some((i) => edgeState[i] === 'pending')) continue; // a later predecessor will re-enqueue it
      decided.add(id);
      const node = plan.nodes.get(id)!;
      const out = plan.outgoing.get(id) ?? [];

      if (!incoming.some((i) => edgeState[i] === 'taken')) {
        steps.push(skippedStep(node, ports.clock()));
        for (const i of out) edgeState[i] = 'not_taken';
      } else {
        if (++executed > limits.maxNodesPerRun) throw new NodeFailedError(`the run exceeded its limit of ${limits.maxNodesPerRun} executed nodes`);
        const handler = handlers[node.type];
        const saved = input.resume?.get(id);
        let result: NodeResult | null;
        if (saved && saved.step.status === 'succeeded') {
          // Executed under an earlier claim of this run (its engine died): reuse the stored outcome.
          steps.push(saved.step);
          outputs.set(id, saved.output);
          result = { output: saved.output, ...(saved.branch ? { branch: saved.branch } : {}) };
        } else {
          if (handler.isAction && unsavedEffect && input.checkpoint) await storeUnsaved();
          // One span per executed node: the HTTP Request node's outbound call and Create Task's
          // workspace-api call become its children (docs/observability.md).
          result = await withSpan('workflow-engine', `node ${node.type}`, () => runStep(node, handler), {
            attributes: { 'flowdesk.node.id': node.id, 'flowdesk.node.type': node.type },
          });
          if (result) {
            unsaved.push({ step: steps[steps.length - 1]!, output: result.output, ...(result.branch ? { branch: result.branch } : {}) });
            if (handler.isAction) unsavedEffect = true;
          }
        }
        if (!result) break; // the step failed and its node says fail the run: stop at the first failure
        if (handler.isAction) actionsRun++;
        // A condition's false or a switch's branch with no edge, before any action: the run is skipped.
        if (result.branch !== undefined && result.branch !== 'true' && !out.some((i) => workflow.graph.edges[i]!.branch === result.branch) && actionsRun === 0)
          conditionStopped = true;
        if (result.end) break; // a Stop node: nothing else runs
        for (const i of out) {
          const edge = workflow.graph.edges[i]!;
          // A failure on the error path takes only the node's `error` edges; otherwise those are not taken.
          const taken = result.branch === ERROR_BRANCH ? edge.branch === ERROR_BRANCH : edge.branch === undefined || edge.branch === result.branch;
          edgeState[i] = taken ? 'taken' : 'not_taken';
        }
      }
      for (const i of out) queue.push(workflow.graph.edges[i]!.to);
    }
  } catch (err) {
    error ??= (err as Error).message;
  } finally {
    clearTimeout(timer);
  }
  if (storeFailed.error) throw storeFailed.error;

  for (const w of renderer.warnings) if (!warnings.includes(w)) warnings.push(w);
  const finished = ports.clock();
  const status: FinalRunStatus = cancelled ? 'cancelled' : error ? 'failed' : actionsRun === 0 && conditionStopped ? 'skipped' : 'succeeded';
  ports.log.info({ workflowId: workflow.id, eventId: event.eventId, status, steps: steps.length }, 'workflow run finished');
  return {
    workflowId: workflow.id,
    eventId: event.eventId,
    status,
    steps,
    warnings,
    error,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
  };

  /** Stores the executed steps not stored yet; a failure ends the run unfinished (rethrown after the walk). */
  async function storeUnsaved(): Promise<void> {
    try {
      await input.checkpoint!(unsaved.splice(0));
      unsavedEffect = false;
    } catch (err) {
      storeFailed.error = err instanceof Error ? err : new Error(String(err));
      throw err;
    }
  }

  /** Renders, records and executes one node; returns null (and sets `error`) when it failed. */
  async function runStep(node: WorkflowNode, handler: AnyHandler): Promise<NodeResult | null> {
    const stepStart = ports.clock();
    const before = renderer.warnings.length;
    // Expressions ({{= … }}) evaluate first; one that fails (syntax, time, size) fails this node, recorded like any other failure.
    const expressionError = await renderer
      .prepare(node.params, () => handler.render(node.params, renderer))
      .then(
        () => null,
        (err: unknown) => err as Error,
      );
    const rendered = expressionError ? null : (handler.render(node.params, renderer) as unknown);
    // Template warnings name the node they came from, so the runs panel points at the right box.
    renderer.warnings.splice(before).forEach((w) => addWarning(node.id, w));
    const step: RunStep = {
      nodeId: node.id,
      type: node.type,
      status: 'succeeded',
      input: expressionError ? null : handler.mask(rendered),
      output: null,
      error: null,
      startedAt: stepStart.toISOString(),
      durationMs: 0,
    };
    steps.push(step);
    try {
      if (expressionError) return stepFailed(node, step, expressionError);
      // The node's retry policy (docs/workflow-engine.md, "Retries"): the same rendered input and key on
      // every attempt. A step executed again after a resume goes on counting from its checkpoint.
      const policy = resolveRetry(node.retry);
      const safe = handler.retrySafe ? handler.retrySafe(rendered) : !handler.isAction;
      const earlier = input.resume?.get(node.id)?.step;
      const earlierErrors = earlier ? [...(earlier.attemptErrors ?? []), ...(earlier.error ? [earlier.error] : [])] : [];
      const errors: string[] = earlierErrors.slice(-9);
      for (let attempt = (earlier?.attempts ?? (earlier ? 1 : 0)) + 1; ; attempt++) {
        try {
          const result = await untilDeadline(
            handler.execute(rendered, {
              ports,
              ownerId: workflow.ownerId,
              signal: deadline.signal,
              warn: (m: string) => addWarning(node.id, m),
              ...(handler.isAction ? { idempotencyKey: stepIdempotencyKey(workflow.id, event.eventId, node.id) } : {}),
            }),
            deadline.signal,
          );
          noteAttempts(step, attempt, errors);
          outputs.set(node.id, result.output);
          step.output = result.recorded ?? result.output;
          return result;
        } catch (err) {
          noteAttempts(step, attempt, errors);
          const again = safe && attempt < policy.attempts && !deadline.signal.aborted && retries(policy, failureKind(err));
          if (!again) return stepFailed(node, step, err);
          if (input.cancelled?.()) return cancelledBeforeRetry(step, err);
          const delay = retryDelay(policy, attempt - (earlier?.attempts ?? 0), err, ports.random ?? Math.random, ports.clock().getTime());
          const cancelSignal = input.cancelSignal?.();
          const signal = cancelSignal ? AbortSignal.any([deadline.signal, cancelSignal]) : deadline.signal;
          try {
            await (ports.sleep ?? abortableSleep)(delay, signal);
          } catch (sleepErr) {
            if (deadline.signal.aborted) return stepFailed(node, step, deadline.signal.reason);
            if (cancelSignal?.aborted) return cancelledBeforeRetry(step, err);
            throw sleepErr;
          }
          errors.push(messageOf(err).slice(0, ATTEMPT_ERROR_CHARS));
          if (errors.length > 9) errors.shift();
        }
      }
    } finally {
      step.durationMs = ports.clock().getTime() - stepStart.getTime();
      ports.metrics?.nodeFinished(node.type, step.status, step.durationMs / 1000);
    }
  }

  /** Cancelled while a step waited to be retried: the step keeps its last failure, the run ends cancelled. */
  function cancelledBeforeRetry(step: RunStep, err: unknown): null {
    step.status = 'failed';
    step.error = messageOf(err);
    cancelled = true;
    return null;
  }

  /** Records the attempt count and the earlier attempts' errors on a step that took more than one. */
  function noteAttempts(step: RunStep, attempt: number, errors: string[]): void {
    if (attempt <= 1) return;
    step.attempts = attempt;
    step.attemptErrors = [...errors];
  }

  /**
   * The one place where a failed step's consequence is decided, after the node's retry policy gave up:
   * the node's "on error" fails the run (null), or continues with the error as the output, or follows
   * the error branch.
   */
  function stepFailed(node: WorkflowNode, step: RunStep, err: unknown): NodeResult | null {
    if (findCause(err, SsrfBlockedError)) ports.metrics?.ssrfRefused();
    step.status = 'failed';
    step.error = messageOf(err);
    if (err instanceof NodeFailedError) step.output = err.output;
    ports.log.warn({ workflowId: workflow.id, nodeId: node.id, err: step.error }, 'workflow node failed');
    // The node's "on error" (nodes/define.ts): the run's end (default), or the error as its output.
    // The run's own deadline is never a node's error to handle.
    const onError = node.onError ?? 'fail';
    if (onError === 'fail' || deadline.signal.aborted) {
      error = `node "${node.id}" failed${step.attempts ? ` after ${step.attempts} attempts` : ''}: ${step.error}`;
      return null;
    }
    const output = { error: step.error, ...(step.output !== null && step.output !== undefined ? { output: step.output } : {}) };
    outputs.set(node.id, output);
    step.output = output;
    return { output, ...(onError === 'branch' ? { branch: ERROR_BRANCH } : {}) };
  }

  function addWarning(nodeId: string, message: string): void {
    const text = `node "${nodeId}": ${message}`;
    if (!warnings.includes(text)) warnings.push(text);
  }
}

function messageOf(err: unknown): string {
  return (err instanceof Error && err.message) || String(err);
}

function skippedStep(node: WorkflowNode, at: Date): RunStep {
  return { nodeId: node.id, type: node.type, status: 'skipped', input: null, output: null, error: null, startedAt: at.toISOString(), durationMs: 0 };
}

/** Rejects with the abort reason when the run's deadline passes, even if the node ignores its signal. */
function untilDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

interface GraphPlan {
  nodes: Map<string, WorkflowNode>;
  /** Edge indexes leaving each node ('trigger' included), in edge order. */
  outgoing: Map<string, number[]>;
  /** Edge indexes entering each node, only from sources reachable from the trigger. */
  incoming: Map<string, number[]>;
  reachable: Set<string>;
  problem: string | null;
}

/**
 * Indexes the graph and re-checks what workspace-api validates on save (unknown nodes, cycles):
 * the engine must not hang or loop on a graph stored before a validation rule existed.
 */
export function planGraph(graph: WorkflowGraph): GraphPlan {
  const nodes = new Map<string, WorkflowNode>();
  const outgoing = new Map<string, number[]>([['trigger', []]]);
  const incoming = new Map<string, number[]>();
  let problem: string | null = null;
  for (const n of graph.nodes) {
    if (nodes.has(n.id) || n.id === 'trigger') problem ??= `the graph has two nodes with id "${n.id}"`;
    nodes.set(n.id, n);
  }
  graph.edges.forEach((e, i) => {
    if (!nodes.has(e.to) || (e.from !== 'trigger' && !nodes.has(e.from))) problem ??= `the graph has an edge ${e.from} -> ${e.to} to or from an unknown node`;
    outgoing.set(e.from, [...(outgoing.get(e.from) ?? []), i]);
  });
  const reachable = new Set<string>();
  const stack = ['trigger'];
  while (stack.length) {
    for (const i of outgoing.get(stack.pop()!) ?? []) {
      const to = graph.edges[i]!.to;
      if (!reachable.has(to)) {
        reachable.add(to);
        stack.push(to);
      }
    }
  }
  graph.edges.forEach((e, i) => {
    if (e.from === 'trigger' || reachable.has(e.from)) incoming.set(e.to, [...(incoming.get(e.to) ?? []), i]);
  });
  if (!problem && hasCycle(reachable, outgoing, graph)) problem = 'the graph has a cycle; a run must end';
  return { nodes, outgoing, incoming, reachable, problem };
}

function hasCycle(reachable: Set<string>, outgoing: Map<string, number[]>, graph: WorkflowGraph): boolean {
  const state = new Map<string, 1 | 2>();
  const visit = (id: string): boolean => {
    state.set(id, 1);
    for (const i of outgoing.get(id) ?? []) {
      const to = graph.edges[i]!.to;
      if (state.get(to) === 1) return true;
      if (!state.has(to) && visit(to)) return true;
    }
    state.set(id, 2);
    return false;
  };
  return [...reachable].some((id) => !state.has(id) && visit(id));
}
