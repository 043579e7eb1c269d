/**
 * The Sandbox port (domain/ports.ts) as a pool of worker threads (docs/workflow-engine.md,
 * "Isolation"). Each worker runs QuickJS and JSONata (adapters/sandbox-worker.ts), one job at a time.
 * Limits are enforced from this thread, outside the work they limit:
 * - a job's deadline: past its limit (+ graceMs) the worker is terminated and replaced, and the job
 *   fails naming the limit, whatever the job was doing (a host helper, a backtracking regex,
 *   recursion that catches its own stack overflow);
 * - the worker's heap (`resourceLimits`): a worker that runs out of it dies, its job fails with a
 *   memory-limit error and the worker is replaced; QuickJS keeps its own memory limit inside;
 * - fairness: jobs wait in one queue per owner, owners are served round-robin, an owner holds at most
 *   `perOwnerWorkers` workers at once, and an owner past its budget of sandbox time per minute waits
 *   (its jobs are not failed) while the others go on. A job whose run can park (`parkWhenThrottled`)
 *   never waits for its owner's own capacity in memory: past the budget it is handed back at once, and
 *   still queued behind its owner's workers after `parkAfterMs` it is handed back then (SandboxThrottled),
 *   so the run parks and frees its slot for other owners' runs.
 * Workers start when jobs first need them and stay warm; a replaced one is started at once.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { EXPRESSION_LIMITS, ExpressionError } from '@flowdesk/contracts/expressions';
import type { LogPort } from '../domain/ports.ts';
import { CODE_LIMITS, CodeError, SandboxThrottled, type CodeJob, type ExpressionsJob, type Sandbox } from '../domain/sandbox-port.ts';
import type { OwnerSandboxUsage } from '@flowdesk/contracts';
import type { JobMessage, WorkerAnswer } from './sandbox-worker.ts';

export interface SandboxPoolOptions {
  /** Worker threads (ENGINE_SANDBOX_WORKERS; default: the cores, at least 2, at most 8). */
  workers: number;
  /** Workers one owner may hold at once (ENGINE_SANDBOX_OWNER_WORKERS; default workers − 1, at least 1). */
  perOwnerWorkers: number;
  /** Sandbox time an owner may use per minute, in ms (ENGINE_SANDBOX_BUDGET_MS_PER_MINUTE, default 20 000). */
  budgetMsPerMinute: number;
  /**
   * A job whose run can park, still queued this long while its owner holds all its workers, is handed
   * back so its run parks instead of holding its slot (ENGINE_SANDBOX_PARK_AFTER_MS, default 250).
   */
  parkAfterMs: number;
  /** A Code job's limit (CODE_LIMITS.timeoutMs) and an expressions job's (EXPRESSION_LIMITS.timeoutMs). */
  codeTimeoutMs: number;
  expressionTimeoutMs: number;
  /** Past its limit by this much, a job's worker is terminated (QuickJS's own interrupt usually answers first). */
  graceMs: number;
  /** A worker's V8 heap, MB (ENGINE_SANDBOX_WORKER_HEAP_MB, default 128). */
  workerHeapMb: number;
  log?: LogPort;
  metrics?: SandboxMetrics;
}

/** The pool's counters for the engine's metrics (adapters/telemetry.ts): no owner label, a few values each. */
export interface SandboxMetrics {
  jobFinished(kind: 'code' | 'expressions', outcome: 'ok' | 'error' | 'timeout' | 'memory', seconds: number): void;
  throttled(): void;
}

/** One owner's counters since the pool started. */
export interface OwnerSandboxStats {
  jobs: number;
  sandboxMs: number;
  timeouts: number;
  memoryFailures: number;
  /** Jobs that had to wait because the owner was past its budget. */
  throttled: number;
  /** Jobs handed back (their run parked) after waiting `parkAfterMs` behind the owner's own workers. */
  parkedForWorkers: number;
  queued: number;
  running: number;
}

export function defaultSandboxPoolOptions(): SandboxPoolOptions {
  const workers = Math.min(8, Math.max(2, availableParallelism()));
  return {
    workers,
    perOwnerWorkers: Math.max(1, workers - 1),
    budgetMsPerMinute: 20_000,
    parkAfterMs: 250,
    codeTimeoutMs: CODE_LIMITS.timeoutMs,
    expressionTimeoutMs: EXPRESSION_LIMITS.timeoutMs,
    graceMs: 100,
    workerHeapMb: 128,
  };
}

