/**
 * Fairness across owners (docs/workflow-engine.md, "Fairness across owners"). The bus delivers trigger
 * events first come, first served; here each replica caps the runs one owner has in flight
 * (`ownerConcurrency`). An event whose owner is at its cap does not hold its delivery (that would fill
 * the consumer's slots and block every other owner): it is stored in a durable per-owner queue
 * (RunQueuePort, engine.run_queue) and acknowledged. A scheduler starts queued runs round-robin across
 * owners (one per owner per round) as their owners' runs finish, on whichever replica claims them
 * (a lease, compare-and-set). Under the cap nothing is written: the hot path is two map operations.
 *
 * A workflow set to `ordered` is not queued (a queue would let its next event overtake): its delivery
 * waits for its owner's slot, which holds at most one consumer slot per such workflow (the bus runs
 * an ordered workflow's events one at a time).
 *
 * When an owner's queue passes `maxBacklog` the owner is throttled: `onThrottle` tells intake
 * (webhook-ingest answers that owner's workflows 429 with a Retry-After that follows the queue's
 * measured drain rate), refreshed while it lasts and lifted once the queue is back under it.
 */
import {
  RECENT_REFUSALS,
  type OwnerSandboxUsage,
  type OwnerThrottle,
  type OwnerUsage,
  type StartRefusal,
  type ThrottleState,
  type TriggerEvent,
  type WorkflowThrottle,
} from '@flowdesk/contracts';
import type { Clock, LogPort } from './ports.ts';
import { listenForWakeUps, type WakeUpListener, type WakeUps } from './wake-ups.ts';

export interface QueuedRun {
  id: string;
  event: TriggerEvent;
  /** Claims so far, this one included. */
  attempts: number;
  leaseUntil: Date;
}

/** The durable per-owner queue (adapters/run-queue.ts). */
export interface RunQueuePort {
  /** Stores the event (once per event: a redelivery is not queued twice). */
  enqueue(event: TriggerEvent): Promise<void>;
  /** Owners with claimable rows, and how many each. */
  owners(now: Date): Promise<Map<string, number>>;
  /** Claims the owner's oldest claimable row until `leaseUntil` (one replica wins). */
  claim(ownerId: string, now: Date, leaseUntil: Date): Promise<QueuedRun | null>;
  renew(runs: readonly QueuedRun[], leaseUntil: Date): Promise<void>;
  /** The run was handled: the row goes. */
  done(run: QueuedRun): Promise<void>;
  /** The run failed to be handled (the database, a restart): claimable again at `at`. */
  retryAt(run: QueuedRun, at: Date): Promise<void>;
  /** The owner's queued rows, leased ones included. */
  backlog(ownerId: string): Promise<number>;
  /** The owner's queued rows by workflow (at most `limit` workflows, the longest queues first). */
  backlogByWorkflow?(ownerId: string, limit: number): Promise<Map<string, number>>;
}

export interface FairnessLimits {
  /** Runs of one owner in flight on a replica (ENGINE_OWNER_CONCURRENCY, default half of ENGINE_CONCURRENCY). */
  ownerConcurrency: number;
  /** Queued runs a replica runs at once, all owners together (a pool of its own, default ENGINE_CONCURRENCY). */
  concurrency: number;
  /** An owner with this many queued runs is throttled at intake (ENGINE_OWNER_MAX_BACKLOG, default 1,000; 0: never). */
  maxBacklog: number;
  /** How often a replica looks for queued runs while some are queued (default 1000 ms; also kicked by every enqueue and finish here). */
  pollMs: number;
  /**
   * With nothing queued anywhere (as last read) and nothing throttled: how often it looks anyway, the
   * safety poll (default 10 s). Another replica's enqueue wakes it at once (`wakeUps`), so this only
   * bounds a lost notification and the lease of a replica that died holding a queued run.
   */
  idlePollMs: number;
  /** A claimed row's lease, renewed at a third of it while the run goes on (default 30 s). */
  leaseMs: number;
  /** Claims of one queued run before it is given up (recorded as a failed run, as a dead letter). Default 25. */
  maxAttempts: number;
}

export const DEFAULT_FAIRNESS: Omit<FairnessLimits, 'ownerConcurrency' | 'concurrency'> = {
  maxBacklog: 1_000,
  pollMs: 1_000,
  idlePollMs: 10_000,
  leaseMs: 30_000,
  maxAttempts: 25,
};

