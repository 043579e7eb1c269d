import { randomUUID } from 'node:crypto';
import {
  HttpError,
  type TriggerOrigin,
  type ListNotesQuery,
  type ListProjectsQuery,
  type ListTasksQuery,
  type UpdateNote,
  type UpdateProject,
} from '@flowdesk/contracts';
import type { QueryAsUser } from '@flowdesk/db';
import type { Note as NoteRow, Project as ProjectRow, Task as TaskRow } from '../generated/prisma/client.ts';
import { OPEN_STATUSES, type TaskColumns } from '../domain/tasks.ts';
import { startOfUtcDay, toDateOnly } from '../domain/dates.ts';

/**
 * The hot routes' SQL (tasks, projects and notes), run through libs/db's row-level-security executor: one
 * statement per request, one round trip on Postgres (docs/data-and-rls.md). Rows come back in the
 * Prisma model's shape, so the API mappers (domain/mappers.ts) and responses stay the same. Every
 * value is a bound parameter; the only text spliced in is fixed column and clause text from here.
 */

const TASK_COLUMNS = `id, owner_id AS "ownerId", project_id AS "projectId", title, notes, status, priority,
  due_date::text AS "dueDate", tags, completed_at AS "completedAt", created_at AS "createdAt", updated_at AS "updatedAt"`;