const positive = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => {
  const v = Number(env[name] || fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
};

/** ENGINE_SANDBOX_WORKERS, ENGINE_SANDBOX_OWNER_WORKERS, ENGINE_SANDBOX_BUDGET_MS_PER_MINUTE, ENGINE_SANDBOX_PARK_AFTER_MS, ENGINE_SANDBOX_WORKER_HEAP_MB. */
export function sandboxPoolOptionsFromEnv(env: NodeJS.ProcessEnv): Partial<SandboxPoolOptions> {
  const workers = positive(env, 'ENGINE_SANDBOX_WORKERS', defaultSandboxPoolOptions().workers);
  return {
    workers,
    perOwnerWorkers: positive(env, 'ENGINE_SANDBOX_OWNER_WORKERS', Math.max(1, workers - 1)),
    budgetMsPerMinute: positive(env, 'ENGINE_SANDBOX_BUDGET_MS_PER_MINUTE', 20_000),
    parkAfterMs: positive(env, 'ENGINE_SANDBOX_PARK_AFTER_MS', 250),
    workerHeapMb: positive(env, 'ENGINE_SANDBOX_WORKER_HEAP_MB', 128),
  };
}

interface Job {
  ownerId: string;
  message: JobMessage;
  timeoutMs: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
  signal?: AbortSignal;
  onAbort?: () => void;
  throttled: boolean;
  startedAt: number;
  /** When it was queued (performance.now()). */
  queuedAt: number;
  /** CodeJob.parkWhenThrottled: handed back with SandboxThrottled rather than kept waiting for its owner's budget or workers. */
  parkable: boolean;
  /** A parkable job's look, every parkAfterMs while it is queued: handed back if its owner holds all its workers. */
  parkTimer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  jobId: number;
  timer?: NodeJS.Timeout;
  /** Terminated by the pool (deadline, close): its exit is expected. */
  stopped: boolean;
  /** Resolves when the worker is ready (or gone). */
  started: Promise<void>;
  markStarted(): void;
}

interface Owner {
  queue: Job[];
  running: number;
  /** Sandbox ms the owner may still use (a token bucket refilled at budget per minute, holding at most one budget). */
  balance: number;
  refilledAt: number;
  /** The last time to try again handed to a parked job: parked jobs are spread out at the rate the budget allows. */
  retryAt: number;
  /** The same for jobs handed back behind the owner's workers: spread out at the rate its workers get through jobs. */
  workersRetryAt: number;
  stats: OwnerSandboxStats;
}

// Built (dist/), the worker is a .js file; from source (`npm start`, tests under tsx) it is TypeScript, which a
// worker thread loads once tsx's loader is registered in it (tsx's hooks do not reach worker threads by themselves).
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCE ? './sandbox-worker.ts' : './sandbox-worker.js', import.meta.url);
const WORKER_SOURCE = FROM_SOURCE
  ? new URL(
      `data:text/javascript,${encodeURIComponent(`import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register(); await import(${JSON.stringify(WORKER_URL.href)});`)}`,
    )
  : WORKER_URL;

export class SandboxPool implements Sandbox {
  readonly options: SandboxPoolOptions;
  private readonly slots: Slot[] = [];
  private readonly owners = new Map<string, Owner>();
  /** Owners with queued jobs, in the order they are served next. */
  private ring: string[] = [];
  private nextId = 1;
  private wake?: NodeJS.Timeout;
  private closed = false;
  private awaitingStart = 0;

  constructor(options: Partial<SandboxPoolOptions> = {}) {
    this.options = { ...defaultSandboxPoolOptions(), ...options };
  }

  runCode(job: CodeJob): Promise<unknown> {
    return this.submit(
      job.ownerId,
      { kind: 'code', code: job.code, data: job.data, timeoutMs: this.options.codeTimeoutMs },
      this.options.codeTimeoutMs,
      job.signal,
      job.parkWhenThrottled === true,
    );
  }

  async evaluate(job: ExpressionsJob): Promise<unknown[]> {
    if (job.sources.length === 0) return [];
    return (await this.submit(
      job.ownerId,
      { kind: 'expressions', sources: job.sources, scope: job.scope },
      this.options.expressionTimeoutMs,
      job.signal,
      job.parkWhenThrottled === true,
    )) as unknown[];
  }

  /** One owner's counters (zeros for an owner never seen). */
  ownerStats(ownerId: string): OwnerSandboxStats {
    const owner = this.owners.get(ownerId);
    return owner ? { ...owner.stats, queued: owner.queue.length, running: owner.running } : emptyStats();
  }