/** What one owner did on this replica since it started (GET /api/v1/workflow-runs/usage, contracts OwnerUsage). */
export interface OwnerCounters {
  /** Runs started here: delivered under the cap, or from the queue. */
  runs: number;
  /** Runs started here that ended (however). */
  finished: number;
  /** Events that found their owner at its cap and were queued. */
  throttled: number;
  /** Starts refused by a quota (quotas.ts), by quota. */
  refused: Record<string, number>;
  /** The latest refusals, newest first (at most RECENT_REFUSALS). */
  recent: StartRefusal[];
}

/** How long intake keeps a throttle without a refresh (a replica that stopped publishing lets it lapse). */
export const THROTTLE_TTL_MS = 5_000;
/** Retry-After when nothing of the owner's queue drained lately. */
const STALLED_RETRY_AFTER_SECONDS = 10;
const MAX_RETRY_AFTER_SECONDS = 60;
const DRAIN_WINDOW_MS = 10_000;
const MAX_OWNERS = 100_000;

export interface OwnerFairnessDeps extends Partial<FairnessLimits> {
  store: RunQueuePort;
  /** Runs one trigger event to its end (processTriggerEvent). */
  run(event: TriggerEvent): Promise<void>;
  /** Whether the event's workflow is set to run one at a time, in order (not queued). */
  isOrdered(event: TriggerEvent): Promise<boolean>;
  /** A queued run claimed `maxAttempts` times without being handled: recorded as failed (the dead-letter path). */
  giveUp(event: TriggerEvent, attempts: number, err: unknown): Promise<void>;
  /** Publishes an owner's throttle state to intake (the owner-throttle topic). */
  onThrottle?(state: OwnerThrottle): Promise<void>;
  /** Counts an event queued behind its owner's cap (Prometheus, no owner label). */
  countThrottled?(): void;
  /** The owner's sandbox time against its budget (the sandbox pool), for the usage API. */
  sandboxUsage?(ownerId: string): OwnerSandboxUsage;
  /** Another replica queued a run (LISTEN on the run queue's channel; migration 20270321000000_run_queue_notify). */
  wakeUps?: WakeUps;
  clock: Clock;
  log: LogPort;
}

