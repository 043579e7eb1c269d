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
import { setMaxListeners } from 'node:events';
import { ERROR_BRANCH, loopBodies, type RunStep, type TriggerEvent, type WorkflowGraph, type WorkflowNode } from '@flowdesk/contracts';
import { withSpan } from '@flowdesk/telemetry';
import { findCause, NodeFailedError, SsrfBlockedError } from './errors.ts';
import type { EnginePorts } from './ports.ts';
import { TemplateRenderer } from './template.ts';
import type { HttpNodeOptions } from './nodes/http-request.ts';
import { nodeHandlers } from './nodes/index.ts';
import type { ForEachPlan } from './nodes/for-each.ts';
import type { NodeContext, NodeHandler, NodeResult, Resumption } from './nodes/node-handler.ts';
import { abortableSleep, failureKind, resolveRetry, retries, retryDelay } from './retry.ts';

/** Earlier attempts' errors kept on a step: each cut to this many characters (RunStep.attemptErrors). */
const ATTEMPT_ERROR_CHARS = 500;

/**
 * The longest retry delay a step inside a For each's loop body sleeps in memory (its items run
 * concurrently, so one item cannot park the run): a longer one is cut to this (docs/workflow-engine.md, "Retries").
 */
export const LOOP_RETRY_MAX_SLEEP_MS = 60_000;

/** RETRY_PARK_MS's default: a retry delay of 5 s or more parks the run instead of holding it in memory. */
export const DEFAULT_RETRY_PARK_MS = 5_000;

/**
 * A run's own limits. There is no overall wall time (a run may wait for days, parked: "Parking" in
 * docs/workflow-engine.md); each node keeps its own timeout.
 */
