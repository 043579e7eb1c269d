import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, userContext, type Database } from '@flowdesk/db';

import type { ClaimResult, RunRecorder, RunWrite } from '../domain/ports.ts';

type Exec = Database['exec'];
import {
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  encodeCursor,
  type PageOf,
  type RunStatus,
  type RunStep,
  type RunsHealth,
  type RunsSummary,
  type TriggerEvent,
  type WorkflowRun,
  type WorkflowRunsSummary,
} from '@flowdesk/contracts';

import { checkpointKey, type StepCheckpoint } from '../domain/executor.ts';
import { compactLoopResults, expandLoopResults } from '../domain/loop-results.ts';
import { childResult } from '../domain/nodes/run-workflow.ts';
import { resumeParentWait } from './wait-store.ts';

/**
 * How the engine words a run it recorded for a dead-lettered trigger event (app.ts, the DLQ
 * subscriber): `the event could not be processed after <n> attempts: <reason>`. The health counts
 * those runs by it (runs-api.test.ts publishes a dead letter and checks the count).
 */
export const DEAD_LETTER_ERROR_PREFIX = 'the event could not be processed after ';

/**
 * True when a run write failed because of the data it carries, not the database: Postgres class 22
 * (data exception: a \u0000 or a lone surrogate in a JSON string) or 54 (program limit exceeded: a
 * statement too complex, a stack depth limit), or a RangeError while serialising it (nesting deeper
 * than the call stack). Writing the same data again can never succeed; anything else (the database
 * unreachable) may, so the bus retries it.
 */
export function isUnstorable(err: unknown): boolean {
  if (err instanceof RangeError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('54'));
}

export const ENGINE_SCHEMA = 'engine';
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');

/** Applies the engine's pending migrations (its `engine` schema: runs and their steps). */
export const migrateEngine = (db: Database) => migrate(db, MIGRATIONS_DIR, ENGINE_SCHEMA);

export interface RunListFilter {
  workflowId?: string;
  status?: RunStatus;
  cursor?: string;
  limit?: number;
}

const keyOf = (w: { workflowId: string; eventId: string }) => `${w.workflowId}/${w.eventId}`;

interface Pending {
  write: RunWrite;
  resolve(written: ClaimResult): void;
  reject(err: unknown): void;
}

interface PendingStep {
  write: StepCheckpoint & { ownerId: string; workflowId: string; eventId: string; nodeId: string };
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * The engine's runs, on its own schema. Writes are batched: every write asked for during one turn of
 * the event loop (and while the previous batch is in flight) goes to Postgres as one statement,
 * `engine.record_runs(batch)` — one round trip and one commit for the whole batch, row-level security
 * applied per owner inside it. A batch that fails is retried one write at a time, so one bad run (a
 * payload Postgres refuses) fails alone.
 */
export class RunStore implements RunRecorder {
  private queue: Pending[] = [];
  private steps: PendingStep[] = [];
  private scheduled = false;
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxBatch: number;
  private idle: (() => void)[] = [];
  private readonly listeners = new Set<(write: RunWrite) => void>();

  constructor(
    private readonly db: Database,
    options: { maxInFlight?: number; maxBatch?: number } = {},
  ) {
    // PGlite is one connection: concurrent batches would only queue behind each other.
    this.maxInFlight = options.maxInFlight ?? (db.kind === 'pglite' ? 1 : 2);
    this.maxBatch = options.maxBatch ?? 500;
  }

  /**
   * Records a run (batched). Resolves true when the row was written, false when the run had already
   * finished (a finished run is never changed: for a claim, the event was handled before).
   */
  record(write: RunWrite): Promise<boolean> {
    return this.claim(write).then((r) => r !== false);
  }

  /** As record(), telling a claim of a new run from one of a run an engine claimed before ('resumed'). */
  claim(write: RunWrite): Promise<ClaimResult> {
    return new Promise<ClaimResult>((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.schedule();
    });
  }

