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
import { disabledBranch, ERROR_BRANCH, loopBodies, type RunStep, type TriggerEvent, type WorkflowGraph, type WorkflowNode } from '@flowdesk/contracts';
import { withSpan } from '@flowdesk/telemetry';
import { findCause, NodeFailedError, SsrfBlockedError } from './errors.ts';
import type { RunPorts } from './ports.ts';
import { TemplateRenderer } from './template.ts';
import type { HttpNodeOptions } from './nodes/http-request.ts';
import type { SlackNodeOptions } from './nodes/slack.ts';
import type { TelegramNodeOptions } from './nodes/telegram.ts';
import { nodeHandlers } from './nodes/index.ts';
import type { ForEachPlan } from './nodes/for-each.ts';
import type { NodeHandler, NodeResult, ParkRequest, Resumption, SubSteps } from './nodes/node-handler.ts';
import { abortableSleep, failureKind, resolveRetry, retries, retryDelay } from './retry.ts';
import { SandboxThrottled } from './sandbox-port.ts';
import { checkpointKey, DEFAULT_RUN_LIMITS, type ParkedRun, type RunLimits, type RunRecord, type StepCheckpoint } from './types.ts';

export { checkpointKey, DEFAULT_RUN_LIMITS, type FinalRunStatus, type ParkedRun, type RunLimits, type RunRecord, type StepCheckpoint } from './types.ts';

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
 * The idempotency key of one side-effecting step: deterministic in (workflow, trigger event, node), so
 * the step executed again (a resumed run, a retry) sends the same key. Hashed: a receiver outside
 * Flowdesk learns no workflow or event id. `fd1-` + 43 base64url characters.
 */
export function stepIdempotencyKey(workflowId: string, eventId: string, nodeId: string, item?: number): string {
  // A step inside a For each's loop body has one key per item; every other step's key is as it always was.
  const of = item === undefined ? `${workflowId}\n${eventId}\n${nodeId}` : `${workflowId}\n${eventId}\n${nodeId}\n${item}`;
  return `fd1-${createHash('sha256').update(of).digest('base64url')}`;
}

/**
 * One run of one workflow for one trigger event. `workflow`, `event` and `ports` are all a run needs;
 * each group after them is something a caller asks for: tuning, a resume, a cancel switch, a step test.
 * What the run reaches outside itself, its own dependencies included (the credentials' plaintext,
 * the webhook caller's answer, the checkpoint store), is in `ports` (RunPorts, domain/ports.ts).
 */
export interface ExecuteWorkflowInput {
  workflow: { id: string; ownerId: string; graph: WorkflowGraph };
  event: TriggerEvent;
  ports: RunPorts;
  options?: RunOptions;
  resume?: RunResume;
  control?: RunControl;
  stepTest?: StepTestScope;
  dryRun?: DryRunScope;
}

/** The run's bounds and tuning; each left out takes its default. */
export interface RunOptions {
  limits?: Partial<RunLimits>;
  httpNode?: Partial<HttpNodeOptions>;
  /** Tests only (never set by the engine): the Slack node's Web API on loopback. */
  slackNode?: Partial<SlackNodeOptions>;
  /** Tests only (never set by the engine): the Telegram node's Bot API on loopback. */
  telegramNode?: Partial<TelegramNodeOptions>;
  /**
   * A retry delay of at least this many ms parks the run instead of sleeping (RETRY_PARK_MS;
   * docs/workflow-engine.md, "Retries"). Absent: every delay sleeps in memory (a step test).
   */
  retryParkMs?: number;
}

/** A run claimed again (its engine died) or woken (it parked): what an earlier claim stored, and how it was woken. */
export interface RunResume {
  /** Checkpoints of an earlier claim of this run, by checkpointKey: those steps are reused, not executed. */
  checkpoints?: ReadonlyMap<string, StepCheckpoint>;
  /** The run was woken (TriggerEvent.resume): the parked step `nodeId` executes again with it. */
  wake?: { nodeId: string } & Resumption;
}

/** A person's cancel (docs/workflow-engine.md, "Cancelling"). */
export interface RunControl {
  /** True once a person cancelled the run: it stops before its next step. */
  cancelled?: () => boolean;
  /** A signal aborted when a person cancels the run (asked for only before a retry's delay, which it interrupts). */
  cancelSignal?: () => AbortSignal;
}

/** One step tested alone against a sample (step-test.ts, "Run this step"). */
export interface StepTestScope {
  /** Outputs of nodes outside this graph, by node id, readable as {{nodes.<id>.…}}: the last run's outputs of the nodes before it. */
  earlierOutputs?: ReadonlyMap<string, unknown>;
  /** Told each executed node's result (the branch it took); the step test answers with it. */
  onResult?: (nodeId: string, result: NodeResult) => void;
  /** `{{item}}` / `{{index}}` for the whole walk: a step of a For each body. */
  loopItem?: { item: unknown; index: number };
}

