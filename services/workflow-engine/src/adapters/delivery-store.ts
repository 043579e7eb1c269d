import type { Database } from '@flowdesk/db';
import type { DeliveryLedger } from '../domain/ports.ts';

/**
 * engine.seen_delivery (migration 20270210000000_seen_deliveries): the delivery ids Verify signature
 * nodes accepted, per workflow, until their window ends. One statement per claim: a new id, or one
 * whose window ended, is (re)claimed; one still in its window is a repeat. `sweep` deletes ended rows
 * in batches (app.ts runs it every minute).
 */
export class DeliveryStore implements DeliveryLedger {
  constructor(private readonly db: Database) {}

  async claim(workflowId: string, deliveryId: string, now: Date, until: Date): Promise<boolean> {
    const { rows } = await this.db.exec(
      `INSERT INTO "engine"."seen_delivery" AS s (workflow_id, delivery_id, expires_at) VALUES ($1, $2, $4)
       ON CONFLICT (workflow_id, delivery_id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE s.expires_at <= $3
       RETURNING 1 AS claimed`,
      [workflowId, deliveryId, now, until],
    );
    return rows.length > 0;
  }

  /** Deletes up to `limit` rows whose window ended before `now`; returns how many. */
  async sweep(now: Date, limit = 5_000): Promise<number> {
    const { rows } = await this.db.exec(
      `WITH d AS (DELETE FROM "engine"."seen_delivery" WHERE ctid IN (
         SELECT ctid FROM "engine"."seen_delivery" WHERE expires_at < $1 ORDER BY expires_at LIMIT $2) RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [now, limit],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
