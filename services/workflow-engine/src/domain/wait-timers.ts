/**
 * Wait timers (docs/workflow-engine.md, "Parking"): every replica looks in engine.run_wait for due
 * wakes (one index range scan on fire_at) and claims them by compare-and-set (one replica claims
 * each, as the scheduler's ticks); the claimer runs each woken run itself, in process (`wake`:
 * processTriggerEvent with `resume`), no trip through the bus. The claim is the lease: fire_at moves
 * to now + `leaseMs`, renewed while the run runs here; a replica that dies (or a run that throws)
 * leaves the row due again after the lease, and the next claimer resumes the run from its
 * checkpoints. Once the run is handled the row is deleted with its outcome (or replaced when it parks
 * again); what is left of it is marked done (`published`, fire_at null).
 *
 * When: after each round, the next fire_at is read and the replica sleeps until then, at most
 * `pollMs` (a slow safety poll). A statement that writes an earlier fire_at (a park, a resume, another
 * replica's claim whose lease may expire first) notifies it at its commit (`wakeUps`: LISTEN on
 * Postgres, PGlite's own in one process; migration 20270310000000_wake_notify), and the replica
 * re-plans its one timer for it: idle, nothing runs until something is due. Woken runs at once: at most
 * `concurrency` on this replica and `workflowConcurrency` per workflow (as the trigger consumer); at
 * most `batch` more are claimed ahead (the lease renewed), and a finishing run starts the next round
 * when more were due.
 * No timer lives in memory: a wake due while every engine was down is found by the first round.
 */
import type { DueWake, LogPort, WaitStorePort } from './ports.ts';
import { listenForWakeUps, type WakeUpListener, type WakeUps } from './wake-ups.ts';

export interface WaitTimersOptions {
  store: WaitStorePort;
  /** Runs one woken run to its outcome (or its next park); a throw leaves the wake due again after the lease. */
  wake: (wake: DueWake) => Promise<unknown>;
  clock: () => Date;
  log: LogPort;
  /** The longest sleep between rounds, a safety poll (WAIT_POLL_MS, default 10 s; 0: this replica wakes no runs). */
  pollMs?: number;
  /**
   * Calls fn with each notified earliest fire_at (epoch ms as text; '' after a lost connection: look
   * now); resolves with what stops it. Without it the replica looks every pollMs.
   */
  wakeUps?: WakeUps;
  /** How long a claimed wake is this replica's (default 30 s); renewed every third of it while its run runs. */
  leaseMs?: number;
  /** Wakes claimed per statement, and claimed here not started yet, at most (default 1000). */
  batch?: number;
  /** Woken runs at once on this replica (default 256, as ENGINE_CONCURRENCY). */
  concurrency?: number;
  /** Woken runs at once per workflow (default 128, as ENGINE_WORKFLOW_CONCURRENCY). */
  workflowConcurrency?: number;
}

/** The safety poll: a lost notification (a cut listener connection) is found within it. */
export const DEFAULT_POLL_MS = 10_000;

export class WaitTimers {
  private timer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<unknown> | undefined;
  private again = false;
  private started = false;
  /** The last round stopped because every slot was taken: a finishing run starts the next. */
  private starved = false;
  private readonly leaseMs: number;
  private readonly batch: number;
  private readonly concurrency: number;
  private readonly workflowConcurrency: number;
  /** Claimed here: queued (not started yet) and running. */
  private readonly queued: DueWake[] = [];
  private readonly running = new Set<DueWake>();
  private readonly perWorkflow = new Map<string, number>();
  private readonly runs = new Set<Promise<void>>();
  private done: DueWake[] = [];
  /** When (epoch ms, the clock's) the timer set fires; a notified earlier fire_at re-plans it. */
  private plannedAt = Number.POSITIVE_INFINITY;
  /** The earliest fire_at notified during a round (the round's own plan may not have seen it). */
  private notifiedAt = Number.POSITIVE_INFINITY;
  private listener: WakeUpListener | undefined;
  /** A round is under way: notified fire_ats wait for its plan. */
  private looking = false;

  constructor(private readonly o: WaitTimersOptions) {
    this.leaseMs = o.leaseMs ?? 30_000;
    this.batch = o.batch ?? 1_000;
    this.concurrency = Math.max(1, o.concurrency ?? 256);
    this.workflowConcurrency = Math.max(1, o.workflowConcurrency ?? 128);
  }

