import { type Database } from '@flowdesk/db';
import {
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  encodeCursor,
  type PageOf,
  type RunStatus,
  type RunsHealth,
  type RunsSummary,
  type WorkflowRun,
  type WorkflowRunsSummary,
} from '@flowdesk/contracts';
import { asUser, COLUMNS, DEAD_LETTER_ERROR_PREFIX, iso, isoOrNull, toRun } from './run-rows.ts';

export interface RunListFilter {
  workflowId?: string;
  status?: RunStatus;
  cursor?: string;
  limit?: number;
}

/** The run store's reads, each as the asking user (row-level security): lists, one run, the summary and the health. */
export class RunReads {
  constructor(private readonly db: Database) {}

  /** A page of the user's runs, newest first (of one workflow, or of all), optionally by status. */
  async list(userId: string, filter: RunListFilter): Promise<PageOf<WorkflowRun>> {
    const listing = filter.workflowId ? `workflow-runs:${filter.workflowId}` : 'workflow-runs';
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    const cursor = decodeCursor(listing, 'keyset', filter.cursor);
    const params: unknown[] = [];
    const where: string[] = [];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    if (filter.workflowId) where.push(`workflow_id = ${p(filter.workflowId)}`);
    if (filter.status) where.push(`status = ${p(filter.status)}`);
    if (cursor) where.push(`(created_at, id) < (${p(cursor.t)}::timestamptz, ${p(cursor.id)}::uuid)`);
    const sql = `SELECT ${COLUMNS} FROM "engine"."run" ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`;
    const rows = await asUser(this.db, userId, (exec) => exec(sql, params));
    const more = rows.rows.length > limit;
    const items = rows.rows.slice(0, limit).map(toRun);
    const last = items[items.length - 1];
    return { items, nextCursor: more && last ? encodeCursor({ l: listing, k: 'keyset', t: last.createdAt, id: last.id }) : null };
  }

  /** One run with its steps, or null when it does not exist for this user. */
  /** The run of one trigger event (the unique key), or null. */
  async getByEvent(userId: string, workflowId: string, eventId: string): Promise<WorkflowRun | null> {
    const { rows } = await asUser(this.db, userId, (exec) =>
      exec(`SELECT ${COLUMNS} FROM "engine"."run" WHERE workflow_id = $1 AND event_id = $2`, [workflowId, eventId]),
    );
    return rows[0] ? toRun(rows[0]) : null;
  }

  async get(userId: string, runId: string): Promise<WorkflowRun | null> {
    return asUser(this.db, userId, async (exec) => {
      const { rows } = await exec(`SELECT ${COLUMNS} FROM "engine"."run" WHERE id = $1`, [runId]);
      if (!rows[0]) return null;
      const run = toRun(rows[0]);
      if (run.status !== 'waiting') return run;
      // A waiting run's wait: the run page shows its wake time, or Approve / Reject and the resume link.
      const wait = await exec(`SELECT node_id, fire_at, resumable FROM "engine"."run_wait" WHERE run_id = $1`, [runId]);
      const w = wait.rows[0];
      return { ...run, wait: w ? { nodeId: String(w.node_id), until: isoOrNull(w.fire_at), resumable: Boolean(w.resumable) } : null };
    });
  }

  /**
   * Runs and failures since `since` per workflow, with each workflow's last run (of any age). Two
   * index range scans: (owner_id, created_at) for the window, (owner_id, workflow_id, created_at) for
   * the last runs.
   */
  async summary(userId: string, since: Date): Promise<RunsSummary> {
    return asUser(this.db, userId, async (exec) => {
      const counts = await exec(
        `SELECT workflow_id, count(*)::int AS runs, (count(*) FILTER (WHERE status = 'failed'))::int AS failed
           FROM "engine"."run" WHERE created_at >= $1::timestamptz GROUP BY workflow_id`,
        [since.toISOString()],
      );
      const last = await exec(
        `SELECT DISTINCT ON (workflow_id) workflow_id, id, status, created_at FROM "engine"."run" ORDER BY workflow_id, created_at DESC, id DESC`,
      );
      const byWorkflow = new Map<string, WorkflowRunsSummary>();
      const entry = (id: string) => {
        let e = byWorkflow.get(id);
        if (!e) byWorkflow.set(id, (e = { workflowId: id, runs: 0, failed: 0, lastRun: null }));
        return e;
      };
      for (const r of counts.rows) Object.assign(entry(String(r.workflow_id)), { runs: Number(r.runs), failed: Number(r.failed) });
      for (const r of last.rows) entry(String(r.workflow_id)).lastRun = { id: String(r.id), status: r.status as RunStatus, createdAt: iso(r.created_at) };
      const workflows = [...byWorkflow.values()].sort((a, b) => (b.lastRun?.createdAt ?? '').localeCompare(a.lastRun?.createdAt ?? ''));
      return {
        since: since.toISOString(),
        runs: workflows.reduce((n, w) => n + w.runs, 0),
        failed: workflows.reduce((n, w) => n + w.failed, 0),
        workflows,
      };
    });
  }

