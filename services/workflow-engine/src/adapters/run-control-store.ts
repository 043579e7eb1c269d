import { type Database } from '@flowdesk/db';
import type { ClaimResult, RunWrite } from '../domain/ports.ts';
import { type TriggerEvent, type WorkflowRun } from '@flowdesk/contracts';
import { compactLoopResults } from '../domain/loop-results.ts';
import { childResult } from '../domain/nodes/run-workflow.ts';
import { resumeParentWait } from './wait-store.ts';
import { asKeeper, asUser, COLUMNS, jsonOf, keyOf, toRun } from './run-rows.ts';

/** Run control on the run store: a person's run queued, a run cancelled (and its steps kept), the cancels the engine polls. */
export class RunControlStore {
  constructor(
    private readonly db: Database,
    /** Tells the store's onRecorded listeners of a cancel (RunWriteBatcher.announce). */
    private readonly announce: (writes: RunWrite[], written: Map<string, ClaimResult>) => void,
  ) {}

  /**
   * Queues a run started by a person (run again): the row exists, `queued`, before its trigger event
   * is published, with who started it and the run it repeats. The engine's claim of the event then
   * takes this row over like any other (record_runs updates queued and running rows).
   */
  async queueManual(
    userId: string,
    run: { workflowId: string; eventId: string; payload: Record<string, unknown>; rerunOf: string | null },
  ): Promise<WorkflowRun | null> {
    // ON CONFLICT: requests with the same Idempotency-Key at once (a double click, a client's retry)
    // race here; the unique (owner, workflow, event id) key lets one insert and tells the others.
    const { rows } = await asUser(this.db, userId, (exec) =>
      exec(
        `INSERT INTO "engine"."run" (owner_id, workflow_id, event_id, status, trigger_payload, started_by, rerun_of, trigger_type)
         VALUES ($1, $2, $3, 'queued', $4::jsonb, $1, $5, 'manual')
         ON CONFLICT (owner_id, workflow_id, event_id) DO NOTHING RETURNING ${COLUMNS}`,
        [userId, run.workflowId, run.eventId, JSON.stringify(run.payload), run.rerunOf],
      ),
    );
    return rows[0] ? toRun(rows[0]) : null;
  }

  /**
   * Cancels the user's run if it is still queued, running or waiting (docs/workflow-engine.md,
   * "Cancelling a run"): the row becomes `cancelled` at once; record_runs never changes it again, so a
   * queued run's claim finds it finished and the event is not executed. Returns the cancelled run;
   * `finished` (the run as it is) when it had already finished; `null` when there is no such run.
   */
  async cancel(userId: string, runId: string, at: Date): Promise<{ cancelled?: WorkflowRun; finished?: WorkflowRun } | null> {
    const result = await asUser<{ cancelled?: WorkflowRun; finished?: WorkflowRun } | null>(this.db, userId, async (exec) => {
      const updated = await exec(
        `UPDATE "engine"."run" SET status = 'cancelled', finished_at = $2::timestamptz, error = 'Cancelled'
          WHERE id = $1 AND status IN ('queued', 'running', 'waiting') RETURNING ${COLUMNS}`,
        [runId, at.toISOString()],
      );
      if (updated.rows[0]) {
        const cancelled = toRun(updated.rows[0]);
        // A waiting run's timer and resume link go with it. A parked child of a waiting Run workflow
        // step will never end by itself: its parent resumes now, in this transaction (its handler
        // already returned, so nobody else would; a queued or running child tells it when it stops).
        const { rows: waits } = await exec(`DELETE FROM "engine"."run_wait" WHERE run_id = $1 RETURNING event`, [runId]);
        const parent = waits[0] ? (jsonOf(waits[0].event) as TriggerEvent).parent : undefined;
        if (parent) await resumeParentWait(exec, { ownerId: userId, ...parent }, childResult(cancelled), at);
        return { cancelled };
      }
      const { rows } = await exec(`SELECT ${COLUMNS} FROM "engine"."run" WHERE id = $1`, [runId]);
      return rows[0] ? { finished: toRun(rows[0]) } : null;
    });
    const run = result?.cancelled;
    if (run) {
      const write: RunWrite = { ownerId: userId, workflowId: run.workflowId, eventId: run.eventId, status: 'cancelled', finishedAt: run.finishedAt };
      this.announce([write], new Map<string, ClaimResult>([[keyOf(write), 'new']]));
    }
    return result;
  }

  /**
   * Keeps the steps of a run that was cancelled while it ran (its outcome was not written: the row is
   * already `cancelled`). Only a cancelled row is touched.
   */
  async keepCancelledSteps(write: RunWrite): Promise<void> {
    await asUser(this.db, write.ownerId, (exec) =>
      exec(
        `UPDATE "engine"."run" SET steps = $3::jsonb, warnings = $4::jsonb, started_at = COALESCE(started_at, $5::timestamptz)
          WHERE workflow_id = $1 AND event_id = $2 AND status = 'cancelled'`,
        [write.workflowId, write.eventId, JSON.stringify(compactLoopResults(write.steps ?? [])), JSON.stringify(write.warnings ?? []), write.startedAt ?? null],
      ),
    );
  }

  /** Of these runs (`<workflowId>/<eventId>` of each owner), the ones now `cancelled`. */
  async cancelledAmong(runs: readonly { ownerId: string; workflowId: string; eventId: string }[]): Promise<Set<string>> {
    if (runs.length === 0) return new Set();
    const { rows } = await asKeeper(this.db, (exec) =>
      exec(
        `SELECT workflow_id::text || '/' || event_id AS k FROM "engine"."run"
          WHERE status = 'cancelled' AND (owner_id, workflow_id, event_id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[]))`,
        [runs.map((r) => r.ownerId), runs.map((r) => r.workflowId), runs.map((r) => r.eventId)],
      ),
    );
    return new Set(rows.map((r) => String(r.k)));
  }
}
