/**
 * How a run row reads (COLUMNS, toRun) and the two roles the run store's statements run as (asUser,
 * asKeeper), shared by the store's writes, reads, run control and retention.
 */
import { userContext, type Database } from '@flowdesk/db';
import type { RunWrite } from '../domain/ports.ts';
import { type RunStatus, type RunStep, type WorkflowRun } from '@flowdesk/contracts';
import { expandLoopResults } from '../domain/loop-results.ts';

export type Exec = Database['exec'];

/**
 * How the engine words a run it recorded for a dead-lettered trigger event (app.ts, the DLQ
 * subscriber): `the event could not be processed after <n> attempts: <reason>`. The health counts
 * those runs by it (runs-api.test.ts publishes a dead letter and checks the count).
 */
export const DEAD_LETTER_ERROR_PREFIX = 'the event could not be processed after ';

export const keyOf = (w: { workflowId: string; eventId: string }) => `${w.workflowId}/${w.eventId}`;

/** Runs fn in one transaction as `userId` (libs/db userContext: role flowdesk_app, app.user_id and the statement timeout set locally). */
export function asUser<R>(db: Database, userId: string, fn: (exec: Exec) => Promise<R>): Promise<R> {
  const context = userContext(userId);
  // db.transaction, not BEGIN through a session: on PGlite no other caller's statement (a run
  // being recorded as the engine) may land inside this user's transaction.
  return db.transaction(async (exec) => {
    await exec(context.text, context.values);
    return fn(exec);
  });
}

/** Runs one statement as the housekeeping role (flowdesk_run_keeper: reads a few columns of every owner's runs, deletes runs). */
export function asKeeper<R>(db: Database, fn: (exec: Exec) => Promise<R>): Promise<R> {
  return db.transaction(async (exec) => {
    await exec(`SELECT set_config('role', 'flowdesk_run_keeper', true)`);
    return fn(exec);
  });
}

export const COLUMNS =
  'id, workflow_id, event_id, status, trigger_payload, steps, warnings, error, created_at, started_at, finished_at, started_by, rerun_of, trigger_type, trace_id, workflow_version';

export const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();
export const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));
export const jsonOf = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
/**
 * A jsonb column selected as `::text`, parsed once. Both drivers already parse jsonb, so `jsonOf` on a
 * value that is a JSON string (a step's output "yes" or "") would parse it a second time and throw.
 */
export const jsonText = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : null);

export function toRun(r: Record<string, unknown>): WorkflowRun {
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
    workflowVersion: r.workflow_version === null || r.workflow_version === undefined ? null : Number(r.workflow_version),
  };
}
