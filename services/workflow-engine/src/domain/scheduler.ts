import {
  TRIGGER_TOPIC,
  scheduleOf,
  tickerOf,
  type SchedulePayload,
  type TriggerEvent,
  type WorkflowChanged,
  type WorkflowDefinition,
} from '@flowdesk/contracts';
import type { EventPublisher } from '@flowdesk/contracts';
import type { LogPort, ScheduleStorePort, TickClaim } from './ports.ts';
import type { TriggerSource } from './trigger-source.ts';

export interface SchedulerOptions {
  store: ScheduleStorePort;
  bus: EventPublisher;
  clock: () => Date;
  log: LogPort;
  /** A tick fired later than this after its time counts as missed (default 60 s). */
  lateAfterMs?: number;
  /** How long a claimed tick's event may stay unpublished before another replica publishes it (default 30 s). */
  leaseMs?: number;
  /** Schedules handled per tick() (default 500). */
  batch?: number;
  /** How often start() looks for due ticks (default 1000 ms; 0: never, this replica fires no schedules). */
  pollMs?: number;
}

/**
 * A schedule trigger's `{{trigger.*}}`: the tick, when it fired, the schedule, and the due ticks
 * that got no run of their own (the engine was down, or behind).
 */
export const schedulePayload = (tick: Date, firedAt: Date, schedule: { cron: string; timezone: string }, missedTicks: number): SchedulePayload => ({
  scheduledFor: tick.toISOString(),
  firedAt: firedAt.toISOString(),
  cron: schedule.cron,
  timezone: schedule.timezone,
  missedTicks,
});

/** A tick counted as far as this and no further (a schedule every minute, down for a week: 10,080). */
const MAX_TICKS_COUNTED = 100_000;

/**
 * Schedule triggers (docs/triggers.md). Every replica keeps engine.schedule in step with the
 * definitions it caches, and calls tick() every second: each due schedule is claimed by exactly one
 * replica (compare-and-set on its next tick), which publishes the tick's trigger event — event id
 * `schedule_<tick>`, so even a republished tick is one run — and nothing else. The next tick is
 * computed from the cron expression (croner), never by adding an interval, so runs do not drift.
 * Ticks missed while the engine was down: one run for all of them (`run_once`, the default) or none
 * (`skip`), per workflow; a tick up to `lateAfterMs` late is on time.
 */
export class Scheduler implements TriggerSource {
  readonly types = ['schedule'] as const;
  private readonly lateAfterMs: number;
  private readonly leaseMs: number;
  private readonly batch: number;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<unknown> | undefined;

  constructor(private readonly o: SchedulerOptions) {
    this.lateAfterMs = o.lateAfterMs ?? 60_000;
    this.leaseMs = o.leaseMs ?? 30_000;
    this.batch = o.batch ?? 500;
  }

  /** Records the schedule of a definition (or that it has none: another trigger, inactive, bad settings). */
  async sync(def: WorkflowDefinition): Promise<void> {
    const base = { workflowId: def.id, ownerId: def.ownerId, version: def.version };
    let schedule: ReturnType<typeof scheduleOf> | undefined;
    if (def.triggerType === 'schedule' && def.active) {
      try {
        schedule = scheduleOf(def.triggerConfig);
      } catch (err) {
        // workspace-api refuses such settings on save; one saved before that check simply never runs.
        this.o.log.warn({ workflowId: def.id, reason: (err as Error).message }, 'schedule settings not valid; the workflow will not run on schedule');
      }
    }
    const now = this.o.clock();
    if (!schedule) {
      await this.o.store.sync({ ...base, enabled: false, cron: '', timezone: 'UTC', missed: 'run_once', nextTick: now });
      return;
    }
    const next = tickerOf(schedule).next(now);
    // A cron that never fires again (e.g. a date in the past): recorded as disabled.
    await this.o.store.sync({ ...base, enabled: next !== null, ...schedule, nextTick: next ?? now });
  }