  /** The owner's sandbox time against its budget now (GET /api/v1/workflow-runs/usage). */
  ownerBudget(ownerId: string): OwnerSandboxUsage {
    const budget = this.options.budgetMsPerMinute;
    const owner = this.owners.get(ownerId);
    if (!owner) return { usedMsPerMinute: 0, budgetMsPerMinute: budget, totalMs: 0, jobs: 0, timeouts: 0, memoryKills: 0, waiting: 0, overBudget: false };
    this.refill(owner, performance.now());
    return {
      usedMsPerMinute: Math.max(0, Math.round(budget - owner.balance)),
      budgetMsPerMinute: budget,
      totalMs: Math.round(owner.stats.sandboxMs),
      jobs: owner.stats.jobs,
      timeouts: owner.stats.timeouts,
      memoryKills: owner.stats.memoryFailures,
      waiting: owner.queue.length,
      overBudget: owner.balance <= 0,
    };
  }

  /** Every owner's counters, for metrics and the console. */
  allOwnerStats(): Map<string, OwnerSandboxStats> {
    return new Map([...this.owners.keys()].map((id) => [id, this.ownerStats(id)]));
  }

  /** Starts every worker now (else they start as jobs need them); resolves once all are ready. */
  async start(): Promise<void> {
    while (this.slots.length < this.options.workers) this.spawn();
    this.awaitingStart++;
    this.keepAlive();
    try {
      await Promise.all(this.slots.map((s) => s.started));
    } finally {
      this.awaitingStart--;
      this.keepAlive();
    }
  }

  /** Workers started (ready or starting). */
  get size(): number {
    return this.slots.length;
  }

  /** Stops every worker; queued and running jobs fail. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.wake);
    for (const owner of this.owners.values()) for (const job of owner.queue.splice(0)) this.settle(job, new CodeError('the engine is stopping'));
    this.ring = [];
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        slot.stopped = true;
        clearTimeout(slot.timer);
        if (slot.job) this.settle(slot.job, new CodeError('the engine is stopping'));
        return slot.worker.terminate();
      }),
    );
  }

  private submit(ownerId: string, message: JobMessage, timeoutMs: number, signal?: AbortSignal, parkable = false): Promise<unknown> {
    if (this.closed) return Promise.reject(new CodeError('the engine is stopping'));
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (parkable) {
      const owner = this.owner(ownerId);
      this.refill(owner, performance.now());
      if (owner.balance <= 0) {
        this.countThrottled(owner);
        return Promise.reject(new SandboxThrottled(this.parkUntil(owner)));
      }
    }
    return new Promise((resolve, reject) => {
      const job: Job = {
        ownerId,
        message,
        timeoutMs,
        resolve,
        reject,
        throttled: false,
        startedAt: 0,
        queuedAt: performance.now(),
        parkable,
        ...(signal ? { signal } : {}),
      };
      if (signal) {
        job.onAbort = () => {
          const owner = this.owners.get(ownerId);
          const at = owner?.queue.indexOf(job) ?? -1;
          if (at >= 0) {
            this.unqueue(owner!, at);
            this.settle(job, signal.reason as Error);
          }
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      const owner = this.owner(ownerId);
      owner.queue.push(job);
      if (owner.queue.length === 1) this.ring.push(ownerId);
      if (parkable) this.lookLater(job);
      this.pump();
    });
  }

  /** Takes the job at `at` out of its owner's queue (and an owner left with none out of the ring). */
  private unqueue(owner: Owner, at: number): void {
    const [job] = owner.queue.splice(at, 1);
    const r = owner.queue.length === 0 && job ? this.ring.indexOf(job.ownerId) : -1;
    if (r >= 0) this.ring.splice(r, 1);
  }

  private lookLater(job: Job): void {
    job.parkTimer = setTimeout(() => this.handBackIfHeld(job), this.options.parkAfterMs);
    // The queued job itself keeps the process alive (keepAlive refs the workers while the ring holds it).
    job.parkTimer.unref();
  }