  /**
   * The pipeline's health for one user since `since` (RunsHealth without the bus's backlog): runs by
   * status, the workflows with failures (their last failure each), the unfinished runs and the
   * dead-lettered events. One transaction, four index range scans on (owner_id, created_at) or the
   * status: a user's window of runs, not their history.
   */
  async health(
    userId: string,
    since: Date,
  ): Promise<Omit<RunsHealth, 'checkedAt' | 'since' | 'backlog'> & { backlog: Pick<RunsHealth['backlog'], 'unfinishedRuns' | 'oldestUnfinishedAt'> }> {
    return asUser(this.db, userId, async (exec) => {
      const window = since.toISOString();
      const statuses = await exec(`SELECT status, count(*)::int AS n FROM "engine"."run" WHERE created_at >= $1::timestamptz GROUP BY status`, [window]);
      const failing = await exec(
        `SELECT workflow_id, count(*)::int AS runs, (count(*) FILTER (WHERE status = 'failed'))::int AS failed,
                (array_agg(id ORDER BY created_at DESC, id DESC) FILTER (WHERE status = 'failed'))[1] AS last_id,
                max(created_at) FILTER (WHERE status = 'failed') AS last_at
           FROM "engine"."run" WHERE created_at >= $1::timestamptz
          GROUP BY workflow_id HAVING count(*) FILTER (WHERE status = 'failed') > 0
          ORDER BY failed DESC, last_at DESC LIMIT 10`,
        [window],
      );
      const lastErrors = failing.rows.length
        ? await exec(`SELECT id, error FROM "engine"."run" WHERE id = ANY($1::uuid[])`, [failing.rows.map((r) => String(r.last_id))])
        : { rows: [] as Record<string, unknown>[] };
      const errorOf = new Map(lastErrors.rows.map((r) => [String(r.id), (r.error as string | null) ?? null]));
      const unfinished = await exec(`SELECT count(*)::int AS n, min(created_at) AS oldest FROM "engine"."run" WHERE status IN ('queued', 'running')`);
      const dead = await exec(
        `SELECT count(*) OVER ()::int AS n, id, created_at, error FROM "engine"."run"
          WHERE created_at >= $1::timestamptz AND status = 'failed' AND starts_with(error, $2)
          ORDER BY created_at DESC, id DESC LIMIT 1`,
        [window, DEAD_LETTER_ERROR_PREFIX],
      );
      const byStatus = { queued: 0, running: 0, succeeded: 0, failed: 0, skipped: 0 };
      for (const r of statuses.rows) if (String(r.status) in byStatus) byStatus[r.status as keyof typeof byStatus] = Number(r.n);
      const lastDead = dead.rows[0];
      return {
        byStatus,
        failingWorkflows: failing.rows.map((r) => ({
          workflowId: String(r.workflow_id),
          runs: Number(r.runs),
          failed: Number(r.failed),
          lastFailure: { runId: String(r.last_id), at: iso(r.last_at), error: errorOf.get(String(r.last_id)) ?? null },
        })),
        backlog: { unfinishedRuns: Number(unfinished.rows[0]?.n ?? 0), oldestUnfinishedAt: isoOrNull(unfinished.rows[0]?.oldest) },
        deadLettered: {
          count: Number(lastDead?.n ?? 0),
          last: lastDead ? { runId: String(lastDead.id), at: iso(lastDead.created_at), error: String(lastDead.error) } : null,
        },
      };
    });
  }
}
