import { timingSafeEqual } from 'node:crypto';
import { userContext, type Database } from '@flowdesk/db';
import type { ResumedBy, TriggerEvent } from '@flowdesk/contracts';
import type { DueWake, WaitStorePort } from '../domain/ports.ts';

const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));
/**
 * A jsonb column read as `::text` (below): parsed here, once. Both drivers (pg, PGlite) already parse
 * a jsonb value, so a body that is a JSON string ("yes", "") came back as a JS string, and parsing
 * that again threw (or turned "123" into 123): the text form has one reading whichever driver runs.
 */
const jsonText = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : null);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Notified with the earliest fire_at a statement wrote (migration 20270310000000_wake_notify). */
export const WAIT_CHANNEL = 'flowdesk_wait';

/** What a resume found: done, or why not (the route's status). */
export type ResumeAnswer = { ok: true; runId: string } | { ok: false; why: 'not_found' | 'wrong_secret' | 'already_resumed' | 'not_resumable' | 'not_waiting' };

/** The parent run a child's trigger event names (TriggerEvent.parent) with the child's owner. */
export type ParentStep = { ownerId: string; workflowId: string; eventId: string; nodeId: string };

/**
 * Resumes a parent's step parked on a Run workflow node with its child's result, at most once
 * (compare-and-set on resumed_by): fire_at set to now notifies the wait timers, which wake it. False when no such wait.
 * `exec` may be a transaction's (a cancel of the child resumes its parent in the same transaction).
 */
export async function resumeParentWait(exec: Database['exec'], parent: ParentStep, body: unknown, now: Date): Promise<boolean> {
  const { rows } = await exec(
    `UPDATE "engine"."run_wait" SET resumed_by = 'resume', resumed_at = $5, body = $6::jsonb, fire_at = $5
      WHERE owner_id = $1 AND workflow_id = $2 AND event_id = $3 AND node_id = $4 AND NOT resumable AND resumed_by IS NULL
      RETURNING run_id`,
    [parent.ownerId, parent.workflowId, parent.eventId, parent.nodeId, now, JSON.stringify(body)],
  );
  return rows.length > 0;
}

/**
 * engine.run_wait (migration 20270120000000_run_waits): parked runs' timers and resume secrets. The
 * poller's statements and the public resume URL run as the engine's own login (the table's owner);
 * Approve / Reject as the run's owner (row-level security).
 */
export class WaitStore implements WaitStorePort {
  constructor(private readonly db: Database) {}

  /**
   * Claims due wakes (compare-and-set on fire_at, so one replica claims each): fire_at moves to
   * `leaseUntil` (a claimer that dies before publishing leaves it due again then), and a wake no
   * resume came for is decided now as `timer` (or `timeout` for a resumable wait).
   */
  async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<DueWake[]> {
    const { rows } = await this.db.exec(
      `UPDATE "engine"."run_wait" AS w
          SET fire_at = $2, resumed_by = COALESCE(w.resumed_by, CASE WHEN w.resumable THEN 'timeout' ELSE 'timer' END),
              resumed_at = COALESCE(w.resumed_at, $1)
         FROM (SELECT owner_id, workflow_id, event_id, fire_at FROM "engine"."run_wait"
                WHERE fire_at <= $1 ORDER BY fire_at LIMIT ${Math.trunc(limit)}) AS d
        WHERE w.owner_id = d.owner_id AND w.workflow_id = d.workflow_id AND w.event_id = d.event_id AND w.fire_at = d.fire_at
        RETURNING w.wait_id, w.node_id, w.resumed_by, w.resumed_at, w.body::text AS body, w.event::text AS event`,
      [now, leaseUntil],
    );
    return rows.map((r) => {
      const body = jsonText(r.body);
      return {
        waitId: String(r.wait_id),
        leaseUntil,
        event: jsonText(r.event) as TriggerEvent,
        resume: {
          nodeId: String(r.node_id),
          resumedBy: r.resumed_by as ResumedBy,
          at: date(r.resumed_at).toISOString(),
          ...(body !== null && body !== undefined ? { body } : {}),
        },
      };
    });
  }