export class OwnerFairness {
  readonly limits: FairnessLimits;
  private readonly inFlight = new Map<string, number>();
  /** Ordered deliveries waiting for their owner's slot (a finished run hands its slot to them first). */
  private readonly waiters = new Map<string, (() => void)[]>();
  /** Claimable queued rows per owner, as last read (plus what this replica queued since). */
  private queued = new Map<string, number>();
  private readonly counters = new Map<string, OwnerCounters>();
  /** Queued runs started per owner: [when], the last DRAIN_WINDOW_MS (the drain rate). */
  private readonly drained = new Map<string, number[]>();
  private readonly throttled = new Map<string, { retryAfterSeconds: number; publishedAt: number }>();
  private readonly held = new Set<QueuedRun>();
  private active = 0;
  private pumping = false;
  private again = false;
  private cursor = '';
  private closed = false;
  private poll: ReturnType<typeof setInterval> | undefined;
  /** The last read found nothing queued and nothing throttled: the poll reads only every idlePollMs. */
  private quiet = false;
  private lastRead = 0;
  /** When the retries this replica put off (failed queued runs) come due: read then, whatever the quiet. */
  private retries: number[] = [];
  private listener: WakeUpListener | undefined;
  private renewal: ReturnType<typeof setInterval> | undefined;
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly deps: OwnerFairnessDeps) {
    const concurrency = deps.concurrency ?? 256;
    this.limits = {
      concurrency,
      ownerConcurrency: deps.ownerConcurrency ?? Math.max(1, Math.floor(concurrency / 2)),
      maxBacklog: deps.maxBacklog ?? DEFAULT_FAIRNESS.maxBacklog,
      pollMs: deps.pollMs ?? DEFAULT_FAIRNESS.pollMs,
      idlePollMs: deps.idlePollMs ?? DEFAULT_FAIRNESS.idlePollMs,
      leaseMs: deps.leaseMs ?? DEFAULT_FAIRNESS.leaseMs,
      maxAttempts: deps.maxAttempts ?? DEFAULT_FAIRNESS.maxAttempts,
    };
  }

  start(): void {
    this.poll = setInterval(() => this.tick(), this.limits.pollMs);
    this.poll.unref();
    this.listener = listenForWakeUps(
      this.deps.wakeUps,
      () => this.kick(),
      (err) => {
        this.deps.log.warn({ err }, 'the run queue gets no wake-ups; looking every poll');
        this.limits.idlePollMs = this.limits.pollMs;
      },
    );
    this.renewal = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.limits.leaseMs / 3)));
    this.renewal.unref();
    this.kick();
  }

  /** Settles once this replica listens for other replicas' enqueues (or listening failed and it polls instead). */
  listening(): Promise<void> {
    return this.listener?.ready ?? Promise.resolve();
  }

  /** Stops claiming and waits for the queued runs in flight here (their rows are deleted, or left to another replica). */
  async stop(): Promise<void> {
    this.closed = true;
    clearInterval(this.poll);
    clearInterval(this.renewal);
    await this.listener?.stop();
    while (this.pumping || this.running.size > 0) await Promise.race([...this.running, new Promise((r) => setTimeout(r, 20))]);
  }

  /**
   * The trigger consumer's handler: runs the event now when its owner is under its cap (and has
   * nothing queued, so it does not overtake its own queue), else queues it and returns (the bus
   * acknowledges it once stored).
   */
  async admit(event: TriggerEvent): Promise<void> {
    const owner = event.ownerId;
    const n = this.inFlight.get(owner) ?? 0;
    if (n < this.limits.ownerConcurrency && !this.queued.get(owner)) {
      this.inFlight.set(owner, n + 1);
      return this.runHere(event);
    }
    if (await this.deps.isOrdered(event)) {
      await this.slot(owner);
      return this.runHere(event);
    }
    await this.deps.store.enqueue(event);
    this.queued.set(owner, (this.queued.get(owner) ?? 0) + 1);
    this.count(owner).throttled++;
    this.deps.countThrottled?.();
    this.kick();
  }

  /** A quota refused one of the owner's starts (quotas.ts); `setting` names the limit, `message` is the step's error. */
  refused(ownerId: string, quota: string, setting = quota, message = `refused by ${setting}`): void {
    const c = this.count(ownerId);
    c.refused[quota] = (c.refused[quota] ?? 0) + 1;
    c.recent.unshift({ at: this.deps.clock().toISOString(), quota, setting, message: message.slice(0, 1000) });
    if (c.recent.length > RECENT_REFUSALS) c.recent.length = RECENT_REFUSALS;
  }

  /** Every owner's counters on this replica (the per-owner metrics, adapters/telemetry.ts). */
  ownerCounters(): ReadonlyMap<string, Readonly<OwnerCounters>> {
    return this.counters;
  }

  /** Whether intake refuses the owner's webhooks now (its backlog passed maxBacklog). */
  intakeThrottled(ownerId: string): boolean {
    return this.throttled.has(ownerId);
  }

  async usage(ownerId: string): Promise<OwnerUsage> {
    const c = this.counters.get(ownerId) ?? { runs: 0, finished: 0, throttled: 0, refused: {}, recent: [] };
    const t = this.throttled.get(ownerId);
    const inFlight = this.inFlight.get(ownerId) ?? 0;
    const [queued, byWorkflow] = await Promise.all([
      this.deps.store.backlog(ownerId),
      this.deps.store.backlogByWorkflow?.(ownerId, 100) ?? Promise.resolve(new Map<string, number>()),
    ]);
    const sandbox = this.deps.sandboxUsage?.(ownerId) ?? {
      usedMsPerMinute: 0,
      budgetMsPerMinute: 1,
      totalMs: 0,
      jobs: 0,
      timeouts: 0,
      memoryKills: 0,
      waiting: 0,
      overBudget: false,
    };
    const reasons: ThrottleState[] = [];
    if (t)
      reasons.push({
        reason: 'backlog',
        setting: 'ENGINE_OWNER_MAX_BACKLOG',
        message: `${queued} runs wait in your queue, more than its bound of ${this.limits.maxBacklog}: webhooks of your workflows are answered 429 until it drains`,
        retryAfterSeconds: t.retryAfterSeconds,
      });
    if (inFlight >= this.limits.ownerConcurrency && queued > 0)
      reasons.push({
        reason: 'in_flight',
        setting: 'ENGINE_OWNER_CONCURRENCY',
        message: `${inFlight} of your runs are in flight, your cap: new runs wait in your queue and start as these end`,
        retryAfterSeconds: null,
      });
    if (sandbox.overBudget && sandbox.waiting > 0) {
      const refillMs = ((sandbox.usedMsPerMinute - sandbox.budgetMsPerMinute) * 60_000) / sandbox.budgetMsPerMinute;
      reasons.push({
        reason: 'sandbox_budget',
        setting: 'ENGINE_SANDBOX_BUDGET_MS_PER_MINUTE',
        message: `your Code steps and expressions used ${sandbox.usedMsPerMinute} ms of sandbox time this minute, over the budget of ${sandbox.budgetMsPerMinute} ms: they wait until it refills`,
        retryAfterSeconds: Math.max(1, Math.ceil(refillMs / 1000)),
      });
    }
    const workflows: WorkflowThrottle[] = [...byWorkflow]
      .filter(([, n]) => n > 0)
      .map(([workflowId, n]) => ({
        workflowId,
        queued: n,
        reason: t ? ('backlog' as const) : ('in_flight' as const),
        retryAfterSeconds: t?.retryAfterSeconds ?? null,
      }));
    return {
      ownerId,
      checkedAt: this.deps.clock().toISOString(),
      runs: c.runs,
      runsFinished: c.finished,
      throttled: c.throttled,
      refused: { ...c.refused },
      recentRefusals: c.recent.map((r) => ({ ...r })),
      inFlight,
      ownerConcurrency: this.limits.ownerConcurrency,
      queued,
      maxBacklog: this.limits.maxBacklog,
      intakeThrottled: t !== undefined,
      retryAfterSeconds: t?.retryAfterSeconds ?? null,
      sandbox,
      throttle: { active: reasons.length > 0, reasons },
      workflows,
    };
  }

  private async runHere(event: TriggerEvent): Promise<void> {
    this.count(event.ownerId).runs++;
    try {
      await this.deps.run(event);
    } finally {
      this.count(event.ownerId).finished++;
      this.release(event.ownerId);
    }
  }

  /** Waits until the owner has a free slot, and takes it. */
  private slot(owner: string): Promise<void> {
    const n = this.inFlight.get(owner) ?? 0;
    if (n < this.limits.ownerConcurrency) {
      this.inFlight.set(owner, n + 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const list = this.waiters.get(owner) ?? [];
      list.push(resolve);
      this.waiters.set(owner, list);
    });
  }

  private release(owner: string): void {
    const next = this.waiters.get(owner)?.shift();
    if (next) return next(); // the slot passes on
    if (this.waiters.get(owner)?.length === 0) this.waiters.delete(owner);
    const n = (this.inFlight.get(owner) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(owner);
    else this.inFlight.set(owner, n);
    // Only an owner with queued runs (here or, as last read, anywhere) makes this cost a read.
    if (this.queued.size > 0) this.kick();
  }

  private count(owner: string): OwnerCounters {
    let c = this.counters.get(owner);
    if (!c) {
      if (this.counters.size >= MAX_OWNERS) this.counters.clear();
      this.counters.set(owner, (c = { runs: 0, finished: 0, throttled: 0, refused: {}, recent: [] }));
    }
    return c;
  }

  /** The poll: reads at every tick while something is queued or throttled, else every idlePollMs. */
  private tick(): void {
    // A look under way reads the queue anyway: a poll adds nothing to it (a wake-up still does, by kick).
    if (this.pumping) return;
    const now = this.deps.clock().getTime();
    if (this.quiet && now - this.lastRead < this.limits.idlePollMs && !this.retries.some((at) => at <= now)) return;
    this.kick();
  }

  private kick(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    void this.pump();
  }

  /** Rounds of one claim per owner under its cap, owners in rotation, until the pool is full or nothing is claimable. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      do {
        this.again = false;
        if (this.active >= this.limits.concurrency) break;
        const now = this.deps.clock();
        const counts = await this.deps.store.owners(now);
        this.queued = counts;
        await this.throttle(counts, now.getTime());
        this.lastRead = now.getTime();
        this.quiet = counts.size === 0 && this.throttled.size === 0;
        if (this.retries.length > 0) this.retries = this.retries.filter((at) => at > now.getTime());
        const owners = [...counts.keys()].sort();
        const from = owners.findIndex((o) => o > this.cursor);
        const rotation = from <= 0 ? owners : [...owners.slice(from), ...owners.slice(0, from)];
        let claimed = false;
        for (const owner of rotation) {
          if (this.closed || this.active >= this.limits.concurrency) break;
          if ((this.inFlight.get(owner) ?? 0) >= this.limits.ownerConcurrency) continue;
          const run = await this.deps.store.claim(owner, now, new Date(now.getTime() + this.limits.leaseMs));
          if (!run) continue;
          claimed = true;
          this.cursor = owner;
          const left = (counts.get(owner) ?? 1) - 1;
          if (left > 0) counts.set(owner, left);
          else counts.delete(owner);
          this.startQueued(run);
        }
        if (claimed) this.again = true;
      } while (this.again && !this.closed);
    } catch (err) {
      this.deps.log.warn({ err }, 'queued runs not claimed; trying again at the next poll');
    } finally {
      this.pumping = false;
    }
  }

  private startQueued(run: QueuedRun): void {
    const owner = run.event.ownerId;
    this.inFlight.set(owner, (this.inFlight.get(owner) ?? 0) + 1);
    this.active++;
    this.held.add(run);
    const at = this.deps.clock().getTime();
    const drained = this.drained.get(owner) ?? [];
    drained.push(at);
    while (drained.length > 0 && at - drained[0]! > DRAIN_WINDOW_MS) drained.shift();
    if (this.drained.size >= MAX_OWNERS) this.drained.clear();
    this.drained.set(owner, drained);
    const p = (async () => {
      try {
        this.count(owner).runs++;
        await this.deps.run(run.event);
        await this.deps.store.done(run);
      } catch (err) {
        await this.failed(run, err);
      } finally {
        this.count(owner).finished++;
        this.held.delete(run);
        this.active--;
        this.release(owner);
      }
    })();
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  private async failed(run: QueuedRun, err: unknown): Promise<void> {
    try {
      if (run.attempts >= this.limits.maxAttempts) {
        await this.deps.giveUp(run.event, run.attempts, err);
        await this.deps.store.done(run);
        return;
      }
      // Backoff as the bus's: 250 ms doubling, at most 30 s.
      const delay = Math.min(30_000, 250 * 2 ** Math.min(run.attempts - 1, 10));
      this.deps.log.warn({ err, workflowId: run.event.workflowId, eventId: run.event.eventId, attempts: run.attempts }, 'queued run failed; retried later');
      const at = this.deps.clock().getTime() + delay;
      await this.deps.store.retryAt(run, new Date(at));
      if (this.retries.length < MAX_OWNERS) this.retries.push(at);
    } catch (e) {
      // Its lease runs out and another claim retries it.
      this.deps.log.warn({ err: e, workflowId: run.event.workflowId, eventId: run.event.eventId }, 'queued run failed and could not be rescheduled');
    }
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    try {
      await this.deps.store.renew([...this.held], new Date(this.deps.clock().getTime() + this.limits.leaseMs));
    } catch (err) {
      this.deps.log.warn({ err }, 'leases of queued runs not renewed');
    }
  }

  /** Owners past maxBacklog are throttled at intake (refreshed every second), the others lifted. */
  private async throttle(counts: Map<string, number>, now: number): Promise<void> {
    const max = this.limits.maxBacklog;
    if (max <= 0) return;
    const publish = async (state: OwnerThrottle) => {
      try {
        await this.deps.onThrottle?.(state);
      } catch (err) {
        this.deps.log.warn({ err, ownerId: state.ownerId }, 'owner throttle not published');
      }
    };
    for (const [owner, backlog] of counts) {
      if (backlog < max) continue;
      const retryAfterSeconds = this.retryAfter(owner, backlog - max + 1, now);
      const last = this.throttled.get(owner);
      // Refreshed once a second (well within its TTL), whatever the estimate does in between.
      if (last && now - last.publishedAt < THROTTLE_TTL_MS / 5) continue;
      this.throttled.set(owner, { retryAfterSeconds, publishedAt: now });
      await publish({ ownerId: owner, throttled: true, backlog, retryAfterSeconds, until: new Date(now + THROTTLE_TTL_MS).toISOString() });
    }
    for (const owner of [...this.throttled.keys()]) {
      if ((counts.get(owner) ?? 0) >= max) continue;
      this.throttled.delete(owner);
      await publish({ ownerId: owner, throttled: false, backlog: counts.get(owner) ?? 0, retryAfterSeconds: 0, until: new Date(now).toISOString() });
    }
  }

  /** The time the owner's queue needs to fall under the bound at its drain rate here, 1–60 s. */
  private retryAfter(owner: string, excess: number, now: number): number {
    const starts = (this.drained.get(owner) ?? []).filter((t) => now - t <= DRAIN_WINDOW_MS);
    if (starts.length === 0) return STALLED_RETRY_AFTER_SECONDS;
    const perSecond = (starts.length * 1000) / DRAIN_WINDOW_MS;
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(excess / perSecond)));
  }
}
