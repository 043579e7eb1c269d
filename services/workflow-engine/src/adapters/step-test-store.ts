import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor, type PageOf, type StepTestEntry } from '@flowdesk/contracts';
import type { Database } from '@flowdesk/db';
import type { StepTestLog, StepTestRecord } from '../domain/step-test.ts';

/**
 * engine.step_test (migration 20270211000000_step_tests): every "Run this step", as its owner's row
 * (row-level security), listed newest first with the shared page cursor; swept after
 * STEP_TEST_RETENTION_DAYS by the engine's own login.
 */
export class StepTestStore implements StepTestLog {
  constructor(private readonly db: Database) {}

  async record(ownerId: string, r: StepTestRecord): Promise<void> {
    await this.db.queryAsUser(
      ownerId,
      `INSERT INTO "engine"."step_test" (workflow_id, node_id, node_type, status, error, request, duration_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        r.workflowId,
        r.nodeId.slice(0, 100),
        r.nodeType,
        r.status,
        r.error?.slice(0, 500) ?? null,
        r.request?.slice(0, 2_100) ?? null,
        Math.round(r.durationMs),
      ],
    );
  }

  async list(ownerId: string, workflowId: string, page: { limit?: number; cursor?: string }): Promise<PageOf<StepTestEntry>> {
    const listing = `step-tests:${workflowId}`;
    const limit = page.limit ?? DEFAULT_PAGE_SIZE;
    const cursor = decodeCursor(listing, 'keyset', page.cursor);
    const rows = await this.db.queryAsUser(
      ownerId,
      `SELECT id, workflow_id, node_id, node_type, status, error, request, duration_ms, created_at FROM "engine"."step_test"
        WHERE workflow_id = $1 ${cursor ? 'AND (created_at, id) < ($3::timestamptz, $4::uuid)' : ''}
        ORDER BY created_at DESC, id DESC LIMIT $2`,
      cursor ? [workflowId, limit + 1, cursor.t, cursor.id] : [workflowId, limit + 1],
    );
    const items = rows.slice(0, limit).map((r): StepTestEntry => ({
      id: String(r.id),
      workflowId: String(r.workflow_id),
      nodeId: String(r.node_id),
      nodeType: String(r.node_type),
      status: String(r.status),
      error: (r.error as string | null) ?? null,
      request: (r.request as string | null) ?? null,
      durationMs: Number(r.duration_ms),
      createdAt: new Date(r.created_at as string).toISOString(),
    }));
    const last = items.at(-1);
    return { items, nextCursor: rows.length > limit && last ? encodeCursor({ l: listing, k: 'keyset', t: last.createdAt, id: last.id }) : null };
  }

  /** Deletes up to `limit` step tests recorded before `before`; returns how many. */
  async sweep(before: Date, limit = 5_000): Promise<number> {
    const { rows } = await this.db.exec(
      `WITH d AS (DELETE FROM "engine"."step_test" WHERE id IN (
         SELECT id FROM "engine"."step_test" WHERE created_at < $1 ORDER BY created_at LIMIT $2) RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [before, limit],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
