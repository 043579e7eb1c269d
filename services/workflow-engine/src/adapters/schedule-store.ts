import type { Database } from '@flowdesk/db';
import type { MissedTicks, TriggerEvent } from '@flowdesk/contracts';
import type { ScheduleRow, ScheduleState, ScheduleStorePort, TickClaim } from '../domain/ports.ts';

const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));

/** Notified with the earliest next tick or pending lease a statement wrote (migration 20270310000000_wake_notify). */
export const SCHEDULE_CHANNEL = 'flowdesk_schedule';

/**
 * engine.schedule: engine bookkeeping across owners, read and written by the engine's own login only
 * (not a user's data: no payloads, no grant to flowdesk_app). Every statement is one round trip.
 */
export class ScheduleStore implements ScheduleStorePort {
  constructor(private readonly db: Database) {}

  /** Records a definition's schedule; an older version than the stored one changes nothing. */
  async sync(s: ScheduleState): Promise<void> {
    await this.db.exec(
      `INSERT INTO "engine"."schedule" AS s (workflow_id, owner_id, version, enabled, cron, timezone, missed, next_tick)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (workflow_id) DO UPDATE SET
         owner_id = EXCLUDED.owner_id, version = EXCLUDED.version, enabled = EXCLUDED.enabled, cron = EXCLUDED.cron,
         timezone = EXCLUDED.timezone, missed = EXCLUDED.missed,
         -- An edit that keeps the cron and zone keeps the next tick (ticks missed meanwhile stay due);
         -- a new cron or zone, or a schedule switched back on, starts from now.
         next_tick = CASE WHEN s.enabled AND EXCLUDED.enabled AND s.cron = EXCLUDED.cron AND s.timezone = EXCLUDED.timezone
                          THEN s.next_tick ELSE EXCLUDED.next_tick END
       WHERE s.version < EXCLUDED.version`,
      [s.workflowId, s.ownerId, s.version, s.enabled, s.cron, s.timezone, s.missed, s.nextTick],
    );
  }

  /** Enabled schedules whose next tick is due at `now`, oldest first. */
  async due(now: Date, limit: number): Promise<ScheduleRow[]> {
    const { rows } = await this.db.exec(
      `SELECT workflow_id, owner_id, cron, timezone, missed, next_tick FROM "engine"."schedule"
        WHERE enabled AND next_tick <= $1 ORDER BY next_tick LIMIT ${Math.trunc(limit)}`,
      [now],
    );
    return rows.map((r) => ({
      workflowId: String(r.workflow_id),
      ownerId: String(r.owner_id),
      cron: String(r.cron),
      timezone: String(r.timezone),
      missed: r.missed as MissedTicks,
      nextTick: date(r.next_tick),
    }));
  }

  /**
   * Moves due ticks on in one statement, each only if its next_tick is still the one read (another
   * replica may have claimed it first), storing the event to publish as pending until `pendingUntil`.
   * Returns the workflow ids this replica claimed.
   */
  async claim(claims: TickClaim[], pendingUntil: Date): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const { rows } = await this.db.exec(
      `UPDATE "engine"."schedule" AS s
          SET next_tick = c.next, last_tick = COALESCE(c.last_tick, s.last_tick),
              pending_event = c.event, pending_until = CASE WHEN c.event IS NULL THEN NULL ELSE $2::timestamptz END
         FROM jsonb_to_recordset($1::jsonb) AS c(workflow_id uuid, due timestamptz, next timestamptz, last_tick timestamptz, event jsonb)
        WHERE s.workflow_id = c.workflow_id AND s.enabled AND s.next_tick = c.due AND s.pending_event IS NULL
        RETURNING s.workflow_id`,
      [JSON.stringify(claims.map((c) => ({ workflow_id: c.workflowId, due: c.due, next: c.next, last_tick: c.lastTick, event: c.event }))), pendingUntil],
    );
    return new Set(rows.map((r) => String(r.workflow_id)));
  }

  /** The earliest time anything is due: an enabled schedule's next tick, or a pending event's lease. */
  async nextDue(): Promise<Date | null> {
    const { rows } = await this.db.exec(
      `SELECT least((SELECT min(next_tick) FROM "engine"."schedule" WHERE enabled),
                    (SELECT min(pending_until) FROM "engine"."schedule" WHERE pending_event IS NOT NULL)) AS next`,
    );
    return rows[0]?.next ? date(rows[0].next) : null;
  }

  /** The claimed ticks' events are published: no longer pending. */
  async published(workflowIds: string[]): Promise<void> {
    if (workflowIds.length === 0) return;
    await this.db.exec('UPDATE "engine"."schedule" SET pending_event = NULL, pending_until = NULL WHERE workflow_id = ANY($1::uuid[])', [workflowIds]);
  }

  /**
   * Pending events whose claimer did not publish them in time (it died, or the bus refused): taken
   * over by this replica (compare-and-set on pending_until) for another `leaseMs`.
   */
  async takeOverStale(now: Date, leaseUntil: Date, limit: number): Promise<{ workflowId: string; event: TriggerEvent }[]> {
    const { rows } = await this.db.exec(
      `UPDATE "engine"."schedule" AS s SET pending_until = $2
         FROM (SELECT workflow_id, pending_until FROM "engine"."schedule"
                WHERE pending_event IS NOT NULL AND pending_until <= $1 ORDER BY pending_until LIMIT ${Math.trunc(limit)}) AS stale
        WHERE s.workflow_id = stale.workflow_id AND s.pending_until = stale.pending_until
        RETURNING s.workflow_id, s.pending_event`,
      [now, leaseUntil],
    );
    return rows.map((r) => ({
      workflowId: String(r.workflow_id),
      event: (typeof r.pending_event === 'string' ? JSON.parse(r.pending_event) : r.pending_event) as TriggerEvent,
    }));
  }
}