  /**
   * A parkable job still queued `parkAfterMs` after it was queued (or last looked at; its timer is
   * cleared when it leaves the queue): when it waits for its owner's own capacity (all of the owner's
   * workers busy, or its budget used), it and every other parkable job of the owner queued that long
   * are handed back, so their runs park and their slots serve other owners; a job waiting only for a
   * free worker in its turn (the owner under its cap: other owners' jobs, a worker starting) stays
   * and is looked at again.
   */
  private handBackIfHeld(job: Job): void {
    job.parkTimer = undefined;
    const owner = this.owners.get(job.ownerId);
    if (!owner || this.closed) return;
    const now = performance.now();
    this.refill(owner, now);
    const overBudget = owner.balance <= 0;
    if (!overBudget && owner.running < this.options.perOwnerWorkers) return this.lookLater(job);
    const back: { job: Job; ahead: number }[] = [];
    const kept: Job[] = [];
    for (const j of owner.queue) {
      if (j.parkable && (j === job || now - j.queuedAt >= this.options.parkAfterMs)) back.push({ job: j, ahead: back.length + kept.length });
      else kept.push(j);
    }
    owner.queue = kept;
    if (kept.length === 0) {
      const r = this.ring.indexOf(job.ownerId);
      if (r >= 0) this.ring.splice(r, 1);
    }
    for (const b of back) {
      if (overBudget) {
        this.countThrottled(owner);
        this.settle(b.job, new SandboxThrottled(this.parkUntil(owner)));
      } else {
        owner.stats.parkedForWorkers++;
        this.settle(b.job, new SandboxThrottled(this.parkForWorkers(owner, b.ahead), 'workers'));
      }
    }
    this.keepAlive();
  }

  private owner(ownerId: string): Owner {
    let owner = this.owners.get(ownerId);
    if (!owner) {
      owner = {
        queue: [],
        running: 0,
        balance: this.options.budgetMsPerMinute,
        refilledAt: performance.now(),
        retryAt: 0,
        workersRetryAt: 0,
        stats: emptyStats(),
      };
      this.owners.set(ownerId, owner);
    }
    return owner;
  }

  private refill(owner: Owner, now: number): void {
    const budget = this.options.budgetMsPerMinute;
    owner.balance = Math.min(budget, owner.balance + ((now - owner.refilledAt) * budget) / 60_000);
    owner.refilledAt = now;
  }

  private countThrottled(owner: Owner): void {
    owner.stats.throttled++;
    this.options.metrics?.throttled();
  }

  /**
   * When a parked job of an owner past its budget should try again: once the budget is back above
   * zero, and after the jobs parked before it, each counted at the owner's mean job time in budget
   * (refilled at budget per minute), so woken runs come one by one, not all at the same refill.
   */
  private parkUntil(owner: Owner): Date {
    const now = performance.now();
    const perMs = this.options.budgetMsPerMinute / 60_000;
    const from = Math.max(now + Math.max(0, -owner.balance) / perMs, owner.retryAt);
    owner.retryAt = from + meanJobMs(owner) / perMs;
    return new Date(Date.now() + Math.ceil(owner.retryAt - now));
  }

  /**
   * When a job handed back behind its owner's workers should try again: after the `ahead` jobs queued
   * before it, at the rate the owner's workers get through its jobs (its mean job time), and at least
   * parkAfterMs from now; jobs handed back one after another are spread out one job's share apart.
   */
  private parkForWorkers(owner: Owner, ahead: number): Date {
    const now = performance.now();
    const perJob = meanJobMs(owner) / this.options.perOwnerWorkers;
    const from = Math.max(now + this.options.parkAfterMs + (ahead + 1) * perJob, owner.workersRetryAt);
    owner.workersRetryAt = from + perJob;
    return new Date(Date.now() + Math.ceil(from - now));
  }

  /** Starts queued jobs on idle workers, owners in turn; starts workers the queue needs. */
  private pump(): void {
    if (this.closed) return;
    for (;;) {
      const slot = this.slots.find((s) => s.ready && !s.job);
      if (!slot) break;
      const job = this.nextJob();
      if (!job) break;
      this.dispatch(slot, job);
    }
    // Lazily: a worker more for each job that could start now, up to the pool's size.
    const starting = this.slots.filter((s) => !s.ready).length;
    let wanted = Math.min(this.options.workers - this.slots.length, this.startable() - starting);
    while (wanted-- > 0) this.spawn();
    this.keepAlive();
  }

  /** Queued jobs that could start if a worker were free (owners under their worker cap and budget). */
  private startable(): number {
    let n = 0;
    const now = performance.now();
    for (const id of this.ring) {
      const owner = this.owners.get(id)!;
      this.refill(owner, now);
      if (owner.balance > 0) n += Math.min(owner.queue.length, Math.max(0, this.options.perOwnerWorkers - owner.running));
    }
    return n;
  }