  /**
   * The claimed wakes are handled: no longer due. A run that finished deleted its row, one that parked
   * again replaced it (another fire_at); what is left (a duplicate claim, a skipped run) stays, resumed.
   */
  async published(wakes: readonly Pick<DueWake, 'waitId' | 'leaseUntil'>[]): Promise<void> {
    if (wakes.length === 0) return;
    await this.db.exec(
      `UPDATE "engine"."run_wait" AS w SET fire_at = NULL
         FROM unnest($1::uuid[], $2::timestamptz[]) AS p(wait_id, lease)
        WHERE w.wait_id = p.wait_id AND w.fire_at = p.lease`,
      [wakes.map((w) => w.waitId), wakes.map((w) => w.leaseUntil)],
    );
  }

  async nextDue(): Promise<Date | null> {
    const { rows } = await this.db.exec(`SELECT min(fire_at) AS next FROM "engine"."run_wait" WHERE fire_at IS NOT NULL`);
    return rows[0]?.next ? date(rows[0].next) : null;
  }

  async renew(wakes: readonly Pick<DueWake, 'waitId' | 'leaseUntil'>[], leaseUntil: Date): Promise<void> {
    if (wakes.length === 0) return;
    const { rows } = await this.db.exec(
      `UPDATE "engine"."run_wait" AS w SET fire_at = $3
         FROM unnest($1::uuid[], $2::timestamptz[]) AS p(wait_id, lease)
        WHERE w.wait_id = p.wait_id AND w.fire_at = p.lease RETURNING w.wait_id`,
      [wakes.map((w) => w.waitId), wakes.map((w) => w.leaseUntil), leaseUntil],
    );
    const renewed = new Set(rows.map((r) => String(r.wait_id)));
    for (const w of wakes) if (renewed.has(w.waitId)) w.leaseUntil = leaseUntil;
  }

  async release(wakes: readonly Pick<DueWake, 'waitId' | 'leaseUntil'>[], now: Date): Promise<void> {
    if (wakes.length === 0) return;
    await this.db.exec(
      `UPDATE "engine"."run_wait" AS w SET fire_at = $3
         FROM unnest($1::uuid[], $2::timestamptz[]) AS p(wait_id, lease)
        WHERE w.wait_id = p.wait_id AND w.fire_at = p.lease`,
      [wakes.map((w) => w.waitId), wakes.map((w) => w.leaseUntil), now],
    );
  }

  /** The resume URL: the secret's hash compared in constant time; resumes at most once. */
  async resumeBySecret(waitId: string, secretHash: string, body: unknown, now: Date): Promise<ResumeAnswer> {
    if (!UUID.test(waitId)) return { ok: false, why: 'not_found' };
    const { rows } = await this.db.exec(`SELECT run_id, secret_hash, resumed_by FROM "engine"."run_wait" WHERE wait_id = $1`, [waitId]);
    const row = rows[0];
    if (!row || typeof row.secret_hash !== 'string') return { ok: false, why: 'not_found' };
    const stored = Buffer.from(row.secret_hash, 'hex');
    const given = Buffer.from(secretHash, 'hex');
    if (stored.length !== given.length || !timingSafeEqual(stored, given)) return { ok: false, why: 'wrong_secret' };
    if (row.resumed_by !== null) return { ok: false, why: 'already_resumed' };
    const updated = await this.db.exec(
      `UPDATE "engine"."run_wait" SET resumed_by = 'resume', resumed_at = $2, body = $3::jsonb, fire_at = $2
        WHERE wait_id = $1 AND resumed_by IS NULL RETURNING run_id`,
      [waitId, now, body === undefined ? null : JSON.stringify(body)],
    );
    return updated.rows[0] ? { ok: true, runId: String(row.run_id) } : { ok: false, why: 'already_resumed' };
  }

  /**
   * A child run's result resumes its parent's step parked on a Run workflow node (a wait that is not
   * resumable by a link or Approve / Reject, for that node): at most once. False when no such wait.
   */
  async resumeByParent(parent: ParentStep, body: unknown, now: Date): Promise<boolean> {
    return resumeParentWait(this.db.exec.bind(this.db), parent, body, now);
  }