  /** The RunRecorder port's isUnstorable: the function below. */
  isUnstorable(err: unknown): boolean {
    return isUnstorable(err);
  }

  /**
   * Stores executed steps of a running run (batched with every other write of the same turn: one
   * statement for runs and checkpoints). A step already stored is kept. Resolves once committed.
   */
  checkpoint(run: { ownerId: string; workflowId: string; eventId: string }, steps: StepCheckpoint[]): Promise<void> {
    if (steps.length === 0) return Promise.resolve();
    // One promise for the run's steps (not one each): resolved when the last is stored, rejected by the first failure.
    return new Promise<void>((resolve, reject) => {
      let left = steps.length;
      let failed = false;
      const done = {
        resolve: () => {
          if (--left === 0 && !failed) resolve();
        },
        reject: (err: unknown) => {
          if (failed) return;
          failed = true;
          reject(err);
        },
      };
      for (const c of steps) this.steps.push({ write: { ...run, nodeId: checkpointKey(c.step.nodeId, c.step.item), ...c }, ...done });
      this.schedule();
    });
  }

  /**
   * The checkpoints of one run, by checkpoint key (the node id; `<id>#<item>` in a loop body), read
   * only when a claim answered 'resumed' (a run taken
   * over, or a parked run woken). Batched: the reads asked for in one turn of the event loop go out
   * as one query per owner (woken runs come in bursts when many timers are due together).
   */
  checkpoints(run: { ownerId: string; workflowId: string; eventId: string }): Promise<Map<string, StepCheckpoint>> {
    return new Promise((resolve, reject) => {
      this.reads.push({ run, resolve, reject });
      if (this.reads.length === 1) setImmediate(() => void this.readCheckpoints(this.reads.splice(0)));
    });
  }

  private reads: { run: { ownerId: string; workflowId: string; eventId: string }; resolve(m: Map<string, StepCheckpoint>): void; reject(e: unknown): void }[] =
    [];

