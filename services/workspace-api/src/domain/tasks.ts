import type { ListTasksQuery, TaskPriority, TaskStatus, UpdateTask } from '@flowdesk/contracts';
import type { Prisma } from '../generated/prisma/client.ts';
import { fromDateOnly, startOfUtcDay } from './dates.ts';
import { containsText } from './text-search.ts';

const OPEN: TaskStatus[] = ['todo', 'in_progress'];

/** The where clause of a task listing; every filter narrows (AND). */
export function taskFilter(q: ListTasksQuery, now: Date): Prisma.TaskWhereInput {
  const and: Prisma.TaskWhereInput[] = [];
  if (q.projectId) and.push({ projectId: q.projectId });
  if (q.inbox) and.push({ projectId: null });
  if (q.status?.length) and.push({ status: { in: q.status } });
  if (q.priority?.length) and.push({ priority: { in: q.priority } });
  if (q.tag) and.push({ tags: { has: q.tag } });
  if (q.dueBefore) and.push({ dueDate: { lte: fromDateOnly(q.dueBefore)! } });
  if (q.dueAfter) and.push({ dueDate: { gte: fromDateOnly(q.dueAfter)! } });
  if (q.overdue) and.push({ dueDate: { lt: startOfUtcDay(now) }, status: { in: OPEN } });
  if (q.q) and.push({ OR: [{ title: containsText(q.q) }, { notes: containsText(q.q) }] });
  return { AND: and };
}

export interface TaskColumns {
  title?: string;
  notes?: string;
  priority?: TaskPriority;
  tags?: string[];
  projectId?: string | null;
  dueDate?: Date | null;
  status?: TaskStatus;
  completedAt?: Date | null;
}

/**
 * The columns a create or update writes. completedAt follows status: set when a task becomes done,
 * cleared when it leaves done, untouched otherwise.
 */
export function taskChanges(body: UpdateTask & { priority?: TaskPriority }, currentStatus: TaskStatus | undefined, now: Date): TaskColumns {
  const data: TaskColumns = {};
  if (body.title !== undefined) data.title = body.title;
  if (body.notes !== undefined) data.notes = body.notes;
  if (body.priority !== undefined) data.priority = body.priority;
  if (body.tags !== undefined) data.tags = body.tags;
  if (body.projectId !== undefined) data.projectId = body.projectId;
  if (body.dueDate !== undefined) data.dueDate = fromDateOnly(body.dueDate);
  if (body.status !== undefined) {
    data.status = body.status;
    if (body.status === 'done' && currentStatus !== 'done') data.completedAt = now;
    if (body.status !== 'done' && currentStatus === 'done') data.completedAt = null;
  }
  return data;
}

export { OPEN as OPEN_STATUSES };
