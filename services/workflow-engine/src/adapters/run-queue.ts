import type { Database } from '@flowdesk/db';
import type { TriggerEvent } from '@flowdesk/contracts';
import type { QueuedRun, RunQueuePort } from '../domain/fairness.ts';

/** What a statement queueing runs notifies at its commit (migration 20270321000000_run_queue_notify). */
export const RUN_QUEUE_CHANNEL = 'flowdesk_run_queue';

const jsonOf = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

/**
 * engine.run_queue (migration 20270301000000_run_queue): trigger events waiting for their owner's
 * share of the engine (domain/fairness.ts). The engine's own login reads and writes it (the table's
 * owner, row-level security not forced).
 */
export class RunQueueStore implements RunQueuePort {
  constructor(private readonly db: Database) {}

  async enqueue(event: TriggerEvent): Promise<void> {
    await this.db.exec(
      `INSERT INTO "engine"."run_queue" (owner_id, workflow_id, event_id, event) VALUES ($1, $2, $3, $4::jsonb)
       ON CONFLICT (owner_id, workflow_id, event_id) DO NOTHING`,
      [event.ownerId, event.workflowId, event.eventId, JSON.stringify(event)],
    );
  }

  async owners(now: Date): Promise<Map<string, number>> {
    const { rows } = await this.db.exec(
      `SELECT owner_id, count(*)::int AS n FROM "engine"."run_queue" WHERE lease_until IS NULL OR lease_until <= $1 GROUP BY owner_id`,
      [now],
    );
    return new Map(rows.map((r) => [String(r.owner_id), Number(r.n)]));
  }

  async claim(ownerId: string, now: Date, leaseUntil: Date): Promise<QueuedRun | null> {
    // Compare-and-set on the lease: two replicas claiming the same row, one wins.
    const { rows } = await this.db.exec(
      `UPDATE "engine"."run_queue" AS q SET lease_until = $3, attempts = q.attempts + 1
         FROM (SELECT id, lease_until FROM "engine"."run_queue"
                WHERE owner_id = $1 AND (lease_until IS NULL OR lease_until <= $2) ORDER BY id LIMIT 1) AS c
        WHERE q.id = c.id AND q.lease_until IS NOT DISTINCT FROM c.lease_until
        RETURNING q.id, q.event, q.attempts`,
      [ownerId, now, leaseUntil],
    );
    const row = rows[0];
    return row ? { id: String(row.id), event: jsonOf(row.event) as TriggerEvent, attempts: Number(row.attempts), leaseUntil } : null;
  }

  async renew(runs: readonly QueuedRun[], leaseUntil: Date): Promise<void> {
    if (runs.length === 0) return;
    await this.db.exec(`UPDATE "engine"."run_queue" SET lease_until = $2 WHERE id = ANY($1::bigint[])`, [runs.map((r) => r.id), leaseUntil]);
    for (const r of runs) r.leaseUntil = leaseUntil;
  }

  async done(run: QueuedRun): Promise<void> {
    await this.db.exec(`DELETE FROM "engine"."run_queue" WHERE id = $1`, [run.id]);
  }

  async retryAt(run: QueuedRun, at: Date): Promise<void> {
    await this.db.exec(`UPDATE "engine"."run_queue" SET lease_until = $2 WHERE id = $1`, [run.id, at]);
  }

  async backlog(ownerId: string): Promise<number> {
    const { rows } = await this.db.exec(`SELECT count(*)::int AS n FROM "engine"."run_queue" WHERE owner_id = $1`, [ownerId]);
    return Number(rows[0]?.n ?? 0);
  }

  async backlogByWorkflow(ownerId: string, limit: number): Promise<Map<string, number>> {
    const { rows } = await this.db.exec(
      `SELECT workflow_id, count(*)::int AS n FROM "engine"."run_queue" WHERE owner_id = $1 GROUP BY workflow_id ORDER BY n DESC, workflow_id LIMIT $2`,
      [ownerId, limit],
    );
    return new Map(rows.map((r) => [String(r.workflow_id), Number(r.n)]));
  }
}
