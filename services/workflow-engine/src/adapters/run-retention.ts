import { type Database } from '@flowdesk/db';
import { asKeeper, asUser } from './run-rows.ts';

/** Run history retention on the run store (docs/operations.md, "Run history retention"). */
export class RunRetention {
  constructor(private readonly db: Database) {}

  /**
   * One batch of run history retention (docs/operations.md, "Run history retention"): deletes up to
   * `limit` finished runs (never queued, running or waiting ones) that are older than `before` or
   * beyond the `keepPerWorkflow` newest finished runs of their workflow. Owners and workflows are
   * found by a loose index scan of the owner-led indexes, each delete walks one owner's (or
   * workflow's) index range: no index is added to the hot path's inserts for this. Returns how many
   * runs were deleted. `rule.workflow` narrows the batch to that one workflow (its own retention);
   * `rule.except` leaves those workflows out (they have their own).
   */
  async prune(rule: PruneRule, limit: number): Promise<number> {
    return asKeeper(this.db, async (exec) => {
      let deleted = 0;
      const finished = `status NOT IN ('queued', 'running', 'waiting')`;
      const except = rule.except ?? [];
      const notExcepted = except.length > 0 ? ` AND workflow_id <> ALL($4::uuid[])` : '';
      const owners = rule.workflow
        ? { rows: [{ owner_id: rule.workflow.ownerId }] }
        : await exec(
            `WITH RECURSIVE o AS (
           (SELECT owner_id FROM "engine"."run" ORDER BY owner_id LIMIT 1)
           UNION ALL
           SELECT (SELECT r.owner_id FROM "engine"."run" r WHERE r.owner_id > o.owner_id ORDER BY r.owner_id LIMIT 1) FROM o WHERE o.owner_id IS NOT NULL
         ) SELECT owner_id FROM o WHERE owner_id IS NOT NULL`,
          );
      for (const { owner_id: owner } of owners.rows) {
        if (deleted >= limit) break;
        if (rule.before) {
          const r = await exec(
            `WITH d AS (DELETE FROM "engine"."run" WHERE id IN (
               SELECT id FROM "engine"."run" WHERE owner_id = $1 AND created_at < $2::timestamptz AND ${finished}${
                 rule.workflow ? ' AND workflow_id = $4::uuid' : notExcepted
               }
                ORDER BY created_at LIMIT $3) RETURNING 1) SELECT count(*)::int AS n FROM d`,
            [owner, rule.before.toISOString(), limit - deleted, ...(rule.workflow ? [rule.workflow.workflowId] : except.length > 0 ? [except] : [])],
          );
          deleted += Number(r.rows[0]?.n ?? 0);
        }
        if (rule.keepPerWorkflow === null || deleted >= limit) continue;
        const workflows = rule.workflow
          ? { rows: [{ workflow_id: rule.workflow.workflowId }] }
          : await exec(
              `WITH RECURSIVE w AS (
             (SELECT workflow_id FROM "engine"."run" WHERE owner_id = $1 ORDER BY workflow_id LIMIT 1)
             UNION ALL
             SELECT (SELECT r.workflow_id FROM "engine"."run" r WHERE r.owner_id = $1 AND r.workflow_id > w.workflow_id ORDER BY r.workflow_id LIMIT 1)
               FROM w WHERE w.workflow_id IS NOT NULL
           ) SELECT workflow_id FROM w WHERE workflow_id IS NOT NULL`,
              [owner],
            );
        const skipped = new Set(except);
        for (const { workflow_id: workflow } of workflows.rows) {
          if (deleted >= limit) break;
          if (skipped.has(String(workflow))) continue;
          const r = await exec(
            `WITH d AS (DELETE FROM "engine"."run" WHERE id IN (
               SELECT id FROM "engine"."run" WHERE owner_id = $1 AND workflow_id = $2 AND ${finished}
                ORDER BY created_at DESC, id DESC OFFSET $3 LIMIT $4) RETURNING 1) SELECT count(*)::int AS n FROM d`,
            [owner, workflow, rule.keepPerWorkflow, limit - deleted],
          );
          deleted += Number(r.rows[0]?.n ?? 0);
        }
      }
      return deleted;
    });
  }

  /** Deletes a workflow's runs (the workflow was deleted), as its owner. */
  async deleteWorkflowRuns(userId: string, workflowId: string): Promise<void> {
    await asUser(this.db, userId, async (exec) => {
      await exec('DELETE FROM "engine"."run_step" WHERE workflow_id = $1', [workflowId]);
      await exec('DELETE FROM "engine"."run" WHERE workflow_id = $1', [workflowId]);
    });
  }
}

/** One retention batch's rule (RunStore.prune). */
export interface PruneRule {
  before: Date | null;
  keepPerWorkflow: number | null;
  /** Only this workflow's runs. */
  workflow?: { ownerId: string; workflowId: string };
  /** Not these workflows' runs (ids). */
  except?: readonly string[];
}
