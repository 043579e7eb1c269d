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
import { listenForWakeUps, type WakeUpListener, type WakeUps } from './wake-ups.ts';

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
  /**
   * The longest start() sleeps between looks for due ticks, a safety poll (SCHEDULER_POLL_MS, default
   * 10 s; 0: never, this replica fires no schedules). It sleeps until the next due time when sooner.
   */
  pollMs?: number;
  /**
   * Calls fn with each notified earliest next tick / pending lease (epoch ms as text; '' after a lost
   * connection: look now); resolves with what stops it. Without it the replica looks every pollMs.
   */
  wakeUps?: WakeUps;
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

/** The scheduler's safety poll: a lost notification (a cut listener connection) is found within it. */
export const DEFAULT_SCHEDULER_POLL_MS = 10_000;

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
 *
 * When: after each look the replica reads the earliest due time (nextDue) and sets one timer for it,
 * at most `pollMs` away. A statement that writes an earlier one (a schedule saved or switched on,
 * another replica's claim) notifies it at its commit (`wakeUps`; migration
 * 20270310000000_wake_notify) and the timer is re-planned: idle, nothing runs until a tick is due.
 */
export class Scheduler implements TriggerSource {
  readonly types = ['schedule'] as const;
  private readonly lateAfterMs: number;
  private readonly leaseMs: number;
  private readonly batch: number;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<unknown> | undefined;
  private started = false;
  /** A look is under way: notified times wait for its plan. */
  private looking = false;
  /** When (epoch ms, the clock's) the timer set fires; a notified earlier time re-plans it. */
  private plannedAt = Number.POSITIVE_INFINITY;
  /** The earliest time notified during a look (the look's own plan may not have seen it). */
  private notifiedAt = Number.POSITIVE_INFINITY;
  private listener: WakeUpListener | undefined;

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

  /** Looks for due ticks now, then whenever one is due (or notified), at least every pollMs; one look at a time. */
  async start(): Promise<void> {
    const pollMs = this.o.pollMs ?? DEFAULT_SCHEDULER_POLL_MS;
    if (pollMs <= 0 || this.started) return;
    this.started = true;
    // Listening before the first look: a schedule written meanwhile is either seen by it or notified.
    this.listener = listenForWakeUps(
      this.o.wakeUps,
      (payload) => this.notified(payload),
      (err) => this.o.log.warn({ err }, 'the scheduler gets no wake-ups; looking every poll'),
    );
    await this.listener.ready;
    this.kick(0);
  }

  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.listener?.stop();
    this.listener = undefined;
    await this.ticking;
  }

  /** A notification: an earlier due time than planned re-plans the timer ('': look now). */
  private notified(payload: string): void {
    if (!this.started) return;
    const at = payload === '' ? 0 : Number(payload);
    if (!Number.isFinite(at)) return;
    if (this.looking) this.notifiedAt = Math.min(this.notifiedAt, at);
    else if (at < this.plannedAt) this.kick(Math.max(0, at - this.o.clock().getTime()));
  }

  private kick(delayMs: number): void {
    if (!this.started) return;
    clearTimeout(this.timer);
    this.plannedAt = this.o.clock().getTime() + delayMs;
    this.timer = setTimeout(() => {
      if (this.ticking) return void this.ticking.then(() => this.kick(0));
      this.plannedAt = Number.POSITIVE_INFINITY;
      this.notifiedAt = Number.POSITIVE_INFINITY;
      this.looking = true;
      this.ticking = this.look().finally(() => (this.ticking = undefined));
    }, delayMs);
  }

  /** One look: fires what is due, then sleeps until the next due time (≤ pollMs). */
  private async look(): Promise<void> {
    const pollMs = this.o.pollMs ?? DEFAULT_SCHEDULER_POLL_MS;
    let sleep = pollMs;
    try {
      const started = await this.tick();
      if (started >= this.batch)
        sleep = 0; // more may be due
      else {
        const next = await this.o.store.nextDue();
        if (next) sleep = Math.min(pollMs, Math.max(0, next.getTime() - this.o.clock().getTime()));
      }
    } catch (err) {
      this.o.log.warn({ err }, 'schedule tick failed; retrying at the next one');
    }
    // A time notified while this look ran may be earlier than the one it read.
    this.looking = false;
    this.kick(Math.min(sleep, Math.max(0, this.notifiedAt - this.o.clock().getTime())));
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