/**
 * A dry run on a sample (dry-run.ts): the steps that change nothing execute; an action (isAction), a
 * Wait (it would park) and a Verify signature (a sample has no signed bytes) are not executed — each
 * is recorded `skipped` with the output assumed for it (or none: unknown) and the walk goes on past it.
 */
export interface DryRunScope {
  /** What a step that is not executed stands for ({{nodes.<id>.…}}), by node id, when known (the last run's). */
  assumed: ReadonlyMap<string, unknown>;
  /** Told each step that was not executed (`item` inside a For each body). */
  onNotRun: (nodeId: string, item: number | undefined) => void;
}

/** The branch a dry run goes on with in place of a node it does not execute, or null: execute it. */
function dryRunStandIn(node: WorkflowNode, handler: AnyHandler): { branch?: string } | null {
  if (handler.isAction) return {};
  if (node.type === 'wait') return { branch: 'resumed' };
  if (node.type === 'verify_signature') return { branch: 'true' };
  return null;
}

// Each handler is typed by its own node's params (nodes/index.ts); the executor dispatches on node.type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyHandler = NodeHandler<any, any>;

/** An edge's state in one walk: `undefined` while pending. */
type EdgeState = 'taken' | 'not_taken' | undefined;

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
 * The handler table: the defaults, or (a test's HTTP or Slack node options) one built once per
 * options object, not once per run.
 */
const defaultHandlers: Record<WorkflowNode['type'], AnyHandler> = nodeHandlers();
const handlerTables = new WeakMap<RunOptions, Record<WorkflowNode['type'], AnyHandler>>();
function handlersFor(options: RunOptions | undefined): Record<WorkflowNode['type'], AnyHandler> {
  if (!options?.httpNode && !options?.slackNode && !options?.telegramNode) return defaultHandlers;
  let table = handlerTables.get(options);
  if (!table)
    handlerTables.set(options, (table = nodeHandlers({ httpNode: options.httpNode, slackNode: options.slackNode, telegramNode: options.telegramNode })));
  return table;
}

/** A node's resolved retry policy, once per node object (the cached graph's); read only when a step fails. */
const retryPolicies = new WeakMap<WorkflowNode, ReturnType<typeof resolveRetry>>();
function retryPolicyOf(node: WorkflowNode): ReturnType<typeof resolveRetry> {
  let policy = retryPolicies.get(node);
  if (!policy) retryPolicies.set(node, (policy = resolveRetry(node.retry)));
  return policy;
}

/** What every renderer of one run reads (the run's own, and each loop item's). */
type RenderScope = Omit<ConstructorParameters<typeof TemplateRenderer>[0], 'nodes' | 'item' | 'index'>;

/**
 * One run's state, in one object passed explicitly to every phase below (nothing is captured in a
 * closure). Everything above `steps` is set once when the run starts; the rest is what the walk
 * records as it goes.
 */
interface RunState {
  readonly input: ExecuteWorkflowInput;
  readonly limits: RunLimits;
  readonly handlers: Record<WorkflowNode['type'], AnyHandler>;
  readonly plan: GraphPlan;
  readonly scope: RenderScope;
  /** The run's own outputs and renderer; a loop item has its own (WalkScope). */
  readonly main: WalkScope;
  /**
   * Handed to the nodes as their signal. There is no overall run time (nodes have their own
   * timeouts), so nothing aborts it. A For each's items in flight each listen to it at once (the
   * workspace client's calls): no leak warning for more than 10 of them.
   */
  readonly signal: AbortSignal;
  readonly steps: RunStep[];
  readonly warnings: string[];
  error: string | null;
  cancelled: boolean;
  parked: ParkedRun | undefined;
  actionsRun: number;
  /** A condition's false or a switch's branch with no edge, before any action: the run ends `skipped`. */
  conditionStopped: boolean;
  /** Nodes executed (RunLimits.maxNodesPerRun); a loop-body node counts once (countedBodyNodes). */
  executed: number;
  readonly countedBodyNodes: Set<string>;
  /** Items looped over so far (RunLimits.maxLoopItemsPerRun). */
  loopItems: number;
  /**
   * Executed steps not stored yet, and whether one of them had a side effect that a repeat could make
   * again (an action not `exactlyOnce`): only then is a checkpoint needed before the next action.
   */
  readonly unsaved: StepCheckpoint[];
  unsavedEffect: boolean;
  storeFailed: Error | undefined;
}

/**
 * Where one walk reads and writes outputs: the run itself, or one item of a For each (`index` set:
 * its own renderer with {{item}}, {{index}} and its body nodes' outputs).
 */
interface WalkScope {
  outputs: Map<string, unknown>;
  renderer: TemplateRenderer;
  index?: number;
  /** The item (a For each's loop body): the input of a disabled step entered by an `each` edge. */
  item?: unknown;
}

/**
 * How a walk ended: it ran out of nodes (`last`: the last executed node's output), or it stopped;
 * `parked`: the step that parked it (in a For each item, runLoop parks the run at the For each).
 */
type WalkEnd = { stop: null; last: unknown } | { stop: 'failed' | 'end' | 'cancelled' } | { stop: 'parked'; by: NodeResult & { park: ParkRequest } };

export async function executeWorkflow(input: ExecuteWorkflowInput): Promise<RunRecord> {
  const { workflow, event, ports } = input;
  const started = ports.clock();
  const run = startRun(input);
  try {
    if (run.plan.problem) throw new NodeFailedError(run.plan.problem);
    if (run.plan.reachable.size === 0) run.warnings.push('the workflow has no nodes after the trigger');
    await walk(run, run.main, run.plan.outgoing.get('trigger')!);
  } catch (err) {
    run.error ??= (err as Error).message;
  }
  if (run.storeFailed) throw run.storeFailed;

  for (const w of run.main.renderer.warnings) if (!run.warnings.includes(w)) run.warnings.push(w);
  const finished = ports.clock();
  const status: RunRecord['status'] = run.cancelled
    ? 'cancelled'
    : run.error
      ? 'failed'
      : run.parked
        ? 'waiting'
        : run.actionsRun === 0 && run.conditionStopped
          ? 'skipped'
          : 'succeeded';
  ports.log.info({ workflowId: workflow.id, eventId: event.eventId, status, steps: run.steps.length }, 'workflow run finished');
  return {
    workflowId: workflow.id,
    eventId: event.eventId,
    status,
    steps: run.steps,
    warnings: run.warnings,
    error: run.error,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    ...(run.parked && status === 'waiting' ? { parked: run.parked } : {}),
  };
}

function startRun(input: ExecuteWorkflowInput): RunState {
  const { workflow, event, ports } = input;
  const scope: RenderScope = {
    payload: event.payload,
    headers: event.headers,
    credentials: ports.credentials,
    clock: ports.clock,
    // Expressions that are not inline run in the sandbox, counted against the workflow's owner; a
    // run's step (not a step test) parks rather than waits for the owner's sandbox capacity.
    sandbox: ports.sandbox,
    ownerId: workflow.ownerId,
    ...(input.stepTest ? {} : { parkWhenThrottled: true }),
    ...(event.rawBody !== undefined ? { rawBody: event.rawBody } : {}),
    resumeUrl: (id: string): { url: string } | { why: string } => {
      const wait = workflow.graph.nodes.find((n) => n.id === id);
      if (wait?.type !== 'wait' || wait.params.mode !== 'resume') return { why: `node "${id}" is not a Wait node in resume mode` };
      if (!ports.resumeUrl) return { why: 'resume links before the Wait need the server key (CREDENTIALS_KEY)' };
      return { url: ports.resumeUrl(id) };
    },
  };
  const { stepTest } = input;
  const outputs = new Map<string, unknown>(stepTest?.earlierOutputs ?? []);
  const renderer = new TemplateRenderer({
    ...scope,
    nodes: outputs,
    ...(stepTest?.loopItem ? { item: stepTest.loopItem.item ?? null, index: stepTest.loopItem.index } : {}),
  });
  const signal = new AbortController().signal;
  setMaxListeners(0, signal);
  return {
    input,
    limits: { ...DEFAULT_RUN_LIMITS, ...input.options?.limits },
    handlers: handlersFor(input.options),
    plan: planOf(workflow.graph),
    scope,
    main: { outputs, renderer },
    signal,
    steps: [],
    warnings: [],
    error: null,
    cancelled: false,
    parked: undefined,
    actionsRun: 0,
    conditionStopped: false,
    executed: 0,
    countedBodyNodes: new Set(),
    loopItems: 0,
    unsaved: [],
    unsavedEffect: false,
    storeFailed: undefined,
  };
}

/**
 * The one graph walk, for the run (from the trigger's edges) and for each item of a For each's loop
 * body (from its `each` edges): breadth-first in edge order, each node at most once. Join (OR-join):
 * a node waits until every edge into it from a node reachable from the trigger is decided; it runs
 * when at least one was taken and is recorded `skipped` when none was. A cancelled run stops at the
 * next step boundary (the step in flight has finished).
 */
async function walk(run: RunState, at: WalkScope, entry: readonly number[]): Promise<WalkEnd> {
  const { plan } = run;
  const edges = run.input.workflow.graph.edges;
  const edgeState: EdgeState[] = new Array<EdgeState>(edges.length);
  for (const i of entry) edgeState[i] = 'taken';
  const queue = entry.map((i) => edges[i]!.to);
  const decided = new Set<string>();
  let last: unknown = null;
  while (queue.length > 0) {
    if (run.input.control?.cancelled?.()) {
      run.cancelled = true;
      return { stop: 'cancelled' };
    }
    const id = queue.shift()!;
    if (decided.has(id)) continue;
    const incoming = plan.incoming.get(id) ?? [];
    if (incoming.some((i) => edgeState[i] === undefined)) continue; // a later predecessor will re-enqueue it
    decided.add(id);
    const node = plan.nodes.get(id)!;
    const out = plan.outgoing.get(id) ?? [];
    if (!incoming.some((i) => edgeState[i] === 'taken')) {
      run.steps.push(skippedStep(node, run.input.ports.clock(), at.index));
      for (const i of out) edgeState[i] = 'not_taken';
    } else if (node.disabled === true) {
      // A disabled step: not executed; its input goes on as its output, by its pass-through branch.
      const result = passThrough(
        run,
        at,
        node,
        incoming.find((i) => edgeState[i] === 'taken')!,
      );
      last = result.output;
      for (const i of out) edgeState[i] = takes(edges[i]!.branch, result.branch) ? 'taken' : 'not_taken';
    } else {
      const result = await visit(run, at, node);
      if (!result) return { stop: 'failed' }; // the step failed and its node says fail the run: stop at the first failure
      if (result.park) {
        // Parking: the walk stops here; the caller stores the unsaved steps (this one `waiting`) and the run's row.
        // An item's step (waiting for the sandbox) stops its item: runLoop parks the run at the For each.
        const p = result.park;
        if (at.index === undefined)
          run.parked = { nodeId: id, until: p.until ?? p.timeoutAt ?? null, resumable: p.resumable === true, unsaved: run.unsaved.splice(0) };
        return { stop: 'parked', by: { ...result, park: p } };
      }
      if (run.handlers[node.type].isAction) run.actionsRun++;
      if (
        at.index === undefined &&
        result.branch !== undefined &&
        result.branch !== 'true' &&
        !out.some((i) => edges[i]!.branch === result.branch) &&
        run.actionsRun === 0
      )
        run.conditionStopped = true;
      last = result.output;
      if (result.end) return { stop: 'end' }; // a Stop node: nothing else runs
      for (const i of out) edgeState[i] = takes(edges[i]!.branch, result.branch) ? 'taken' : 'not_taken';
    }
    for (const i of out) queue.push(edges[i]!.to);
  }
  return { stop: null, last };
}

/**
 * A disabled step (WorkflowNode.disabled; docs/workflow-engine.md, "Disabled steps"), reached on the
 * taken edge `entry`: its input — the output of the step that edge leaves, the trigger's payload, or a
 * loop item — becomes its output ({{nodes.<id>.…}} reads it), recorded as a `skipped` step marked
 * `disabled`, and the walk goes on by its pass-through branch (disabledBranch: a Condition's `true`, a
 * For each's `done`). Nothing is counted, checkpointed or retried: a resumed run passes it through again.
 */
function passThrough(run: RunState, at: WalkScope, node: WorkflowNode, entry: number): NodeResult {
  const edge = run.input.workflow.graph.edges[entry]!;
  const output = edge.from === 'trigger' ? run.input.event.payload : edge.branch === 'each' && at.index !== undefined ? at.item : at.outputs.get(edge.from);
  at.outputs.set(node.id, output ?? null);
  run.steps.push({ ...skippedStep(node, run.input.ports.clock(), at.index), input: output ?? null, output: output ?? null, disabled: true });
  const branch = disabledBranch(node.type);
  return { output: output ?? null, ...(branch !== undefined ? { branch } : {}) };
}

/** The edge rule: a failure on the error path takes only the node's `error` edges; otherwise those are not taken. */
function takes(edgeBranch: string | undefined, resultBranch: string | undefined): boolean {
  return resultBranch === ERROR_BRANCH ? edgeBranch === ERROR_BRANCH : edgeBranch === undefined || edgeBranch === resultBranch;
}

/**
 * One node the walk reached on a taken edge: counted against the run's limit, then either reused
 * from an earlier claim's checkpoint or run as a step (and, for a For each, its loop body).
 */
async function visit(run: RunState, at: WalkScope, node: WorkflowNode): Promise<NodeResult | null> {
  const { input } = run;
  // A body node counts once against maxNodesPerRun; its executions per item are bounded by the item limit.
  const counts = at.index === undefined || !run.countedBodyNodes.has(node.id);
  if (at.index !== undefined) run.countedBodyNodes.add(node.id);
  if (counts && ++run.executed > run.limits.maxNodesPerRun)
    throw new NodeFailedError(`the run exceeded its limit of ${run.limits.maxNodesPerRun} executed nodes`);
  const saved = input.resume?.checkpoints?.get(checkpointKey(node.id, at.index));
  if (saved && saved.step.status === 'succeeded') {
    // Executed under an earlier claim of this run (its engine died): reuse the stored outcome.
    run.steps.push(saved.step);
    if (node.type === 'for_each') run.steps.push(...savedLoopSteps(run, node.id));
    at.outputs.set(node.id, saved.output);
    const reused = { output: saved.output, ...(saved.branch ? { branch: saved.branch } : {}) };
    if (at.index === undefined) input.stepTest?.onResult?.(node.id, reused);
    return reused;
  }
  const handler = run.handlers[node.type];
  const standIn = input.dryRun ? dryRunStandIn(node, handler) : null;
  if (standIn && input.dryRun) {
    // A dry run never executes it: no port is called; later steps see the assumed output, if any.
    const assumed = input.dryRun.assumed.get(node.id);
    if (assumed !== undefined) at.outputs.set(node.id, assumed);
    run.steps.push({ ...skippedStep(node, input.ports.clock(), at.index), output: assumed ?? null });
    input.dryRun.onNotRun(node.id, at.index);
    return { output: assumed ?? null, ...standIn };
  }
  if (handler.isAction && run.unsavedEffect && input.ports.checkpoint) await storeUnsaved(run);
  const wake = at.index === undefined && input.resume?.wake?.nodeId === node.id ? input.resume.wake : undefined;
  // One span per executed node: the HTTP Request node's outbound call and Create Task's workspace-api
  // call become its children (docs/observability.md). A For each runs its loop body after its own
  // step (runLoop), inside its span.
  const attributes: Record<string, string | number> = { 'flowdesk.node.id': node.id, 'flowdesk.node.type': node.type };
  if (at.index !== undefined) attributes['flowdesk.loop.item'] = at.index;
  const { step, result } = await withSpan(
    'workflow-engine',
    `node ${node.type}`,
    async () => {
      const ran = await runStep(run, at, node, handler, wake);
      if (ran.result && node.type === 'for_each' && ran.step.status === 'succeeded')
        return { step: ran.step, result: await runLoop(run, node, ran.step, ran.result.output as ForEachPlan) };
      return ran;
    },
    { attributes },
  );
  if (result) {
    run.unsaved.push({ step, output: result.output, ...(result.branch ? { branch: result.branch } : {}) });
    if (handler.isAction && !handler.exactlyOnce) run.unsavedEffect = true;
    if (at.index === undefined) input.stepTest?.onResult?.(node.id, result);
  }
  return result;
}

/**
 * A step's sub-steps (NodeContext.subSteps): kept in memory across the step's attempts, read back from
 * an earlier claim's checkpoints (`<node id>:<key>`, `#<item>` in a loop body), and each one saved as a
 * checkpoint with the executed steps not stored yet (they came before it) when the run has a store.
 */
function subStepsOf(run: RunState, at: WalkScope, node: WorkflowNode): SubSteps {
  const memory = new Map<string, unknown>();
  const { ports } = run.input;
  const keyOf = (key: string) => checkpointKey(`${node.id}:${key}`, at.index);
  return {
    get: (key) => {
      if (memory.has(key)) return { value: memory.get(key) };
      const saved = run.input.resume?.checkpoints?.get(keyOf(key));
      return saved ? { value: saved.output } : undefined;
    },
    save: async (key, value) => {
      memory.set(key, value);
      if (!ports.checkpoint) return;
      const step: RunStep = {
        nodeId: `${node.id}:${key}`,
        type: node.type,
        status: 'succeeded',
        input: null,
        output: null,
        error: null,
        startedAt: ports.clock().toISOString(),
        durationMs: 0,
        ...(at.index !== undefined ? { item: at.index } : {}),
      };
      run.unsaved.push({ step, output: value });
      await storeUnsaved(run);
    },
  };
}

/** Stores the executed steps not stored yet; a failure ends the run unfinished (rethrown after the walk). */
async function storeUnsaved(run: RunState): Promise<void> {
  // Cleared before the write: a side effect of a concurrent loop item recorded meanwhile sets it again.
  run.unsavedEffect = false;
  try {
    await run.input.ports.checkpoint!(run.unsaved.splice(0));
  } catch (err) {
    run.storeFailed = err instanceof Error ? err : new Error(String(err));
    throw err;
  }
}

/**
 * A step's life, in its phases: render (expressions first, then the template), record the step,
 * execute it (attempts under the node's retry policy), and after a failed attempt retry, park,
 * stop for a cancel or settle the failure (stepFailed). Answers the step and its result, null when
 * the run stops (the run's `error` or `cancelled` says why). `resumed` tells a parked step how its
 * run was woken.
 */
async function runStep(
  run: RunState,
  at: WalkScope,
  node: WorkflowNode,
  handler: AnyHandler,
  resumed?: Resumption,
): Promise<{ step: RunStep; result: NodeResult | null }> {
  const { ports } = run.input;
  const stepStart = ports.clock();
  const rendered = await render(run, at, node, handler);
  const step: RunStep = {
    nodeId: node.id,
    type: node.type,
    status: 'succeeded',
    input: rendered.error ? null : handler.mask(rendered.params),
    output: null,
    error: null,
    startedAt: stepStart.toISOString(),
    durationMs: 0,
    ...(at.index !== undefined ? { item: at.index } : {}),
  };
  run.steps.push(step);
  try {
    const result =
      rendered.error instanceof SandboxThrottled && canPark(run)
        ? parkForSandbox(run, node, step, rendered.error)
        : rendered.error
          ? stepFailed(run, at, node, step, rendered.error)
          : await execute(run, at, node, handler, step, rendered.params, resumed);
    return { step, result };
  } finally {
    step.durationMs = ports.clock().getTime() - stepStart.getTime();
    ports.metrics?.nodeFinished(node.type, step.status, step.durationMs / 1000);
  }
}

/**
 * Render: expressions ({{= … }}) evaluate first; one that fails (syntax, time, size) fails this node,
 * recorded like any other failure. Template warnings name the node they came from, so the runs
 * panel points at the right box.
 */
async function render(run: RunState, at: WalkScope, node: WorkflowNode, handler: AnyHandler): Promise<{ params: unknown; error: Error | null }> {
  const { renderer } = at;
  const before = renderer.warnings.length;
  const preparing = renderer.prepare(node.params, () => handler.render(node.params, renderer));
  const error = preparing
    ? await preparing.then(
        () => null,
        (err: unknown) => err as Error,
      )
    : null;
  const params = error ? null : (handler.render(node.params, renderer) as unknown);
  renderer.warnings.splice(before).forEach((w) => addWarning(run, node.id, w));
  return { params, error };
}

/**
 * Execute, under the node's retry policy (docs/workflow-engine.md, "Retries"): the same rendered
 * input and key on every attempt. A step executed again after a resume goes on counting from its
 * checkpoint. The policy and whether a repeat is safe are read only when an attempt fails (not on
 * the hot path).
 */
async function execute(
  run: RunState,
  at: WalkScope,
  node: WorkflowNode,
  handler: AnyHandler,
  step: RunStep,
  rendered: unknown,
  resumed: Resumption | undefined,
): Promise<NodeResult | null> {
  const { input } = run;
  const { workflow, event, ports } = input;
  const earlier = input.resume?.checkpoints?.get(checkpointKey(node.id, at.index))?.step;
  const errors: string[] = earlier ? [...(earlier.attemptErrors ?? []), ...(earlier.error ? [earlier.error] : [])].slice(-9) : [];
  // A step parked for its retry, or for the sandbox, is not told it was resumed: it made no attempt of its own since.
  const told = resumed && !earlier?.retryAt && !parkedForSandbox(earlier) ? resumed : undefined;
  const subSteps = handler.usesSubSteps ? subStepsOf(run, at, node) : undefined;
  // A parked step that did not fail (a Wait resumed) made no attempt before this one.
  for (let attempt = (earlier?.attempts ?? (earlier?.error ? 1 : 0)) + 1; ; attempt++) {
    try {
      const result = await handler.execute(rendered, {
        ports,
        ownerId: workflow.ownerId,
        nodeId: node.id,
        workflowId: workflow.id,
        signal: run.signal,
        warn: (m: string) => addWarning(run, node.id, m),
        ...(told ? { resumed: { resumedBy: told.resumedBy, at: told.at, ...(told.body !== undefined ? { body: told.body } : {}) } } : {}),
        ...(ports.respond ? { respond: ports.respond } : {}),
        // A run's step can park (a For each item's, for the sandbox: runLoop parks the run at the For each); a step test's cannot.
        ...(canPark(run) ? { canPark: true } : {}),
        ...(handler.isAction ? { idempotencyKey: stepIdempotencyKey(workflow.id, event.eventId, node.id, at.index) } : {}),
        ...(subSteps ? { subSteps } : {}),
      });
      // Record.
      noteAttempts(step, attempt, errors);
      at.outputs.set(node.id, result.output);
      step.output = result.recorded ?? result.output;
      if (result.park) step.status = 'waiting';
      return result;
    } catch (err) {
      // The sandbox handed the step's job back (its owner's budget or workers): not a failure, the run parks.
      if (err instanceof SandboxThrottled && canPark(run)) return parkForSandbox(run, node, step, err);
      noteAttempts(step, attempt, errors);
      const next = await afterFailure(run, at, node, handler, step, rendered, err, attempt, errors, earlier);
      if (next !== 'retry') return next;
      errors.push(messageOf(err).slice(0, ATTEMPT_ERROR_CHARS));
      if (errors.length > 9) errors.shift();
    }
  }
}

/**
 * After a failed attempt: retry (after the policy's delay, slept in memory), park the run for a long
 * delay, stop for a cancel, or settle the failure (stepFailed) once the policy gives up.
 */
async function afterFailure(
  run: RunState,
  at: WalkScope,
  node: WorkflowNode,
  handler: AnyHandler,
  step: RunStep,
  rendered: unknown,
  err: unknown,
  attempt: number,
  errors: string[],
  earlier: RunStep | undefined,
): Promise<NodeResult | null | 'retry'> {
  const { input } = run;
  const { ports } = input;
  const policy = retryPolicyOf(node);
  const safe = handler.retrySafe ? handler.retrySafe(rendered, err) : !handler.isAction;
  const again = safe && attempt < policy.attempts && retries(policy, failureKind(err));
  if (!again) return stepFailed(run, at, node, step, err);
  if (input.control?.cancelled?.()) return cancelledBeforeRetry(run, step, err);
  // A step parked for its retry counts its backoff on; a handled failure's checkpoint starts it again.
  const n = earlier?.retryAt ? attempt : attempt - (earlier?.attempts ?? 0);
  let delay = retryDelay(policy, n, err, ports.random ?? Math.random, ports.clock().getTime());
  const parkMs = input.options?.retryParkMs;
  if (parkMs !== undefined && delay >= parkMs && at.index === undefined) return parkForRetry(run, node, step, err, attempt, errors, delay);
  if (at.index !== undefined) delay = Math.min(delay, LOOP_RETRY_MAX_SLEEP_MS);
  const cancelSignal = input.control?.cancelSignal?.();
  try {
    await (ports.sleep ?? abortableSleep)(delay, cancelSignal ?? run.signal);
  } catch (sleepErr) {
    if (cancelSignal?.aborted) return cancelledBeforeRetry(run, step, err);
    throw sleepErr;
  }
  return 'retry';
}

/**
 * A long retry delay (RunOptions.retryParkMs): the step is recorded `waiting` with its
 * attempts so far, its errors and `retryAt`, and parks the run until then; the woken run executes it
 * again (ctx.resumed is not set: it is the same attempt series), counting on from the checkpoint.
 */
function parkForRetry(run: RunState, node: WorkflowNode, step: RunStep, err: unknown, attempt: number, errors: string[], delay: number): NodeResult {
  const { ports, workflow } = run.input;
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

/** Whether the run's steps can park (NodeContext.canPark): a run's can, a step test's cannot (nothing would wake it). */
function canPark(run: RunState): boolean {
  return run.input.stepTest === undefined;
}

/** What a step (or a For each) parked for the sandbox records as its output: `waitingFor` names what it waits for. */
const SANDBOX_WAITS: Record<SandboxThrottled['reason'], string> = { budget: 'sandbox budget', workers: 'sandbox worker' };
const SANDBOX_WAITING_FOR = new Set(Object.values(SANDBOX_WAITS));

/** A checkpointed step that parked its run for the sandbox (parkForSandbox, or a For each with such an item). */
function parkedForSandbox(step: RunStep | undefined): boolean {
  const waitingFor = step?.status === 'waiting' ? (step.output as { waitingFor?: unknown } | null)?.waitingFor : undefined;
  return typeof waitingFor === 'string' && SANDBOX_WAITING_FOR.has(waitingFor);
}

/**
 * The sandbox handed the step's job back (SandboxThrottled: its owner is past its sandbox budget, or
 * the job waited longer than the pool's bound behind the owner's own workers): the step is recorded
 * `waiting` with `{ waitingFor, until }` and parks the run until then, so the run holds no slot while
 * the owner's capacity comes back (docs/workflow-engine.md, "Isolation"); woken, it executes again. In
 * a For each item it stops the item, and runLoop parks the run at the For each.
 */
function parkForSandbox(run: RunState, node: WorkflowNode, step: RunStep, err: SandboxThrottled): NodeResult {
  const { ports, workflow } = run.input;
  const output = { waitingFor: SANDBOX_WAITS[err.reason], until: err.retryAt.toISOString() };
  step.status = 'waiting';
  step.output = output;
  ports.log.info(
    { workflowId: workflow.id, nodeId: node.id, item: step.item, reason: err.reason, until: output.until },
    'workflow node parked for the sandbox',
  );
  return { output, park: { until: err.retryAt } };
}

/** Cancelled while a step waited to be retried: the step keeps its last failure, the run ends cancelled. */
function cancelledBeforeRetry(run: RunState, step: RunStep, err: unknown): null {
  step.status = 'failed';
  step.error = messageOf(err);
  run.cancelled = true;
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
 * the node's "on error" fails the run (null, and the run's `error` says why), or continues with the
 * error as the output, or follows the error branch.
 */
function stepFailed(run: RunState, at: WalkScope, node: WorkflowNode, step: RunStep, err: unknown): NodeResult | null {
  const { ports, workflow } = run.input;
  if (findCause(err, SsrfBlockedError)) ports.metrics?.ssrfRefused();
  step.status = 'failed';
  step.error = messageOf(err);
  if (err instanceof NodeFailedError) step.output = err.output;
  ports.log.warn({ workflowId: workflow.id, nodeId: node.id, err: step.error }, 'workflow node failed');
  // The node's "on error" (nodes/define.ts): the run's end (default), or the error as its output.
  const onError = node.onError ?? 'fail';
  if (onError === 'fail') {
    run.error = `node "${node.id}" failed${step.attempts ? ` after ${step.attempts} attempts` : ''}: ${step.error}`;
    return null;
  }
  const output = { error: step.error, ...(step.output !== null && step.output !== undefined ? { output: step.output } : {}) };
  at.outputs.set(node.id, output);
  step.output = output;
  return { output, ...(onError === 'branch' ? { branch: ERROR_BRANCH } : {}) };
}

/**
 * Runs a For each's loop body once per item (docs/workflow-engine.md, "For each"): items in order,
 * `concurrency` at a time, each item one walk of the body from the `each` edges, its steps recorded
 * with the item's index and checkpointed under `<node id>#<item>`; the first item that fails the
 * run stops the loop (items in flight finish). Replaces the For each's output with
 * `{ results, count }` (each item's last executed node's output) and continues on `done`.
 * An item whose step parked for the sandbox (parkForSandbox) stops the loop taking items; once the
 * items in flight end, the For each is recorded `waiting` and parks the run until the latest of its
 * items' times. Woken, the For each runs again: the items that ended are reused from their
 * checkpoints (none is executed twice), the others run.
 */
async function runLoop(run: RunState, node: WorkflowNode, step: RunStep, loop: ForEachPlan): Promise<NodeResult | null> {
  const body = run.plan.loops.get(node.id)!;
  const { items } = loop;
  const { limits } = run;
  if (run.loopItems + items.length > limits.maxLoopItemsPerRun)
    return stepFailed(
      run,
      run.main,
      node,
      step,
      new NodeFailedError(
        `the list has ${items.length} items and this run looped over ${run.loopItems} before: more than the run's limit of ${limits.maxLoopItemsPerRun} loop items (MAX_LOOP_ITEMS_PER_RUN); no item ran`,
      ),
    );
  run.loopItems += items.length;
  const results: unknown[] = items.map(() => null);
  let next = 0;
  let stopped: 'failed' | 'end' | 'parked' | null = null;
  let failedAt = -1;
  /** The items' steps that parked (waiting for the sandbox), and the latest time one of them waits for. */
  const parked: { steps: RunStep[]; by?: NodeResult & { park: ParkRequest } } = { steps: [] };
  const worker = async (): Promise<void> => {
    while (stopped === null && next < items.length) {
      if (run.input.control?.cancelled?.()) {
        run.cancelled = true;
        stopped = 'failed';
        return;
      }
      const index = next++;
      const end = await walk(run, itemScope(run, items[index], index), body.entry);
      if (end.stop === null) {
        results[index] = end.last;
        continue;
      }
      if (end.stop === 'parked') {
        const waiting = run.steps.findLast((st) => st.output === end.by.output);
        if (waiting) parked.steps.push(waiting);
        if (!parked.by || (end.by.park.until?.getTime() ?? 0) > (parked.by.park.until?.getTime() ?? 0)) parked.by = end.by;
        stopped ??= 'parked';
        return;
      }
      // A failure or a Stop ends the loop whatever else did: it outranks a park.
      if (stopped === null || stopped === 'parked') {
        failedAt = index;
        stopped = end.stop === 'end' ? 'end' : 'failed';
      }
      return;
    }
  };
  await Promise.all(Array.from({ length: Math.min(loop.concurrency, items.length) }, worker));
  if (stopped === 'parked' && parked.by) {
    // Checkpointed with the run's park: the items' steps so far (the waiting ones among them) and this For each, `waiting`.
    step.status = 'waiting';
    step.output = parked.by.output;
    return { output: parked.by.output, park: parked.by.park };
  }
  // The loop ended otherwise (an item failed or stopped meanwhile): an item step that parked did not run.
  for (const st of parked.steps) {
    st.status = 'skipped';
    st.output = null;
  }
  const output = { results, count: items.length };
  run.main.outputs.set(node.id, output);
  step.output = output;
  if (stopped === 'failed') {
    if (run.cancelled) return null;
    step.status = 'failed';
    step.error = `item ${failedAt}: ${run.error ?? 'failed'}`;
    run.error = `node "${node.id}" stopped at item ${failedAt}: ${run.error ?? 'failed'}`;
    return null;
  }
  return { output, branch: 'done', ...(stopped === 'end' ? { end: true } : {}) };
}

/** One item's scope: the run's outputs so far plus its own body nodes', and {{item}} / {{index}}. */
function itemScope(run: RunState, value: unknown, index: number): WalkScope {
  const outputs = new Map(run.main.outputs);
  return { index, item: value ?? null, outputs, renderer: new TemplateRenderer({ ...run.scope, nodes: outputs, item: value ?? null, index }) };
}

/** A completed For each reused from a checkpoint: its body's steps stored with it, in item order. */
function savedLoopSteps(run: RunState, loopId: string): RunStep[] {
  const body = run.plan.loops.get(loopId);
  const resume = run.input.resume?.checkpoints;
  if (!body || !resume) return [];
  return [...resume.values()]
    .map((c) => c.step)
    .filter((st) => st.item !== undefined && body.nodes.has(st.nodeId))
    .sort((a, b) => a.item! - b.item!);
}

function addWarning(run: RunState, nodeId: string, message: string): void {
  const text = `node "${nodeId}": ${message}`;
  if (!run.warnings.includes(text)) run.warnings.push(text);
}

function messageOf(err: unknown): string {
  return (err instanceof Error && err.message) || String(err);
}

function skippedStep(node: WorkflowNode, at: Date, item?: number): RunStep {
  return {
    nodeId: node.id,
    type: node.type,
    status: 'skipped',
    input: null,
    output: null,
    error: null,
    startedAt: at.toISOString(),
    durationMs: 0,
    ...(item !== undefined ? { item } : {}),
  };
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
