/**
 * Wait timers (docs/workflow-engine.md, "Parking"): every replica polls engine.run_wait every
 * `pollMs` (default 250 ms; one index range scan on fire_at) and claims the due wakes by
 * compare-and-set (one replica claims each, as the scheduler's ticks), then republishes each run's
 * trigger event with `resume` on the trigger topic. The run is claimed again there (waiting ->
 * running) and resumes from its checkpoints through processTriggerEvent, with the bus's at-least-once
 * delivery and leases: a replica that dies while running a woken run leaves the event to be
 * delivered again. A claim not published within `leaseMs` (its replica died) is due again. No timer
 * lives in memory: a wake due while every engine was down is found by the first poll after a start.
 */
import { TRIGGER_TOPIC, type EventPublisher } from '@flowdesk/contracts';
import type { LogPort, WaitStorePort } from './ports.ts';

export interface WaitTimersOptions {
  store: WaitStorePort;
  bus: EventPublisher;
  clock: () => Date;
  log: LogPort;
  /** How often due wakes are looked for (WAIT_POLL_MS, default 250; 0: this replica wakes no runs). */
  pollMs?: number;
  /** How long a claimed wake may stay unpublished before it is due again (default 30 s). */
  leaseMs?: number;
  /** Wakes claimed per statement (default 1000); a full batch is followed by another at once. */
  batch?: number;
}

export class WaitTimers {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<unknown> | undefined;
  private readonly leaseMs: number;
  private readonly batch: number;

  constructor(private readonly o: WaitTimersOptions) {
    this.leaseMs = o.leaseMs ?? 30_000;
    this.batch = o.batch ?? 1_000;
  }

  start(): void {
    const pollMs = this.o.pollMs ?? 250;
    if (pollMs <= 0 || this.timer) return;
    const run = () => {
      if (this.ticking) return;
      this.ticking = this.tick()
        .catch((err: unknown) => this.o.log.warn({ err }, 'wait timers could not be fired; retrying at the next poll'))
        .finally(() => (this.ticking = undefined));
    };
    this.timer = setInterval(run, pollMs);
    run(); // due at start (the engine was down): fire at once
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  /** Publishes every wake due at the clock's now; returns how many. */
  async tick(): Promise<number> {
    let total = 0;
    for (;;) {
      const now = this.o.clock();
      const due = await this.o.store.claimDue(now, new Date(now.getTime() + this.leaseMs), this.batch);
      if (due.length === 0) return total;
      await this.o.bus.publish(
        TRIGGER_TOPIC,
        due.map((w) => ({ key: w.event.workflowId, value: { ...w.event, resume: w.resume } })),
      );
      await this.o.store.published(due);
      total += due.length;
      if (due.length < this.batch) return total;
    }
  }
}