const NOTE_COLUMNS = `id, owner_id AS "ownerId", project_id AS "projectId", title, content, tags, pinned, created_at AS "createdAt", updated_at AS "updatedAt"`;
const PROJECT_COLUMNS = `id, owner_id AS "ownerId", name, description, color, status, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** A DATE travels as text (both drivers agree on it) and becomes midnight UTC, as Prisma gives it. */
const taskRow = (r: Omit<TaskRow, 'dueDate'> & { dueDate: string | null }): TaskRow => ({
  ...r,
  dueDate: r.dueDate === null ? null : new Date(`${r.dueDate}T00:00:00.000Z`),
});

/** Collects bound values; `p(v)` answers the placeholder of v. */
class Params {
  readonly values: unknown[] = [];
  p(value: unknown, cast = ''): string {
    this.values.push(value);
    return `$${this.values.length}${cast}`;
  }
}

/** Postgres errors that row-level security makes look like a missing row (cf. mapPrismaError). */
export function mapSqlError(err: unknown): never {
  const code = (err as { code?: string }).code;
  // Foreign keys carry owner_id: another user's project is as absent as one that never existed.
  if (code === '23503') throw new HttpError('not_found', 'Referenced project not found');
  throw err;
}

/** ILIKE '%text%' with the user's % _ \ taken literally (as domain/text-search.ts does for Prisma). */
const containsPattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export interface KeysetCursor {
  createdAt: Date;
  id: string;
}

export type TaskSort = NonNullable<ListTasksQuery['sort']>;

const TASK_ORDER: Record<TaskSort, string> = {
  created_desc: 'created_at DESC, id DESC',
  due_asc: 'due_date ASC NULLS LAST, created_at DESC, id DESC',
  priority_desc: 'priority DESC, due_date ASC NULLS LAST, id DESC',
  updated_desc: 'updated_at DESC, id DESC',
};

export class TaskStore {
  constructor(private readonly query: QueryAsUser) {}

  /** One page of tasks: the filters of domain/tasks.ts taskFilter, in SQL. */
  async list(userId: string, q: ListTasksQuery, now: Date, page: { sort: TaskSort; take: number; after?: KeysetCursor; skip?: number }): Promise<TaskRow[]> {
    const ps = new Params();
    const where: string[] = [];
    if (q.projectId) where.push(`project_id = ${ps.p(q.projectId, '::uuid')}`);
    if (q.inbox) where.push('project_id IS NULL');
    if (q.status?.length) where.push(`status::text = ANY(${ps.p(q.status, '::text[]')})`);
    if (q.priority?.length) where.push(`priority::text = ANY(${ps.p(q.priority, '::text[]')})`);
    if (q.tag) where.push(`tags @> ARRAY[${ps.p(q.tag, '::text')}]`);
    if (q.dueBefore) where.push(`due_date <= ${ps.p(q.dueBefore, '::date')}`);
    if (q.dueAfter) where.push(`due_date >= ${ps.p(q.dueAfter, '::date')}`);
    if (q.overdue) {
      where.push(`due_date < ${ps.p(toDateOnly(startOfUtcDay(now)), '::date')} AND status::text = ANY(${ps.p(OPEN_STATUSES, '::text[]')})`);
    }
    if (q.q) {
      const pattern = ps.p(containsPattern(q.q), '::text');
      where.push(`(title ILIKE ${pattern} OR notes ILIKE ${pattern})`);
    }
    if (page.after) {
      where.push(`(created_at, id) < (${ps.p(page.after.createdAt, '::timestamptz')}, ${ps.p(page.after.id, '::uuid')})`);
    }
    const sql =
      `SELECT ${TASK_COLUMNS} FROM workspace.task` +
      (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY ${TASK_ORDER[page.sort]} LIMIT ${ps.p(page.take, '::int')}` +
      (page.skip ? ` OFFSET ${ps.p(page.skip, '::int')}` : '');
    const rows = await this.query<Parameters<typeof taskRow>[0]>(userId, sql, ps.values);
    return rows.map(taskRow);
  }

  async get(userId: string, id: string): Promise<TaskRow | undefined> {
    const rows = await this.query<Parameters<typeof taskRow>[0]>(userId, `SELECT ${TASK_COLUMNS} FROM workspace.task WHERE id = $1::uuid`, [id]);
    return rows[0] && taskRow(rows[0]);
  }

  /** Inserts a task with the columns' defaults where the request left them out. */
  async create(userId: string, data: TaskColumns & { title: string; origin?: TriggerOrigin | null }, at: Date): Promise<TaskRow> {
    const rows = await this.query<Parameters<typeof taskRow>[0]>(
      userId,
      `INSERT INTO workspace.task (id, owner_id, project_id, title, notes, status, priority, due_date, tags, completed_at, created_at, updated_at, origin_workflow_id, origin_depth)
       VALUES (gen_random_uuid(), $1::uuid, $2::uuid, $3::text, $4::text, $5::text::workspace."TaskStatus", $6::text::workspace."TaskPriority",
               $7::date, $8::text[], $9::timestamptz, $10::timestamptz, $10::timestamptz, $11::uuid, $12::smallint)
       RETURNING ${TASK_COLUMNS}`,
      [
        userId,
        data.projectId ?? null,
        data.title,
        data.notes ?? '',
        data.status ?? 'todo',
        data.priority ?? 'none',
        data.dueDate ? toDateOnly(data.dueDate) : null,
        data.tags ?? [],
        data.completedAt ?? null,
        at,
        data.origin?.workflowId ?? null,
        data.origin?.depth ?? null,
      ],
    ).catch(mapSqlError);
    return taskRow(rows[0]!);
  }

  /**
   * Inserts many tasks of one user in one statement (the workflow engine's batched Create Task): the
   * rows travel as one JSON array, ids are chosen here so each answer finds its row whatever order
   * RETURNING gives. All or nothing: a foreign key to a project the user cannot see fails the whole
   * statement (the caller then retries the rows one by one to find which).
   */
  async createMany(
    userId: string,
    items: (TaskColumns & { title: string; origin?: TriggerOrigin | null; idempotencyKey?: string | null })[],
    at: Date,
  ): Promise<TaskRow[]> {
    const rows = items.map((data) => ({
      idempotency_key: data.idempotencyKey ?? null,
      origin_workflow_id: data.origin?.workflowId ?? null,
      origin_depth: data.origin?.depth ?? null,
      id: randomUUID(),
      project_id: data.projectId ?? null,
      title: data.title,
      notes: data.notes ?? '',
      status: data.status ?? 'todo',
      priority: data.priority ?? 'none',
      due_date: data.dueDate ? toDateOnly(data.dueDate) : null,
      tags: data.tags ?? [],
      completed_at: data.completedAt ? data.completedAt.toISOString() : null,
    }));
    const inserted = await this.query<Parameters<typeof taskRow>[0]>(
      userId,
      `INSERT INTO workspace.task (id, owner_id, project_id, title, notes, status, priority, due_date, tags, completed_at, created_at, updated_at, origin_workflow_id, origin_depth, idempotency_key)
       SELECT r.id, $1::uuid, r.project_id, r.title, r.notes, r.status::workspace."TaskStatus", r.priority::workspace."TaskPriority",
              r.due_date, r.tags, r.completed_at, $3::timestamptz, $3::timestamptz, r.origin_workflow_id, r.origin_depth, r.idempotency_key
       FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, project_id uuid, title text, notes text, status text, priority text, due_date date, tags text[], completed_at timestamptz,
                                               origin_workflow_id uuid, origin_depth smallint, idempotency_key text)
       ON CONFLICT (owner_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${TASK_COLUMNS}`,
      [userId, JSON.stringify(rows), at],
    ).catch(mapSqlError);
    const byId = new Map(inserted.map((r) => [r.id, taskRow(r)]));
    // A key used before (or twice in this batch) inserted nothing: answer the task made with it.
    const reused = rows.filter((r) => !byId.has(r.id) && r.idempotency_key !== null).map((r) => r.idempotency_key!);
    const byKey = new Map<string, TaskRow>();
    if (reused.length > 0) {
      const found = await this.query<Parameters<typeof taskRow>[0] & { idempotencyKey: string }>(
        userId,
        `SELECT ${TASK_COLUMNS}, idempotency_key AS "idempotencyKey" FROM workspace.task WHERE idempotency_key = ANY($1::text[])`,
        [reused],
      );
      for (const r of found) byKey.set(r.idempotencyKey, taskRow(r));
    }
    return rows.map((r) => byId.get(r.id) ?? byKey.get(r.idempotency_key!)!);
  }

  /**
   * Applies a change in one statement. completedAt follows status against the row's current status
   * (in SET, a column names its old value): set when the task becomes done, cleared when it leaves
   * done, kept otherwise — what domain/tasks.ts taskChanges does, without a read first.
   */
  async update(userId: string, id: string, data: Omit<TaskColumns, 'completedAt'>, now: Date, at: Date): Promise<TaskRow | undefined> {
    const ps = new Params();
    ps.p(id, '::uuid');
    const set: string[] = [];
    if (data.title !== undefined) set.push(`title = ${ps.p(data.title, '::text')}`);
    if (data.notes !== undefined) set.push(`notes = ${ps.p(data.notes, '::text')}`);
    if (data.priority !== undefined) set.push(`priority = ${ps.p(data.priority, '::text')}::workspace."TaskPriority"`);
    if (data.tags !== undefined) set.push(`tags = ${ps.p(data.tags, '::text[]')}`);
    if (data.projectId !== undefined) set.push(`project_id = ${ps.p(data.projectId, '::uuid')}`);
    if (data.dueDate !== undefined) set.push(`due_date = ${ps.p(data.dueDate ? toDateOnly(data.dueDate) : null, '::date')}`);
    if (data.status !== undefined) {
      set.push(`status = ${ps.p(data.status, '::text')}::workspace."TaskStatus"`);
      set.push(
        data.status === 'done'
          ? `completed_at = CASE WHEN status = 'done' THEN completed_at ELSE ${ps.p(now, '::timestamptz')} END`
          : `completed_at = CASE WHEN status = 'done' THEN NULL ELSE completed_at END`,
      );
    }
    set.push(`updated_at = ${ps.p(at, '::timestamptz')}`);
    const rows = await this.query<Parameters<typeof taskRow>[0]>(
      userId,
      `UPDATE workspace.task SET ${set.join(', ')} WHERE id = $1::uuid RETURNING ${TASK_COLUMNS}`,
      ps.values,
    ).catch(mapSqlError);
    return rows[0] && taskRow(rows[0]);
  }

  /** True when the task existed (for this user) and is gone. */
  async delete(userId: string, id: string): Promise<boolean> {
    const rows = await this.query(userId, 'DELETE FROM workspace.task WHERE id = $1::uuid RETURNING id', [id]);
    return rows.length > 0;
  }
}

