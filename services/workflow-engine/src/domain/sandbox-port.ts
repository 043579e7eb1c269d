/**
 * The sandbox port (docs/workflow-engine.md, "Isolation"): where user work runs, a Code step's
 * JavaScript and the expressions that are not plain arithmetic over paths. domain/ knows only this
 * interface, its errors and its limits; the implementations live in adapters/: the worker pool the
 * engine wires in app.ts (sandbox-pool.ts) and QuickJS itself (code-sandbox.ts, which a worker runs).
 */
import { capErrorText } from '@flowdesk/contracts/expressions';

export const CODE_LIMITS = {
  /** Wall time of one run of the code (QuickJS's interrupt handler). */
  timeoutMs: 1_000,
  /** The runtime's heap. */
  memoryBytes: 32 * 1024 * 1024,
  /** The interpreter's stack (deep recursion fails as a RangeError). */
  stackBytes: 256 * 1024,
  /** The returned value as JSON, in characters. */
  maxOutputChars: 1_000_000,
  /** An error's text (a thrown message, a stack), in characters: longer text is cut, with a note. */
  maxErrorChars: 65_536,
} as const;

/** Code that failed: a syntax error, an exception it threw, a limit, or a result no JSON holds. Its text is capped. */
export class CodeError extends Error {
  constructor(message: string) {
    super(capErrorText(message, CODE_LIMITS.maxErrorChars));
  }
}

/**
 * The sandbox handed a job back instead of keeping it waiting (CodeJob.parkWhenThrottled): its owner
 * is past its budget of sandbox time per minute (`budget`), or the job waited longer than the pool's
 * bound (ENGINE_SANDBOX_PARK_AFTER_MS) behind its owner's own workers (`workers`). The step parks its
 * run until `retryAt` instead of holding a run slot while it waits (docs/workflow-engine.md, "Isolation").
 */
export class SandboxThrottled extends Error {
  override name = 'SandboxThrottled';
  constructor(
    readonly retryAt: Date,
    readonly reason: 'budget' | 'workers' = 'budget',
  ) {
    super(
      reason === 'budget'
        ? `the owner used its sandbox time for this minute; the step waits until ${retryAt.toISOString()}`
        : `the owner's sandbox workers are busy with its other jobs; the step waits until ${retryAt.toISOString()}`,
    );
  }
}

/** The data a Code step or an expression sees (trigger, headers, earlier outputs, the item, `now`). */
export interface SandboxScope {
  trigger: unknown;
  headers: Record<string, string>;
  nodes: Record<string, unknown>;
  item?: unknown;
  index?: number;
  now: string;
  rawBody?: string;
}

/** One Code step's JavaScript, run for `ownerId` (whose share of the sandbox it counts against). */
export interface CodeJob {
  ownerId: string;
  code: string;
  data: SandboxScope;
  /** Aborted (the run stops): a job still queued is dropped. */
  signal?: AbortSignal;
  /**
   * The caller can park its run: while the owner is past its sandbox budget the job is refused at
   * once (and a queued one as soon as the owner passes it), and a job still queued behind the owner's
   * own workers after the pool's bound is handed back, with SandboxThrottled and a time to try again,
   * instead of waiting in memory. Absent: the job waits (a step test).
   */
  parkWhenThrottled?: boolean;
}

/** One step's sandboxed expressions, sent as one job with the scope once. */
export interface ExpressionsJob {
  ownerId: string;
  sources: readonly string[];
  scope: SandboxScope;
  signal?: AbortSignal;
  /** As CodeJob.parkWhenThrottled: the step's run can park instead of waiting for the sandbox. */
  parkWhenThrottled?: boolean;
}

/**
 * User work with limits enforced from outside it (docs/workflow-engine.md, "Isolation"): a job that
 * passes its deadline is stopped and fails naming the limit; owners are served round-robin, each
 * within a budget of sandbox time per minute. `runCode` rejects with CodeError (below),
 * `evaluate` with ExpressionError (@flowdesk/contracts/expressions) and resolves to one value per source.
 */
export interface Sandbox {
  runCode(job: CodeJob): Promise<unknown>;
  evaluate(job: ExpressionsJob): Promise<unknown[]>;
}

/** What the code reads (`now` is the run's clock, ISO 8601: `flowdesk.now()`). */
export type CodeInput = SandboxScope;