export interface RunLimits {
  /** Nodes executed (not counting skipped ones) per run. */
  maxNodesPerRun: number;
  /**
   * Items For each nodes loop over per run, summed over every loop of the run (MAX_LOOP_ITEMS_PER_RUN).
   * Checked before a loop starts: a loop that would pass it fails before its first item, never drops items.
   */
  maxLoopItemsPerRun: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = { maxNodesPerRun: 50, maxLoopItemsPerRun: 1_000 };

export type FinalRunStatus = 'succeeded' | 'failed' | 'skipped' | 'cancelled';

/**
 * A parked run (status `waiting`): the step that parked it, when its timer fires and whether a resume
 * wakes it, and the executed steps not stored yet (the parked one last, status `waiting`), which the
 * caller stores with the run's `waiting` row.
 */
export interface ParkedRun {
  nodeId: string;
  until: Date | null;
  resumable: boolean;
  unsaved: StepCheckpoint[];
}

export interface RunRecord {
  workflowId: string;
  eventId: string;
  status: FinalRunStatus | 'waiting';
  steps: RunStep[];
  warnings: string[];
  error: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Set when status is `waiting`. */
  parked?: ParkedRun;
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
export function stepIdempotencyKey(workflowId: string, eventId: string, nodeId: string, item?: number): string {
  // A step inside a For each's loop body has one key per item; every other step's key is as it always was.
  const of = item === undefined ? `${workflowId}\n${eventId}\n${nodeId}` : `${workflowId}\n${eventId}\n${nodeId}\n${item}`;
  return `fd1-${createHash('sha256').update(of).digest('base64url')}`;
}

/** The key a step's checkpoint is stored and resumed under: the node id, or `<node id>#<item>` inside a loop body. */
export function checkpointKey(nodeId: string, item?: number): string {
  return item === undefined ? nodeId : `${nodeId}#${item}`;
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
   * earlier side effect of the run is not stored yet and a repeat could make it again (an action not
   * `exactlyOnce`), so a resumed run never repeats it. A rejection ends the run unfinished
   * (executeWorkflow rejects): the bus delivers the event again.
   */
  checkpoint?: (steps: StepCheckpoint[]) => Promise<void>;
  /**
   * Outputs of nodes outside this graph, by node id, readable as {{nodes.<id>.…}}: a single step
   * tested against a sample (step-test.ts) sees the last run's outputs of the nodes before it.
   */
  earlierOutputs?: ReadonlyMap<string, unknown>;
  /** Told each executed node's result (the branch it took); the step test answers with it. */
  onResult?: (nodeId: string, result: NodeResult) => void;
  /** The run was woken (TriggerEvent.resume): the parked step `nodeId` executes again with it. */
  wake?: { nodeId: string } & Resumption;
  /** The answer to the webhook's caller, for Respond nodes (NodeContext.respond; process-trigger.ts). */
  respond?: NodeContext['respond'];
  /**
   * A retry delay of at least this many ms parks the run instead of sleeping (RETRY_PARK_MS;
   * docs/workflow-engine.md, "Retries"). Absent: every delay sleeps in memory (a step test).
   */
  retryParkMs?: number;
  /** `{{item}}` / `{{index}}` for the whole walk: a step of a For each body tested alone (Run this step). */
  loopItem?: { item: unknown; index: number };
  /** The resume link of the `resume` Wait `nodeId` of this run, for {{wait.<nodeId>.resumeUrl}} (absent: no server key). */
  resumeUrl?: (nodeId: string) => string;
}

// Each handler is typed by its own node's params (nodes/index.ts); the executor dispatches on node.type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyHandler = NodeHandler<any, any>;

type EdgeState = 'pending' | 'taken' | 'not_taken';

/** One item of a For each: its own renderer ({{item}}, {{index}}, its body nodes' outputs) and the step being run. */
interface ItemScope {
  index: number;
  renderer: TemplateRenderer;
  outputs: Map<string, unknown>;
  step?: RunStep;
}

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

/**
 * The handler table, built once per HTTP node options object (the engine passes the same one to
 * every run; none: the defaults), not once per run.
 */
const defaultHandlers: Record<WorkflowNode['type'], AnyHandler> = nodeHandlers();
const handlerTables = new WeakMap<Partial<HttpNodeOptions>, Record<WorkflowNode['type'], AnyHandler>>();
function handlersFor(httpNode: Partial<HttpNodeOptions> | undefined): Record<WorkflowNode['type'], AnyHandler> {
  if (!httpNode) return defaultHandlers;
  let table = handlerTables.get(httpNode);
  if (!table) handlerTables.set(httpNode, (table = nodeHandlers({ httpNode })));
  return table;
}

/** A node's resolved retry policy, once per node object (the cached graph's); read only when a step fails. */
const retryPolicies = new WeakMap<WorkflowNode, ReturnType<typeof resolveRetry>>();
function retryPolicyOf(node: WorkflowNode): ReturnType<typeof resolveRetry> {
  let policy = retryPolicies.get(node);
  if (!policy) retryPolicies.set(node, (policy = resolveRetry(node.retry)));
  return policy;
}

export async function executeWorkflow(input: ExecuteWorkflowInput): Promise<RunRecord> {
  const { workflow, event, ports } = input;
  const limits = { ...DEFAULT_RUN_LIMITS, ...input.limits };
  const handlers = handlersFor(input.httpNode);
  const started = ports.clock();
  const steps: RunStep[] = [];
  const warnings: string[] = [];
  const outputs = new Map<string, unknown>(input.earlierOutputs ?? []);
  const scope = {
    payload: event.payload,
    headers: event.headers,
    credentials: input.credentials,
    clock: ports.clock,
    // Expressions that are not inline run in the sandbox, counted against the workflow's owner.
    ...(ports.sandbox ? { sandbox: ports.sandbox } : {}),
    ownerId: workflow.ownerId,
    ...(event.rawBody !== undefined ? { rawBody: event.rawBody } : {}),
    resumeUrl: (id: string): { url: string } | { why: string } => {
      const wait = workflow.graph.nodes.find((n) => n.id === id);
      if (wait?.type !== 'wait' || wait.params.mode !== 'resume') return { why: `node "${id}" is not a Wait node in resume mode` };
      if (!input.resumeUrl) return { why: 'resume links before the Wait need the server key (CREDENTIALS_KEY)' };
      return { url: input.resumeUrl(id) };
    },
  };
  const renderer = new TemplateRenderer({
    ...scope,
    nodes: outputs,
    ...(input.loopItem ? { item: input.loopItem.item ?? null, index: input.loopItem.index } : {}),
  });
  // The run's own scope, as against a loop item's (ItemScope).
  const mainOutputs = outputs;
  const mainRenderer = renderer;
  let error: string | null = null;
  let actionsRun = 0;
  let conditionStopped = false;
  let cancelled = false;
  let executed = 0;
  // Items looped over so far (RunLimits.maxLoopItemsPerRun) and the loop-body nodes already counted in `executed`.
  let loopItems = 0;
  const countedBodyNodes = new Set<string>();
  // Executed steps not stored yet, and whether one of them had a side effect that a repeat could make
  // again (an action not `exactlyOnce`): only then is a checkpoint needed before the next action.
  const unsaved: StepCheckpoint[] = [];
  let unsavedEffect = false;
  const storeFailed: { error?: Error } = {};

  // Handed to the nodes as their signal. There is no overall run time any more (nodes have their own
  // timeouts), so nothing aborts it. A For each's items in flight each listen to it at once (the
  // workspace client's calls): no leak warning for more than 10 of them.
  const runSignal = new AbortController().signal;
  setMaxListeners(0, runSignal);
  let parked: ParkedRun | undefined;

  try {
    const plan = planOf(workflow.graph);
    if (plan.problem) throw new NodeFailedError(plan.problem);
    if (plan.reachable.size === 0) warnings.push('the workflow has no nodes after the trigger');

    const edgeState = workflow.graph.edges.map((e): EdgeState => (e.from === 'trigger' ? 'taken' : 'pending'));
    const decided = new Set<string>();
    const queue: string[] = plan.outgoing.get('trigger')!.map((i) => workflow.graph.edges[i]!.to);

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
        const wake = input.wake?.nodeId === id ? input.wake : undefined;
        if (saved && saved.step.status === 'succeeded') {
          // Executed under an earlier claim of this run (its engine died): reuse the stored outcome.
          steps.push(saved.step);
          if (node.type === 'for_each') steps.push(...savedLoopSteps(id));
          outputs.set(id, saved.output);
          result = { output: saved.output, ...(saved.branch ? { branch: saved.branch } : {}) };
        } else {
          if (handler.isAction && unsavedEffect && input.checkpoint) await storeUnsaved();
          // One span per executed node: the HTTP Request node's outbound call and Create Task's
          // workspace-api call become its children (docs/observability.md).
          const at = steps.length;
          result = await withSpan(
            'workflow-engine',
            `node ${node.type}`,
            // A For each runs its loop body after its own step (runLoop), inside its span.
            async () => {
              const r = await runStep(node, handler, undefined, wake);
              return r && node.type === 'for_each' && steps[at]!.status === 'succeeded' ? runLoop(node, steps[at]!, r.output as ForEachPlan) : r;
            },
            { attributes: { 'flowdesk.node.id': node.id, 'flowdesk.node.type': node.type } },
          );
          if (result) {
            unsaved.push({ step: steps[at]!, output: result.output, ...(result.branch ? { branch: result.branch } : {}) });
            if (handler.isAction && !handler.exactlyOnce) unsavedEffect = true;
          }
        }
        if (result) input.onResult?.(id, result);
        if (!result) break; // the step failed and its node says fail the run: stop at the first failure
        if (result.park) {
          // Parking: the walk stops here; the caller stores the unsaved steps (this one `waiting`) and the run's row.
          const p = result.park;
          const until = p.until ?? p.timeoutAt ?? null;
          parked = { nodeId: id, until, resumable: p.resumable === true, unsaved: unsaved.splice(0) };
          break;
        }
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
  }
  if (storeFailed.error) throw storeFailed.error;

  for (const w of renderer.warnings) if (!warnings.includes(w)) warnings.push(w);
  const finished = ports.clock();
  const status: RunRecord['status'] = cancelled
    ? 'cancelled'
    : error
      ? 'failed'
      : parked
        ? 'waiting'
        : actionsRun === 0 && conditionStopped
          ? 'skipped'
          : 'succeeded';
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
    ...(parked && status === 'waiting' ? { parked } : {}),
  };