  /** Approve / Reject by the run's owner (row-level security): resumes at most once. */
  async resumeByOwner(userId: string, runId: string, by: 'approve' | 'reject', body: unknown, now: Date): Promise<ResumeAnswer> {
    if (!UUID.test(userId) || !UUID.test(runId)) return { ok: false, why: 'not_found' };
    const context = userContext(userId);
    return this.db.transaction(async (exec) => {
      await exec(context.text, context.values);
      const updated = await exec(
        `UPDATE "engine"."run_wait" SET resumed_by = $2, resumed_at = $3, body = $4::jsonb, fire_at = $3
          WHERE run_id = $1 AND resumable AND resumed_by IS NULL RETURNING run_id`,
        [runId, by, now, body === undefined ? null : JSON.stringify(body)],
      );
      if (updated.rows[0]) return { ok: true as const, runId };
      const { rows } = await exec(`SELECT resumable, resumed_by FROM "engine"."run_wait" WHERE run_id = $1`, [runId]);
      if (!rows[0]) return { ok: false as const, why: 'not_waiting' as const };
      return { ok: false as const, why: rows[0].resumed_by !== null ? ('already_resumed' as const) : ('not_resumable' as const) };
    });
  }

  /**
   * Resume now (the run page, while testing a workflow), by the run's owner (row-level security): a
   * run parked on a timer — a Wait node's duration or date-time, or a retry's long backoff — is woken
   * as if its timer had fired now (`resumedBy: timer`). Like a resume it sets resumed_by once
   * (compare-and-set) and fire_at = now, so the timers' ordinary claim wakes it, exactly once: no
   * other path runs it, and a wake already claimed (resumed_by set, fire_at its lease) is never
   * touched. Only a waiting run's wait whose parked step (in the run's steps) is a Wait node or a
   * retry: a wait for a resume has Approve / Reject, and a Run workflow step's timer is its timeout.
   */
  async resumeNow(userId: string, runId: string, now: Date): Promise<ResumeNowAnswer> {
    if (!UUID.test(userId) || !UUID.test(runId)) return { ok: false, why: 'not_found' };
    const context = userContext(userId);
    return this.db.transaction(async (exec) => {
      await exec(context.text, context.values);
      const updated = await exec(
        `UPDATE "engine"."run_wait" AS w SET resumed_by = 'timer', resumed_at = $2, fire_at = $2
           FROM "engine"."run" AS r
          WHERE w.run_id = $1 AND r.id = w.run_id AND r.status = 'waiting'
            AND NOT w.resumable AND w.resumed_by IS NULL AND w.fire_at IS NOT NULL
            AND EXISTS (SELECT 1 FROM jsonb_array_elements(r.steps) AS s
                         WHERE s->>'nodeId' = w.node_id AND s->>'status' = 'waiting' AND (s->>'type' = 'wait' OR s->>'retryAt' IS NOT NULL))
          RETURNING w.run_id`,
        [runId, now],
      );
      if (updated.rows[0]) return { ok: true as const, runId };
      const { rows } = await exec(
        `SELECT w.resumable, w.resumed_by FROM "engine"."run_wait" AS w JOIN "engine"."run" AS r ON r.id = w.run_id
          WHERE w.run_id = $1 AND r.status = 'waiting'`,
        [runId],
      );
      const w = rows[0];
      if (!w) return { ok: false as const, why: 'not_waiting' as const };
      if (w.resumed_by !== null) return { ok: false as const, why: 'already_resumed' as const };
      return { ok: false as const, why: w.resumable ? ('waits_for_resume' as const) : ('no_timer' as const) };
    });
  }
}

/**
 * What Resume now found: done, or why not. `waits_for_resume`: the wait is for the link or Approve /
 * Reject (those resume it); `no_timer`: nothing but another run's end wakes it (a Run workflow step).
 */
export type ResumeNowAnswer =
  { ok: true; runId: string } | { ok: false; why: 'not_found' | 'not_waiting' | 'already_resumed' | 'waits_for_resume' | 'no_timer' };