  /** The next owner's next job (round-robin); owners at their worker cap or past their budget are passed over. */
  private nextJob(): Job | undefined {
    const now = performance.now();
    let throttledUntil = Infinity;
    for (let i = 0; i < this.ring.length; i++) {
      const id = this.ring[i]!;
      const owner = this.owners.get(id)!;
      if (owner.running >= this.options.perOwnerWorkers) continue;
      this.refill(owner, now);
      if (owner.balance <= 0) {
        // Jobs whose run can park are handed back now (no run slot held while the budget refills).
        if (owner.queue.some((j) => j.parkable)) {
          const parkable = owner.queue.filter((j) => j.parkable);
          owner.queue = owner.queue.filter((j) => !j.parkable);
          for (const j of parkable) {
            this.countThrottled(owner);
            this.settle(j, new SandboxThrottled(this.parkUntil(owner)));
          }
          if (owner.queue.length === 0) {
            this.ring.splice(i--, 1);
            continue;
          }
        }
        const head = owner.queue[0]!;
        if (!head.throttled) {
          head.throttled = true;
          this.countThrottled(owner);
        }
        throttledUntil = Math.min(throttledUntil, now + (-owner.balance * 60_000) / this.options.budgetMsPerMinute + 1);
        continue;
      }
      const job = owner.queue.shift()!;
      // Served: to the back of the ring (or out of it, nothing left).
      this.ring.splice(i, 1);
      if (owner.queue.length > 0) this.ring.push(id);
      return job;
    }
    if (throttledUntil !== Infinity && !this.wake) {
      this.wake = setTimeout(
        () => {
          this.wake = undefined;
          this.pump();
        },
        Math.ceil(throttledUntil - now),
      );
    }
    return undefined;
  }

  private dispatch(slot: Slot, job: Job): void {
    if (job.onAbort) job.signal!.removeEventListener('abort', job.onAbort);
    clearTimeout(job.parkTimer);
    job.parkTimer = undefined;
    const owner = this.owner(job.ownerId);
    owner.running++;
    slot.job = job;
    slot.jobId = this.nextId++;
    job.startedAt = performance.now();
    slot.timer = setTimeout(() => this.overran(slot), job.timeoutMs + this.options.graceMs);
    try {
      slot.worker.postMessage({ ...job.message, id: slot.jobId });
    } catch (err) {
      // Data that cannot be copied to a worker (it came from JSON: should not happen).
      this.finish(
        slot,
        job.message.kind === 'code'
          ? new CodeError(`the code's input could not be sent to the sandbox: ${(err as Error).message}`)
          : expressionFailure(job, `could not be sent to the sandbox: ${(err as Error).message}`),
        'error',
      );
    }
  }

  /** A job ended (answered, overran, or its worker died): charges its owner and settles it. */
  private finish(slot: Slot, result: { value: unknown } | Error, outcome: 'ok' | 'error' | 'timeout' | 'memory'): void {
    const job = slot.job;
    if (!job) return;
    clearTimeout(slot.timer);
    slot.job = null;
    const ms = performance.now() - job.startedAt;
    const owner = this.owner(job.ownerId);
    owner.running--;
    owner.balance -= ms;
    owner.stats.jobs++;
    owner.stats.sandboxMs += ms;
    if (outcome === 'timeout') owner.stats.timeouts++;
    if (outcome === 'memory') owner.stats.memoryFailures++;
    this.options.metrics?.jobFinished(job.message.kind, outcome, ms / 1000);
    this.settle(job, result);
    queueMicrotask(() => this.pump());
  }

  private settle(job: Job, result: { value: unknown } | Error): void {
    if (job.onAbort) job.signal!.removeEventListener('abort', job.onAbort);
    clearTimeout(job.parkTimer);
    job.parkTimer = undefined;
    if (result instanceof Error) job.reject(result);
    else job.resolve(result.value);
  }

  /** The deadline: the worker is terminated (whatever it does) and replaced; the job fails naming the limit. */
  private overran(slot: Slot): void {
    const job = slot.job;
    if (!job) return;
    this.retire(slot);
    const limit = job.timeoutMs;
    this.finish(
      slot,
      job.message.kind === 'code'
        ? new CodeError(`the code ran longer than its limit of ${limit} ms and was stopped`)
        : expressionFailure(job, `ran longer than its limit of ${limit} ms and was stopped`),
      'timeout',
    );
    this.options.log?.warn({ ownerId: job.ownerId, kind: job.message.kind, limitMs: limit }, 'sandbox job stopped at its deadline; worker replaced');
  }