  /** Stores the executed steps not stored yet; a failure ends the run unfinished (rethrown after the walk). */
  async function storeUnsaved(): Promise<void> {
    // Cleared before the write: a side effect of a concurrent loop item recorded meanwhile sets it again.
    unsavedEffect = false;
    try {
      await input.checkpoint!(unsaved.splice(0));
    } catch (err) {
      storeFailed.error = err instanceof Error ? err : new Error(String(err));
      throw err;
    }
  }

  /**
   * Renders, records and executes one node; returns null (and sets `error`) when it failed. Inside a
   * loop body `item` gives the item's renderer and outputs, and receives the step; `resumed` tells a
   * parked step how its run was woken.
   */
  async function runStep(node: WorkflowNode, handler: AnyHandler, item?: ItemScope, resumed?: Resumption): Promise<NodeResult | null> {
    const renderer = item?.renderer ?? mainRenderer;
    const outputs = item?.outputs ?? mainOutputs;
    const stepStart = ports.clock();
    const before = renderer.warnings.length;
    // Expressions ({{= … }}) evaluate first; one that fails (syntax, time, size) fails this node, recorded like any other failure.
    const preparing = renderer.prepare(node.params, () => handler.render(node.params, renderer));
    const expressionError = preparing
      ? await preparing.then(
          () => null,
          (err: unknown) => err as Error,
        )
      : null;
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
      ...(item ? { item: item.index } : {}),
    };
    steps.push(step);
    if (item) item.step = step;
    try {
      if (expressionError) return stepFailed(node, step, expressionError, outputs);
      // The node's retry policy (docs/workflow-engine.md, "Retries"): the same rendered input and key on
      // every attempt. A step executed again after a resume goes on counting from its checkpoint.
      // The policy and whether a repeat is safe are read only when an attempt fails (not on the hot path).
      const earlier = input.resume?.get(checkpointKey(node.id, item?.index))?.step;
      const errors: string[] = earlier ? [...(earlier.attemptErrors ?? []), ...(earlier.error ? [earlier.error] : [])].slice(-9) : [];
      // A parked step that did not fail (a Wait resumed) made no attempt before this one.
      for (let attempt = (earlier?.attempts ?? (earlier?.error ? 1 : 0)) + 1; ; attempt++) {
        try {
          const result = await handler.execute(rendered, {
            ports,
            ownerId: workflow.ownerId,
            nodeId: node.id,
            workflowId: workflow.id,
            signal: runSignal,
            warn: (m: string) => addWarning(node.id, m),
            ...(resumed && !earlier?.retryAt
              ? { resumed: { resumedBy: resumed.resumedBy, at: resumed.at, ...(resumed.body !== undefined ? { body: resumed.body } : {}) } }
              : {}),
            ...(input.respond ? { respond: input.respond } : {}),
            ...(handler.isAction ? { idempotencyKey: stepIdempotencyKey(workflow.id, event.eventId, node.id, item?.index) } : {}),
          });
          noteAttempts(step, attempt, errors);
          outputs.set(node.id, result.output);
          step.output = result.recorded ?? result.output;
          if (result.park) step.status = 'waiting';
          return result;
        } catch (err) {
          noteAttempts(step, attempt, errors);
          const policy = retryPolicyOf(node);
          const safe = handler.retrySafe ? handler.retrySafe(rendered) : !handler.isAction;
          const again = safe && attempt < policy.attempts && retries(policy, failureKind(err));
          if (!again) return stepFailed(node, step, err, outputs);
          if (input.cancelled?.()) return cancelledBeforeRetry(step, err);
          // A step parked for its retry counts its backoff on; a handled failure's checkpoint starts it again.
          const n = earlier?.retryAt ? attempt : attempt - (earlier?.attempts ?? 0);
          let delay = retryDelay(policy, n, err, ports.random ?? Math.random, ports.clock().getTime());
          if (input.retryParkMs !== undefined && delay >= input.retryParkMs && !item) return parkForRetry(node, step, err, attempt, errors, delay);
          if (item) delay = Math.min(delay, LOOP_RETRY_MAX_SLEEP_MS);
          const cancelSignal = input.cancelSignal?.();
          try {
            await (ports.sleep ?? abortableSleep)(delay, cancelSignal ?? runSignal);
          } catch (sleepErr) {
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

  /**
   * A long retry delay (ExecuteWorkflowInput.retryParkMs): the step is recorded `waiting` with its
   * attempts so far, its errors and `retryAt`, and parks the run until then; the woken run executes it
   * again (ctx.resumed is not set: it is the same attempt series), counting on from the checkpoint.
   */
  function parkForRetry(node: WorkflowNode, step: RunStep, err: unknown, attempt: number, errors: string[], delay: number): NodeResult {
    const until = new Date(ports.clock().getTime() + delay);
    step.status = 'waiting';
    step.error = messageOf(err);
    step.attempts = attempt;
    step.attemptErrors = [...errors];
    step.retryAt = until.toISOString();
    if (err instanceof NodeFailedError && err.output !== undefined) step.output = err.output;
    ports.log.info({ workflowId: workflow.id, nodeId: node.id, attempt, retryAt: step.retryAt }, 'workflow node parked until its retry');
    return { output: step.output, park: { until } };
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
  function stepFailed(node: WorkflowNode, step: RunStep, err: unknown, outputs = mainOutputs): NodeResult | null {
    if (findCause(err, SsrfBlockedError)) ports.metrics?.ssrfRefused();
    step.status = 'failed';
    step.error = messageOf(err);
    if (err instanceof NodeFailedError) step.output = err.output;
    ports.log.warn({ workflowId: workflow.id, nodeId: node.id, err: step.error }, 'workflow node failed');
    // The node's "on error" (nodes/define.ts): the run's end (default), or the error as its output.
    const onError = node.onError ?? 'fail';
    if (onError === 'fail') {
      error = `node "${node.id}" failed${step.attempts ? ` after ${step.attempts} attempts` : ''}: ${step.error}`;
      return null;
    }
    const output = { error: step.error, ...(step.output !== null && step.output !== undefined ? { output: step.output } : {}) };
    outputs.set(node.id, output);
    step.output = output;
    return { output, ...(onError === 'branch' ? { branch: ERROR_BRANCH } : {}) };
  }

  /**
   * Runs a For each's loop body once per item (docs/workflow-engine.md, "For each"): items in order,
   * `concurrency` at a time; the first item that fails the run stops the loop (items in flight
   * finish). Replaces the For each's output with `{ results, count }` and continues on `done`.
   */
  async function runLoop(node: WorkflowNode, step: RunStep, loop: ForEachPlan): Promise<NodeResult | null> {
    const body = planOf(workflow.graph).loops.get(node.id)!;
    const { items } = loop;
    if (loopItems + items.length > limits.maxLoopItemsPerRun)
      return stepFailed(
        node,
        step,
        new NodeFailedError(
          `the list has ${items.length} items and this run looped over ${loopItems} before: more than the run's limit of ${limits.maxLoopItemsPerRun} loop items (MAX_LOOP_ITEMS_PER_RUN); no item ran`,
        ),
      );
    loopItems += items.length;
    const results: unknown[] = items.map(() => null);
    let next = 0;
    let stopped: 'failed' | 'end' | null = null;
    let failedAt = -1;
    const worker = async (): Promise<void> => {
      while (stopped === null && next < items.length) {
        if (input.cancelled?.()) {
          cancelled = true;
          stopped = 'failed';
          return;
        }
        const index = next++;
        const outcome = await runItem(body, items[index], index);
        if (outcome === 'failed' || outcome === 'end') {
          if (stopped === null) failedAt = index;
          stopped ??= outcome;
          return;
        }
        results[index] = outcome.last;
      }
    };
    await Promise.all(Array.from({ length: Math.min(loop.concurrency, items.length) }, worker));
    const output = { results, count: items.length };
    mainOutputs.set(node.id, output);
    step.output = output;
    if (stopped === 'failed') {
      if (cancelled) return null;
      step.status = 'failed';
      step.error = `item ${failedAt}: ${error ?? 'failed'}`;
      error = `node "${node.id}" stopped at item ${failedAt}: ${error ?? 'failed'}`;
      return null;
    }
    return { output, branch: 'done', ...(stopped === 'end' ? { end: true } : {}) };
  }

  /**
   * One item's walk of a loop body: the main walk's rules (OR-joins, branches, error paths, reused
   * checkpoints) on the body's nodes, each step recorded with the item's index and checkpointed under
   * `<node id>#<item>`. Answers the last executed node's output, or how the item stopped the loop.
   */
  async function runItem(body: LoopPlan, value: unknown, index: number): Promise<{ last: unknown } | 'failed' | 'end'> {
    const edges = workflow.graph.edges;
    const plan = planOf(workflow.graph);
    const itemOutputs = new Map(mainOutputs);
    const item: ItemScope = { index, outputs: itemOutputs, renderer: new TemplateRenderer({ ...scope, nodes: itemOutputs, item: value ?? null, index }) };
    const state = new Map<number, EdgeState>(body.entry.map((i) => [i, 'taken']));
    const queue = body.entry.map((i) => edges[i]!.to);
    const decided = new Set<string>();
    let last: unknown = null;
    while (queue.length > 0) {
      const id = queue.shift()!;
      if (decided.has(id)) continue;
      const incoming = plan.incoming.get(id) ?? [];
      if (incoming.some((i) => (state.get(i) ?? 'pending') === 'pending')) continue;
      decided.add(id);
      const node = plan.nodes.get(id)!;
      const out = plan.outgoing.get(id) ?? [];
      if (!incoming.some((i) => state.get(i) === 'taken')) {
        steps.push({ ...skippedStep(node, ports.clock()), item: index });
        for (const i of out) state.set(i, 'not_taken');
      } else {
        if (!countedBodyNodes.has(id)) {
          // A body node counts once against maxNodesPerRun; its executions per item are bounded by the item limit.
          countedBodyNodes.add(id);
          if (++executed > limits.maxNodesPerRun) throw new NodeFailedError(`the run exceeded its limit of ${limits.maxNodesPerRun} executed nodes`);
        }
        const handler = handlers[node.type];
        const saved = input.resume?.get(checkpointKey(id, index));
        let result: NodeResult | null;
        if (saved && saved.step.status === 'succeeded') {
          steps.push(saved.step);
          itemOutputs.set(id, saved.output);
          result = { output: saved.output, ...(saved.branch ? { branch: saved.branch } : {}) };
        } else {
          if (handler.isAction && unsavedEffect && input.checkpoint) await storeUnsaved();
          result = await withSpan('workflow-engine', `node ${node.type}`, () => runStep(node, handler, item), {
            attributes: { 'flowdesk.node.id': node.id, 'flowdesk.node.type': node.type, 'flowdesk.loop.item': index },
          });
          if (result) {
            unsaved.push({ step: item.step!, output: result.output, ...(result.branch ? { branch: result.branch } : {}) });
            if (handler.isAction && !handler.exactlyOnce) unsavedEffect = true;
          }
        }
        if (!result) return 'failed';
        if (handler.isAction) actionsRun++;
        last = result.output;
        if (result.end) return 'end';
        for (const i of out) {
          const edge = edges[i]!;
          const taken = result.branch === ERROR_BRANCH ? edge.branch === ERROR_BRANCH : edge.branch === undefined || edge.branch === result.branch;
          state.set(i, taken ? 'taken' : 'not_taken');
        }
      }
      for (const i of out) queue.push(edges[i]!.to);
    }
    return { last };
  }

  /** A completed For each reused from a checkpoint: its body's steps stored with it, in item order. */
  function savedLoopSteps(loopId: string): RunStep[] {
    const body = planOf(workflow.graph).loops.get(loopId);
    if (!body || !input.resume) return [];
    return [...input.resume.values()]
      .map((c) => c.step)
      .filter((st) => st.item !== undefined && body.nodes.has(st.nodeId))
      .sort((a, b) => a.item! - b.item!);
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

/** A For each's loop body (loopBodies in contracts): its nodes and the `each` edges into it. */
interface LoopPlan {
  nodes: Set<string>;
  entry: number[];
}

interface GraphPlan {
  nodes: Map<string, WorkflowNode>;
  /**
   * Edge indexes leaving each node ('trigger' included), in edge order; a For each's `each` edges are
   * left out (its body runs in runLoop, never in the main walk).
   */
  outgoing: Map<string, number[]>;
  loops: Map<string, LoopPlan>;
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
  const loops = new Map<string, LoopPlan>();
  if (!problem) {
    const found = loopBodies(graph);
    problem = found.problem;
    for (const body of found.bodies) {
      const entry = outgoing.get(body.loopId) ?? [];
      loops.set(body.loopId, { nodes: body.nodes, entry: entry.filter((i) => graph.edges[i]!.branch === 'each') });
      outgoing.set(
        body.loopId,
        entry.filter((i) => graph.edges[i]!.branch !== 'each'),
      );
    }
  }
  return { nodes, outgoing, incoming, reachable, loops, problem };
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