  private async readCheckpoints(reads: RunStore['reads']): Promise<void> {
    const byOwner = new Map<string, RunStore['reads']>();
    for (const r of reads) byOwner.set(r.run.ownerId, [...(byOwner.get(r.run.ownerId) ?? []), r]);
    for (const [owner, rs] of byOwner) {
      try {
        const { rows } = await this.asUser(owner, (exec) =>
          exec(
            `SELECT workflow_id::text || '/' || event_id AS k, node_id, step, output, branch FROM "engine"."run_step"
              WHERE (workflow_id, event_id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
            [rs.map((r) => r.run.workflowId), rs.map((r) => r.run.eventId)],
          ),
        );
        const maps = new Map<string, Map<string, StepCheckpoint>>();
        for (const r of rows) {
          const k = String(r.k);
          if (!maps.has(k)) maps.set(k, new Map());
          maps
            .get(k)!
            .set(String(r.node_id), { step: jsonOf(r.step) as RunStep, output: jsonOf(r.output), ...(r.branch ? { branch: r.branch as string } : {}) });
        }
        for (const r of rs) r.resolve(maps.get(keyOf(r.run)) ?? new Map<string, StepCheckpoint>());
      } catch (err) {
        for (const r of rs) r.reject(err);
      }
    }
  }

  /**
   * Calls `listener` with every write that reached the table (claims and outcomes), after its batch
   * committed: the runs stream (routes/runs.ts) is fed from here. Returns the unsubscribe.
   */
  onRecorded(listener: (write: RunWrite) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private announce(writes: RunWrite[], written: Map<string, ClaimResult>): void {
    if (this.listeners.size === 0) return;
    for (const w of writes) {
      if (!written.has(keyOf(w))) continue;
      for (const l of this.listeners) {
        try {
          l(w);
        } catch {
          // A listener's failure (a closed stream) never fails the write.
        }
      }
    }
  }

  /** Resolves once every write asked for so far has been answered. */
  async drain(): Promise<void> {
    if (this.queue.length === 0 && this.steps.length === 0 && this.inFlight === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || (this.queue.length === 0 && this.steps.length === 0)) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.inFlight >= this.maxInFlight || (this.queue.length === 0 && this.steps.length === 0)) return;
      const batch = this.queue.splice(0, this.maxBatch);
      const steps = this.steps.splice(0, this.maxBatch);
      this.inFlight++;
      void this.flush(batch, steps).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0 || this.steps.length > 0) this.schedule();
        else if (this.inFlight === 0) for (const done of this.idle.splice(0)) done();
      });
    });
  }

  private async flush(batch: Pending[], steps: PendingStep[]): Promise<void> {
    // One row per run and batch: ON CONFLICT cannot touch a row twice in one statement. The last
    // write of a run wins; earlier ones of the same run in this batch get its answer.
    const byKey = new Map<string, Pending[]>();
    for (const p of batch) {
      const k = `${p.write.ownerId}/${keyOf(p.write)}`;
      byKey.set(k, [...(byKey.get(k) ?? []), p]);
    }
    const writes = [...byKey.values()].map((ps) => ps[ps.length - 1]!.write);
    const answer = (p: Pending, written: Map<string, ClaimResult>) => p.resolve(written.get(keyOf(p.write)) ?? false);
    try {
      const written = await this.write(
        writes,
        steps.map((s) => s.write),
      );
      this.announce(writes, written);
      for (const ps of byKey.values()) for (const p of ps) answer(p, written);
      for (const s of steps) s.resolve();
    } catch (err) {
      if (writes.length + steps.length === 1) {
        for (const p of batch) p.reject(err);
        for (const s of steps) s.reject(err);
        return;
      }
      for (const ps of byKey.values()) {
        try {
          const written = await this.write([ps[ps.length - 1]!.write], []);
          this.announce([ps[ps.length - 1]!.write], written);
          for (const p of ps) answer(p, written);
        } catch (one) {
          for (const p of ps) p.reject(one);
        }
      }
      for (const s of steps)
        await this.write([], [s.write]).then(
          () => s.resolve(),
          (e: unknown) => s.reject(e),
        );
    }
  }

  /** One statement for the batch: checkpoints first, then the runs; a '+' before a key is a resumed claim. */
  private async write(writes: RunWrite[], steps: PendingStep['write'][]): Promise<Map<string, ClaimResult>> {
    const stored = writes.map((w) => (w.steps ? { ...w, steps: compactLoopResults(w.steps) } : w));
    const { rows } = await this.db.exec('SELECT "engine".record_runs($1::jsonb, $2::jsonb) AS k', [JSON.stringify(stored), JSON.stringify(steps)]);
    return new Map(rows.map((r) => String(r.k)).map((k) => (k.startsWith('+') ? [k.slice(1), 'resumed'] : [k, 'new'])));
  }

  /** Runs fn in one transaction as `userId` (libs/db userContext: role flowdesk_app, app.user_id and the statement timeout set locally). */
  private asUser<R>(userId: string, fn: (exec: Exec) => Promise<R>): Promise<R> {
    const context = userContext(userId);
    // db.transaction, not BEGIN through a session: on PGlite no other caller's statement (a run
    // being recorded as the engine) may land inside this user's transaction.
    return this.db.transaction(async (exec) => {
      await exec(context.text, context.values);
      return fn(exec);
    });
  }

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
    const rows = await this.asUser(userId, (exec) => exec(sql, params));
    const more = rows.rows.length > limit;
    const items = rows.rows.slice(0, limit).map(toRun);
    const last = items[items.length - 1];
    return { items, nextCursor: more && last ? encodeCursor({ l: listing, k: 'keyset', t: last.createdAt, id: last.id }) : null };
  }

  /** One run with its steps, or null when it does not exist for this user. */
  /** The run of one trigger event (the unique key), or null. */
  async getByEvent(userId: string, workflowId: string, eventId: string): Promise<WorkflowRun | null> {
    const { rows } = await this.asUser(userId, (exec) =>
      exec(`SELECT ${COLUMNS} FROM "engine"."run" WHERE workflow_id = $1 AND event_id = $2`, [workflowId, eventId]),
    );
    return rows[0] ? toRun(rows[0]) : null;
  }

  async get(userId: string, runId: string): Promise<WorkflowRun | null> {
    return this.asUser(userId, async (exec) => {
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
    return this.asUser(userId, async (exec) => {
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
    return this.asUser(userId, async (exec) => {
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
    const { rows } = await this.asUser(userId, (exec) =>
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
    const result = await this.asUser<{ cancelled?: WorkflowRun; finished?: WorkflowRun } | null>(userId, async (exec) => {
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
    await this.asUser(write.ownerId, (exec) =>
      exec(
        `UPDATE "engine"."run" SET steps = $3::jsonb, warnings = $4::jsonb, started_at = COALESCE(started_at, $5::timestamptz)
          WHERE workflow_id = $1 AND event_id = $2 AND status = 'cancelled'`,
        [write.workflowId, write.eventId, JSON.stringify(compactLoopResults(write.steps ?? [])), JSON.stringify(write.warnings ?? []), write.startedAt ?? null],
      ),
    );
  }

  /** Runs one statement as the housekeeping role (flowdesk_run_keeper: reads a few columns of every owner's runs, deletes runs). */
  private asKeeper<R>(fn: (exec: Exec) => Promise<R>): Promise<R> {
    return this.db.transaction(async (exec) => {
      await exec(`SELECT set_config('role', 'flowdesk_run_keeper', true)`);
      return fn(exec);
    });
  }

  /** Of these runs (`<workflowId>/<eventId>` of each owner), the ones now `cancelled`. */
  async cancelledAmong(runs: readonly { ownerId: string; workflowId: string; eventId: string }[]): Promise<Set<string>> {
    if (runs.length === 0) return new Set();
    const { rows } = await this.asKeeper((exec) =>
      exec(
        `SELECT workflow_id::text || '/' || event_id AS k FROM "engine"."run"
          WHERE status = 'cancelled' AND (owner_id, workflow_id, event_id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[]))`,
        [runs.map((r) => r.ownerId), runs.map((r) => r.workflowId), runs.map((r) => r.eventId)],
      ),
    );
    return new Set(rows.map((r) => String(r.k)));
  }

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
    return this.asKeeper(async (exec) => {
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
    await this.asUser(userId, async (exec) => {
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

const COLUMNS =
  'id, workflow_id, event_id, status, trigger_payload, steps, warnings, error, created_at, started_at, finished_at, started_by, rerun_of, trigger_type, trace_id';

const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));
const jsonOf = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

function toRun(r: Record<string, unknown>): WorkflowRun {
  const startedAt = isoOrNull(r.started_at);
  const finishedAt = isoOrNull(r.finished_at);
  return {
    id: String(r.id),
    workflowId: String(r.workflow_id),
    eventId: String(r.event_id),
    status: r.status as RunStatus,
    triggerPayload: jsonOf(r.trigger_payload) as Record<string, unknown>,
    steps: expandLoopResults(jsonOf(r.steps) as RunStep[]),
    warnings: jsonOf(r.warnings) as string[],
    error: (r.error as string | null) ?? null,
    createdAt: iso(r.created_at),
    startedAt,
    finishedAt,
    durationMs: startedAt && finishedAt ? Date.parse(finishedAt) - Date.parse(startedAt) : null,
    triggerType: (r.trigger_type as RunWrite['triggerType']) ?? 'webhook',
    startedBy: (r.started_by as string | null | undefined) ?? null,
    rerunOf: (r.rerun_of as string | null | undefined) ?? null,
    traceId: (r.trace_id as string | null | undefined) ?? null,
  };
}