  start(): void {
    const pollMs = this.o.pollMs ?? DEFAULT_POLL_MS;
    if (pollMs <= 0 || this.started) return;
    this.started = true;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.leaseMs / 3)));
    // Listening before the first round: a park committed meanwhile is either seen by it or notified.
    this.listener = listenForWakeUps(
      this.o.wakeUps,
      (payload) => this.notified(payload),
      (err) => this.o.log.warn({ err }, 'wait timers get no wake-ups; looking every poll'),
    );
    void this.listener.ready.then(() => this.kick(0)); // due at start (the engine was down): fire at once
  }

  /** A notification: an earlier fire_at than planned re-plans the timer ('' : look now). */
  private notified(payload: string): void {
    if (!this.started) return;
    const at = payload === '' ? 0 : Number(payload);
    if (!Number.isFinite(at)) return;
    if (this.looking) {
      this.notifiedAt = Math.min(this.notifiedAt, at);
      return;
    }
    if (at >= this.plannedAt || this.starved) return;
    this.kick(Math.max(0, at - this.o.clock().getTime()));
  }

  /** Stops claiming, hands the wakes not started back (due now), and waits for the woken runs. */
  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.timer);
    clearInterval(this.renewTimer);
    this.timer = undefined;
    await this.listener?.stop();
    this.listener = undefined;
    await this.ticking;
    const left = this.queued.splice(0);
    if (left.length > 0)
      await this.o.store
        .release(left, this.o.clock())
        .catch((err: unknown) => this.o.log.warn({ err }, 'claimed wakes not released; due again after their lease'));
    await Promise.all([...this.runs]);
    await this.flushDone();
  }

  private kick(delayMs: number): void {
    if (!this.started) return;
    clearTimeout(this.timer);
    this.plannedAt = this.o.clock().getTime() + delayMs;
    this.timer = setTimeout(() => {
      this.plannedAt = Number.POSITIVE_INFINITY;
      if (this.ticking) {
        this.again = true;
        return;
      }
      this.ticking = this.round().finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.kick(0);
        }
      });
    }, delayMs);
  }

  /** One round: claims what is due and can start, then sleeps until the next fire_at (≤ pollMs). */
  private async round(): Promise<void> {
    const pollMs = this.o.pollMs ?? DEFAULT_POLL_MS;
    this.notifiedAt = Number.POSITIVE_INFINITY;
    this.looking = true;
    let sleep = pollMs;
    try {
      const claimed = await this.tick();
      if (claimed > 0)
        sleep = 0; // more may be due: the next round claims them (or finds none)
      else if (!this.starved) {
        const next = await this.o.store.nextDue();
        if (next) sleep = Math.min(pollMs, Math.max(0, next.getTime() - this.o.clock().getTime()));
      }
    } catch (err) {
      this.o.log.warn({ err }, 'wait timers could not be fired; retrying at the next poll');
    }
    this.looking = false;
    if (this.starved) return;
    // A fire_at notified while this round ran may be earlier than the one it read.
    this.kick(Math.min(sleep, Math.max(0, this.notifiedAt - this.o.clock().getTime())));
  }

  /**
   * Claims the wakes due at the clock's now and starts them; returns how many. At most `batch` wait
   * claimed here, not started yet: a round claims only when fewer than half of that wait (few large
   * claims, not one per finished run: each scan of the fire_at index passes the entries of the rows
   * claimed before, dead until vacuumed), and a finishing run starts the next round when more were due.
   */
  async tick(): Promise<number> {
    let total = 0;
    for (;;) {
      const free = this.batch - this.queued.length;
      this.starved = free < this.batch / 2;
      if (this.starved) return total;
      const now = this.o.clock();
      const due = await this.o.store.claimDue(now, new Date(now.getTime() + this.leaseMs), free);
      this.queued.push(...due);
      this.pump();
      total += due.length;
      if (due.length < free) return total;
    }
  }

  /** Starts queued wakes while the limits allow (this replica's, and each workflow's). */
  private pump(): void {
    for (let i = 0; i < this.queued.length && this.running.size < this.concurrency;) {
      const w = this.queued[i]!;
      const n = this.perWorkflow.get(w.event.workflowId) ?? 0;
      if (n >= this.workflowConcurrency) {
        i++;
        continue;
      }
      this.queued.splice(i, 1);
      this.perWorkflow.set(w.event.workflowId, n + 1);
      this.running.add(w);
      const p: Promise<void> = this.o
        .wake(w)
        .then(
          () => this.finished(w),
          (err: unknown) => this.o.log.warn({ err, workflowId: w.event.workflowId, eventId: w.event.eventId }, 'woken run failed; due again after its lease'),
        )
        .finally(() => {
          this.runs.delete(p);
          this.running.delete(w);
          const left = (this.perWorkflow.get(w.event.workflowId) ?? 1) - 1;
          if (left > 0) this.perWorkflow.set(w.event.workflowId, left);
          else this.perWorkflow.delete(w.event.workflowId);
          this.pump();
          if (this.starved && this.queued.length < this.batch / 2) {
            this.starved = false;
            this.kick(0);
          }
        });
      this.runs.add(p);
    }
  }

  /** A handled wake: marked done with the others of the same turn (one statement). */
  private finished(w: DueWake): void {
    this.done.push(w);
    if (this.done.length === 1) setImmediate(() => void this.flushDone());
  }

  private async flushDone(): Promise<void> {
    const done = this.done.splice(0);
    if (done.length === 0) return;
    // Not marked (the database unreachable): due again after the lease, then a duplicate claim.
    await this.o.store.published(done).catch((err: unknown) => this.o.log.warn({ err }, 'handled wakes not marked done'));
  }

  /** Renews the lease of every wake claimed here (compare-and-set on the lease: one still ours). */
  private async renew(): Promise<void> {
    const mine = [...this.running, ...this.queued];
    if (mine.length === 0) return;
    try {
      await this.o.store.renew(mine, new Date(this.o.clock().getTime() + this.leaseMs));
    } catch (err) {
      this.o.log.warn({ err }, 'leases of woken runs not renewed');
    }
  }
}