  /** A workflow.changed event: a deletion disables the schedule at that version. */
  async apply(event: WorkflowChanged): Promise<void> {
    if (event.definition) return this.sync(event.definition);
    const now = this.o.clock();
    await this.o.store.sync({
      workflowId: event.workflowId,
      ownerId: event.ownerId,
      version: event.version,
      enabled: false,
      cron: '',
      timezone: 'UTC',
      missed: 'run_once',
      nextTick: now,
    });
  }

  /** Calls tick() every pollMs, one tick at a time (a slow one is not overlapped). */
  async start(): Promise<void> {
    const pollMs = this.o.pollMs ?? 1_000;
    if (pollMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.ticking) return; // the previous tick is still under way
      this.ticking = this.tick()
        .catch((err: unknown) => this.o.log.warn({ err }, 'schedule tick failed; retrying at the next one'))
        .finally(() => (this.ticking = undefined));
    }, pollMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  /** Fires what is due at the clock's now; returns the number of runs started. */
  async tick(): Promise<number> {
    const now = this.o.clock();
    let started = await this.republishStale(now);
    const due = await this.o.store.due(now, this.batch);
    if (due.length === 0) return started;
    const claims: TickClaim[] = [];
    for (const s of due) {
      let ticker: ReturnType<typeof tickerOf>;
      try {
        ticker = tickerOf(s);
      } catch {
        continue; // checked when it was stored; a time zone the runtime no longer knows
      }
      // Walk the due ticks up to now: the latest one, how many there were, and the next after now.
      let latest = s.nextTick;
      let count = 0;
      let t: Date | null = s.nextTick;
      while (t && t.getTime() <= now.getTime() && count < MAX_TICKS_COUNTED) {
        latest = t;
        count++;
        t = ticker.next(t);
      }
      if (t && t.getTime() <= now.getTime()) t = ticker.next(now);
      const onTime = now.getTime() - latest.getTime() <= this.lateAfterMs;
      const fire = onTime || s.missed === 'run_once';
      const event: TriggerEvent | null = fire
        ? {
            eventId: `schedule_${latest.toISOString()}`,
            workflowId: s.workflowId,
            ownerId: s.ownerId,
            source: 'schedule',
            receivedAt: now.toISOString(),
            // count - 1: due ticks that got no run of their own (the engine was down, or behind).
            payload: schedulePayload(latest, now, s, count - 1),
            headers: {},
          }
        : null;
      if (!fire) this.o.log.warn({ workflowId: s.workflowId, missedTicks: count }, 'scheduled ticks missed and skipped (missed: skip)');
      // t null: the expression has no later tick; the schedule stays due-never (far future).
      claims.push({ workflowId: s.workflowId, due: s.nextTick, next: t ?? new Date('9999-12-31T00:00:00Z'), lastTick: fire ? latest : null, event });
    }
    const claimed = await this.o.store.claim(claims, new Date(now.getTime() + this.leaseMs));
    const events = claims.filter((c) => c.event && claimed.has(c.workflowId));
    if (events.length === 0) return started;
    // Published after the claim committed: if this fails (or the process dies), the pending event
    // stays and is published by whichever replica sees it stale (republishStale).
    await this.o.bus.publish(
      TRIGGER_TOPIC,
      events.map((c) => ({ key: c.workflowId, value: c.event! })),
    );
    await this.o.store.published(events.map((c) => c.workflowId));
    started += events.length;
    return started;
  }

  private async republishStale(now: Date): Promise<number> {
    const stale = await this.o.store.takeOverStale(now, new Date(now.getTime() + this.leaseMs), this.batch);
    if (stale.length === 0) return 0;
    this.o.log.warn({ count: stale.length }, 'publishing scheduled runs another replica claimed but did not publish');
    await this.o.bus.publish(
      TRIGGER_TOPIC,
      stale.map((s) => ({ key: s.workflowId, value: s.event })),
    );
    await this.o.store.published(stale.map((s) => s.workflowId));
    return stale.length;
  }
}