export interface TaskCounts {
  open: number;
  done: number;
  total: number;
}

export class ProjectStore {
  constructor(private readonly query: QueryAsUser) {}

  async list(userId: string, q: ListProjectsQuery, page: { take: number; after?: KeysetCursor }): Promise<ProjectRow[]> {
    const ps = new Params();
    const where: string[] = [];
    if (q.status) where.push(`status::text = ${ps.p(q.status, '::text')}`);
    if (q.q) {
      const pattern = ps.p(containsPattern(q.q), '::text');
      where.push(`(name ILIKE ${pattern} OR description ILIKE ${pattern})`);
    }
    if (page.after) {
      where.push(`(created_at, id) < (${ps.p(page.after.createdAt, '::timestamptz')}, ${ps.p(page.after.id, '::uuid')})`);
    }
    const sql =
      `SELECT ${PROJECT_COLUMNS} FROM workspace.project` +
      (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY created_at DESC, id DESC LIMIT ${ps.p(page.take, '::int')}`;
    return this.query<ProjectRow>(userId, sql, ps.values);
  }

  /** The project and its task counts by status, in one statement. */
  async getWithCounts(userId: string, id: string): Promise<{ row: ProjectRow; counts: TaskCounts } | undefined> {
    const rows = await this.query<ProjectRow & TaskCounts>(
      userId,
      `SELECT ${PROJECT_COLUMNS}, c.open, c.done, c.total
       FROM workspace.project p
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE t.status IN ('todo', 'in_progress'))::int AS open,
                count(*) FILTER (WHERE t.status = 'done')::int AS done,
                count(*)::int AS total
         FROM workspace.task t WHERE t.project_id = p.id
       ) c
       WHERE p.id = $1::uuid`,
      [id],
    );
    const r = rows[0];
    if (!r) return undefined;
    const { open, done, total, ...row } = r;
    return { row, counts: { open, done, total } };
  }

  async create(userId: string, body: UpdateProject & { name: string }, at: Date): Promise<ProjectRow> {
    const rows = await this.query<ProjectRow>(
      userId,
      `INSERT INTO workspace.project (id, owner_id, name, description, color, status, created_at, updated_at)
       VALUES (gen_random_uuid(), $1::uuid, $2::text, $3::text, $4::text, $5::text::workspace."ProjectStatus", $6::timestamptz, $6::timestamptz)
       RETURNING ${PROJECT_COLUMNS}`,
      [userId, body.name, body.description ?? '', body.color ?? null, body.status ?? 'active', at],
    );
    return rows[0]!;
  }

  async update(userId: string, id: string, body: UpdateProject, at: Date): Promise<ProjectRow | undefined> {
    const ps = new Params();
    ps.p(id, '::uuid');
    const set: string[] = [];
    if (body.name !== undefined) set.push(`name = ${ps.p(body.name, '::text')}`);
    if (body.description !== undefined) set.push(`description = ${ps.p(body.description, '::text')}`);
    if (body.color !== undefined) set.push(`color = ${ps.p(body.color, '::text')}`);
    if (body.status !== undefined) set.push(`status = ${ps.p(body.status, '::text')}::workspace."ProjectStatus"`);
    set.push(`updated_at = ${ps.p(at, '::timestamptz')}`);
    const rows = await this.query<ProjectRow>(
      userId,
      `UPDATE workspace.project SET ${set.join(', ')} WHERE id = $1::uuid RETURNING ${PROJECT_COLUMNS}`,
      ps.values,
    );
    return rows[0];
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const rows = await this.query(userId, 'DELETE FROM workspace.project WHERE id = $1::uuid RETURNING id', [id]);
    return rows.length > 0;
  }
}

export class NoteStore {
  constructor(private readonly query: QueryAsUser) {}

  async list(userId: string, q: ListNotesQuery, page: { take: number; after?: KeysetCursor }): Promise<NoteRow[]> {
    const ps = new Params();
    const where: string[] = [];
    if (q.projectId) where.push(`project_id = ${ps.p(q.projectId, '::uuid')}`);
    if (q.tag) where.push(`tags @> ARRAY[${ps.p(q.tag, '::text')}]`);
    if (q.pinned !== undefined) where.push(`pinned = ${ps.p(q.pinned, '::boolean')}`);
    if (q.q) {
      const pattern = ps.p(containsPattern(q.q), '::text');
      where.push(`(title ILIKE ${pattern} OR content ILIKE ${pattern})`);
    }
    if (page.after) {
      where.push(`(created_at, id) < (${ps.p(page.after.createdAt, '::timestamptz')}, ${ps.p(page.after.id, '::uuid')})`);
    }
    const sql =
      `SELECT ${NOTE_COLUMNS} FROM workspace.note` +
      (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY created_at DESC, id DESC LIMIT ${ps.p(page.take, '::int')}`;
    return this.query<NoteRow>(userId, sql, ps.values);
  }

  async get(userId: string, id: string): Promise<NoteRow | undefined> {
    return (await this.query<NoteRow>(userId, `SELECT ${NOTE_COLUMNS} FROM workspace.note WHERE id = $1::uuid`, [id]))[0];
  }

  async create(userId: string, body: UpdateNote & { title: string }, at: Date): Promise<NoteRow> {
    const rows = await this.query<NoteRow>(
      userId,
      `INSERT INTO workspace.note (id, owner_id, project_id, title, content, tags, pinned, created_at, updated_at)
       VALUES (gen_random_uuid(), $1::uuid, $2::uuid, $3::text, $4::text, $5::text[], $6::boolean, $7::timestamptz, $7::timestamptz)
       RETURNING ${NOTE_COLUMNS}`,
      [userId, body.projectId ?? null, body.title, body.content ?? '', body.tags ?? [], body.pinned ?? false, at],
    ).catch(mapSqlError);
    return rows[0]!;
  }

  async update(userId: string, id: string, body: UpdateNote, at: Date): Promise<NoteRow | undefined> {
    const ps = new Params();
    ps.p(id, '::uuid');
    const set: string[] = [];
    if (body.title !== undefined) set.push(`title = ${ps.p(body.title, '::text')}`);
    if (body.content !== undefined) set.push(`content = ${ps.p(body.content, '::text')}`);
    if (body.projectId !== undefined) set.push(`project_id = ${ps.p(body.projectId, '::uuid')}`);
    if (body.tags !== undefined) set.push(`tags = ${ps.p(body.tags, '::text[]')}`);
    if (body.pinned !== undefined) set.push(`pinned = ${ps.p(body.pinned, '::boolean')}`);
    set.push(`updated_at = ${ps.p(at, '::timestamptz')}`);
    const rows = await this.query<NoteRow>(
      userId,
      `UPDATE workspace.note SET ${set.join(', ')} WHERE id = $1::uuid RETURNING ${NOTE_COLUMNS}`,
      ps.values,
    ).catch(mapSqlError);
    return rows[0];
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return (await this.query(userId, 'DELETE FROM workspace.note WHERE id = $1::uuid RETURNING id', [id])).length > 0;
  }
}

/** The workflow columns the engine writes (runs' sample payload), one statement each. */
export class WorkflowStore {
  constructor(private readonly query: QueryAsUser) {}

  /**
   * True when the user's workflow exists; it then keeps this payload unless its sample is pinned
   * (docs/console.md, "Pinned sample"): a pinned sample stays as pinned. One statement either way.
   */
  async setSamplePayload(userId: string, id: string, payload: unknown, at: Date): Promise<boolean> {
    const rows = await this.query(
      userId,
      `WITH found AS (SELECT id, sample_pinned_at FROM workspace.workflow WHERE id = $1::uuid),
            kept AS (UPDATE workspace.workflow w SET sample_payload = $2::jsonb, sample_payload_at = $3::timestamptz, updated_at = $4::timestamptz
                       FROM found WHERE w.id = found.id AND found.sample_pinned_at IS NULL RETURNING w.id)
       SELECT id FROM found`,
      [id, JSON.stringify(payload), at, new Date()],
    );
    return rows.length > 0;
  }
}
