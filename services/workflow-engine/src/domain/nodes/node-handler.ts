/**
 * The contract every node type implements, split in three so the executor can record the
 * rendered input even when execution fails: render (templates → concrete input, never throws),
 * mask (the copy that is recorded), execute (side effects, may throw).
 */
import type { TemplateRenderer } from '../template.ts';
import type { EnginePorts } from '../ports.ts';

export interface NodeContext {
  ports: EnginePorts;
  ownerId: string;
  /** Aborted when the run's overall timeout passes. */
  signal: AbortSignal;
  /** Records a warning on the run (prefixed with the node id by the executor). */
  warn(message: string): void;
  /**
   * For action nodes: the step's idempotency key, the same whenever this step of this run is executed
   * again (executor.ts stepIdempotencyKey). Absent for the others.
   */
  idempotencyKey?: string;
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
}

export interface NodeHandler<Params, Input> {
  /** Action nodes change the world; a run where none ran because a condition said no is `skipped`. */
  readonly isAction: boolean;
  render(params: Params, renderer: TemplateRenderer): Input;
  mask(input: Input): unknown;
  execute(input: Input, ctx: NodeContext): Promise<NodeResult>;
  /**
   * The node's retry policy may repeat this execution (same input, same idempotency key). Absent:
   * true for nodes that are not actions, false for actions (an action must say why a repeat is safe).
   */
  retrySafe?(input: Input): boolean;
}
