/**
 * The contract every node type implements, split in three so the executor can record the
 * rendered input even when execution fails: render (templates → concrete input, never throws),
 * mask (the copy that is recorded), execute (side effects, may throw).
 */
import type { TemplateRenderer } from '../template.ts';
import type { ResumedBy } from '@flowdesk/contracts';
import type { EnginePorts, RespondPort } from '../ports.ts';

export interface NodeContext {
  ports: EnginePorts;
  ownerId: string;
  /** Aborted when the run must stop (the engine closes); nodes keep their own timeouts. */
  signal: AbortSignal;
  /** Records a warning on the run (prefixed with the node id by the executor). */
  warn(message: string): void;
  /**
   * For action nodes: the step's idempotency key, the same whenever this step of this run is executed
   * again (executor.ts stepIdempotencyKey). Absent for the others.
   */
  idempotencyKey?: string;
  /** The step's node id. */
  nodeId?: string;
  /**
   * The step may park its run (NodeResult.park): a step of a run, not of a step test (nothing wakes
   * one). In a For each item only for the sandbox (SandboxThrottled; a Wait cannot be in a loop body):
   * the loop stops taking items and the run parks at the For each.
   */
  canPark?: boolean;
  /** The run's workflow (absent in some unit tests). */
  workflowId?: string;
  /**
   * Set when this step parked its run and the run was woken (docs/workflow-engine.md, "Parking"): the
   * step executes again with how and when it was woken, and what a resume sent.
   */
  resumed?: Resumption;
  /** The run's answer to the webhook's caller (a Respond node; RunPorts.respond). */
  respond?: RespondPort;
  /** A handler with `usesSubSteps`: its completed sub-steps, kept across its attempts and stored as checkpoints (SubSteps). */
  subSteps?: SubSteps;
}

/**
 * The sub-steps of one step (an AI step's model and tool calls; docs/workflow-engine.md, "Durable
 * runs"): each completed one is saved before the step goes on, and a repeat of the step (its retry
 * policy's next attempt, or the run resumed after its engine died) gets it back instead of executing it
 * again. Saved in memory for the step's attempts, and as a checkpoint of the run (RunPorts.checkpoint,
 * under `<node id>:<key>`) when the run has a store.
 */
export interface SubSteps {
  /** What sub-step `key` answered when it completed before, or undefined. */
  get(key: string): { value: unknown } | undefined;
  /** Saves what sub-step `key` answered (durably, when the run has a store; a store failure rejects and ends the run unfinished). */
  save(key: string, value: unknown): Promise<void>;
}

/** How a parked step's run was woken. */
export interface Resumption {
  resumedBy: ResumedBy;
  /** When it was woken (ISO). */
  at: string;
  /** The JSON a resume URL was sent, or an Approve / Reject's body. */
  body?: unknown;
}

/**
 * A step's request to park its run (any node: the Wait node, a retry's long backoff): the walk stops,
 * the executed steps and this one (status `waiting`) are stored as checkpoints, the run becomes
 * `waiting` and holds no memory. It is woken at `until` (resumedBy `timer`), by a resume when
 * `resumable` (the resume URL, Approve / Reject), or at `timeoutAt` (resumedBy `timeout`) if no
 * resume came first; the step then executes again with `ctx.resumed`.
 */
export interface ParkRequest {
  until?: Date;
  resumable?: boolean;
  timeoutAt?: Date;
}

export interface NodeResult {
  /** Available to later nodes as {{nodes.<id>.…}}. */
  output: unknown;
  /** What the step records, when it must differ from `output` (masked headers). */
  recorded?: unknown;
  /** For nodes with branches (condition, switch): the branch to follow; `error` (set by the executor) for a failure on the node's error path. */
  branch?: string;
  /** The run ends after this node (Stop); nothing else runs. */
  end?: boolean;
  /** Park the run here (see ParkRequest); `output` is what the waiting step records. */
  park?: ParkRequest;
}

export interface NodeHandler<Params, Input> {
  /** Action nodes change the world; a run where none ran because a condition said no is `skipped`. */
  readonly isAction: boolean;
  /**
   * An action whose repeat has no further effect: executed again with the same idempotency key (a
   * resumed run), it answers what it did the first time (workspace-api keeps the key per owner; a Run
   * workflow's child event id is derived from it). Such a step need not be stored before the run's
   * next side effect (docs/workflow-engine.md, "Durable runs"). Absent: a repeat may act again (HTTP
   * Request, whose receiver may ignore the key; Update Task, which has none).
   */
  readonly exactlyOnce?: boolean;
  /** The step's execution is made of sub-steps saved as they complete (NodeContext.subSteps): the AI step. */
  readonly usesSubSteps?: boolean;
  render(params: Params, renderer: TemplateRenderer): Input;
  mask(input: Input): unknown;
  execute(input: Input, ctx: NodeContext): Promise<NodeResult>;
  /**
   * The node's retry policy may repeat this execution (same input, same idempotency key) after it
   * failed with `err` (a chat node repeats only a 429, refused before anything was posted). Absent:
   * true for nodes that are not actions, false for actions (an action must say why a repeat is safe).
   */
  retrySafe?(input: Input, err?: unknown): boolean;
}