  /** Takes a worker out of the pool and terminates it; a replacement starts at once (the pool stays warm). */
  private retire(slot: Slot): void {
    slot.stopped = true;
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    void slot.worker.terminate();
    if (!this.closed) this.spawn();
  }

  private spawn(): void {
    const worker = new Worker(WORKER_SOURCE, {
      resourceLimits: { maxOldGenerationSizeMb: this.options.workerHeapMb, maxYoungGenerationSizeMb: 16 },
      // Its output is the engine's (a worker writes nothing itself; an uncaught error is reported below).
      stdout: false,
      stderr: false,
    });
    let markStarted = () => {};
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const slot: Slot = { worker, ready: false, job: null, jobId: 0, stopped: false, started, markStarted };
    this.slots.push(slot);
    worker.on('message', (answer: WorkerAnswer) => {
      if ('ready' in answer) {
        slot.ready = true;
        slot.markStarted();
        this.pump();
        return;
      }
      const job = slot.job;
      if (!job || answer.id !== slot.jobId) return;
      if (answer.ok) return this.finish(slot, { value: answer.value }, 'ok');
      const e = answer.error;
      const err =
        e.type === 'code'
          ? new CodeError(e.message)
          : e.type === 'expression'
            ? new ExpressionError(e.source, e.reason)
            : job.message.kind === 'code'
              ? new CodeError(`the code failed inside the sandbox: ${e.message}`)
              : expressionFailure(job, `failed: ${e.message}`);
      this.finish(slot, err, 'error');
    });
    let failure: Error | undefined;
    worker.on('error', (err) => (failure = err));
    worker.on('exit', () => {
      if (slot.stopped) return;
      // Died on its own: out of heap (resourceLimits), or a fault.
      slot.markStarted();
      slot.stopped = true;
      const at = this.slots.indexOf(slot);
      if (at >= 0) this.slots.splice(at, 1);
      const job = slot.job;
      const oom = (failure as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      if (job) {
        const mb = this.options.workerHeapMb;
        const err = oom
          ? job.message.kind === 'code'
            ? new CodeError(`the code used more than its memory limit of ${mb} MB and was stopped`)
            : expressionFailure(job, `used more than its memory limit of ${mb} MB and was stopped`)
          : job.message.kind === 'code'
            ? new CodeError(`the code failed inside the sandbox: its worker stopped (${failure?.message ?? 'exited'})`)
            : expressionFailure(job, `failed: its sandbox worker stopped (${failure?.message ?? 'exited'})`);
        this.finish(slot, err, oom ? 'memory' : 'error');
        this.options.log?.warn({ ownerId: job.ownerId, kind: job.message.kind, err: failure?.message }, 'sandbox worker died during a job; replaced');
      }
      if (this.closed) return;
      if (slot.ready) {
        this.spawn();
      } else {
        // It never started (the worker's module does not load): the jobs waiting for it fail, not hang.
        this.options.log?.error({ err: failure?.message }, 'sandbox worker could not start');
        if (!this.slots.some((s) => s.ready)) {
          for (const id of this.ring.splice(0)) {
            for (const queued of this.owners.get(id)!.queue.splice(0))
              this.settle(queued, new CodeError(`the sandbox could not start: ${failure?.message ?? 'its worker exited'}`));
          }
        }
      }
      this.keepAlive();
    });
  }

  /** Workers hold the process open only while they have work (queued or running). */
  private keepAlive(): void {
    const busy = this.awaitingStart > 0 || this.ring.length > 0 || this.slots.some((s) => s.job);
    for (const s of this.slots) {
      if (busy) s.worker.ref();
      else s.worker.unref();
    }
  }
}

function expressionFailure(job: Job, reason: string): ExpressionError {
  const sources = job.message.kind === 'expressions' ? job.message.sources : [];
  return new ExpressionError(sources.join(' }}, {{= '), reason);
}

function emptyStats(): OwnerSandboxStats {
  return { jobs: 0, sandboxMs: 0, timeouts: 0, memoryFailures: 0, throttled: 0, parkedForWorkers: 0, queued: 0, running: 0 };
}

/** The owner's mean sandbox time per job so far (at least 10 ms; 100 ms before its first job ends). */
function meanJobMs(owner: Owner): number {
  return owner.stats.jobs > 0 ? Math.max(10, owner.stats.sandboxMs / owner.stats.jobs) : 100;
}
