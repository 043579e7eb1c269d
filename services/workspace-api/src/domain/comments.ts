import { HttpError, type ActivityItem, type Comment, type CommentTarget, type UserProfile } from '@flowdesk/contracts';
import type { Comment as CommentRow, UserProfile as ProfileRow } from '../generated/prisma/client.ts';
import type { Tx } from './tx.ts';
import { iso, isoOrNull } from './dates.ts';

/** The column that holds a comment's target, per kind of target. */
export const targetColumn = { task: 'taskId', project: 'projectId', note: 'noteId' } as const satisfies Record<CommentTarget, keyof CommentRow>;
const targetName: Record<CommentTarget, string> = { task: 'Task', project: 'Project', note: 'Note' };

/**
 * The target must be the caller's: under row-level security another user's row is simply absent,
 * so this answers 404 alike for unknown and foreign ids (the composite foreign key would refuse it too).
 */
export async function assertTargetVisible(tx: Tx, type: CommentTarget, id: string): Promise<void> {
  const found =
    type === 'task'
      ? await tx.task.findUnique({ where: { id }, select: { id: true } })
      : type === 'project'
        ? await tx.project.findUnique({ where: { id }, select: { id: true } })
        : await tx.note.findUnique({ where: { id }, select: { id: true } });
  if (!found) throw new HttpError('not_found', `${targetName[type]} not found`);
}

export const toComment = (r: CommentRow): Comment => ({
  id: r.id,
  targetType: r.targetType,
  targetId: (r.taskId ?? r.projectId ?? r.noteId)!,
  body: r.body,
  createdAt: iso(r.createdAt),
});

export const defaultProfile = (userId: string): UserProfile => ({
  userId,
  displayName: null,
  timezone: 'UTC',
  weekStartsOn: 'monday',
  workdayStart: '09:00',
  workdayEnd: '17:00',
  defaultProjectId: null,
  updatedAt: null,
});

export const toProfile = (r: ProfileRow): UserProfile => ({
  userId: r.ownerId,
  displayName: r.displayName,
  timezone: r.timezone,
  weekStartsOn: r.weekStartsOn,
  workdayStart: r.workdayStart,
  workdayEnd: r.workdayEnd,
  defaultProjectId: r.defaultProjectId,
  updatedAt: isoOrNull(r.updatedAt),
});

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Recent activity, derived from the rows' own timestamps (no separate event log yet): the newest
 * `limit` changes of each kind, merged. A row never updated since creation counts as created; a task
 * whose completion is its last change counts as completed.
 */
export async function recentActivity(tx: Tx, limit: number, since: Date | undefined): Promise<ActivityItem[]> {
  const changed = since ? { updatedAt: { gt: since } } : {};
  const order = { updatedAt: 'desc' as const };
  const [projects, tasks, notes, entries, workflows, comments] = await Promise.all([
    tx.project.findMany({ where: changed, orderBy: order, take: limit }),
    tx.task.findMany({ where: changed, orderBy: order, take: limit }),
    tx.note.findMany({ where: changed, orderBy: order, take: limit }),
    tx.calendarEntry.findMany({ where: changed, orderBy: order, take: limit }),
    tx.workflow.findMany({ where: changed, orderBy: order, take: limit }),
    tx.comment.findMany({ where: since ? { createdAt: { gt: since } } : {}, orderBy: { createdAt: 'desc' }, take: limit }),
  ]);
  const action = (r: { createdAt: Date; updatedAt: Date }): 'created' | 'updated' => (r.createdAt.getTime() === r.updatedAt.getTime() ? 'created' : 'updated');
  const items: ActivityItem[] = [
    ...projects.map((r) => ({ type: 'project' as const, id: r.id, title: r.name, action: action(r), at: iso(r.updatedAt), target: null })),
    ...tasks.map((r) => ({
      type: 'task' as const,
      id: r.id,
      title: r.title,
      action: r.completedAt && r.completedAt.getTime() >= r.updatedAt.getTime() - 1000 ? ('completed' as const) : action(r),
      at: iso(r.updatedAt),
      target: null,
    })),
    ...notes.map((r) => ({ type: 'note' as const, id: r.id, title: r.title, action: action(r), at: iso(r.updatedAt), target: null })),
    ...entries.map((r) => ({ type: 'calendar_entry' as const, id: r.id, title: r.title, action: action(r), at: iso(r.updatedAt), target: null })),
    ...workflows.map((r) => ({ type: 'workflow' as const, id: r.id, title: r.name, action: action(r), at: iso(r.updatedAt), target: null })),
    ...comments.map((r) => ({
      type: 'comment' as const,
      id: r.id,
      title: r.body.length > 80 ? `${r.body.slice(0, 77)}...` : r.body,
      action: 'commented' as const,
      at: iso(r.createdAt),
      target: { type: r.targetType, id: (r.taskId ?? r.projectId ?? r.noteId)! },
    })),
  ];
  return items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, limit);
}
