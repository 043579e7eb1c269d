import type { Overview, SearchHit, SearchKind, SearchQuery, TagCount } from '@flowdesk/contracts';
import type { Tx } from '../adapters/db.ts';
import { addDays, startOfUtcDay } from './dates.ts';
import { OPEN_STATUSES } from './tasks.ts';

const like = (q: string) => ({ contains: q, mode: 'insensitive' as const });

/** ~120 characters around the first match, so a hit explains itself. */
export function snippet(text: string, q: string, width = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const at = flat.toLowerCase().indexOf(q.toLowerCase());
  if (at < 0 || flat.length <= width) return flat.slice(0, width);
  const start = Math.max(0, Math.min(at - Math.floor((width - q.length) / 2), flat.length - width));
  return `${start > 0 ? '…' : ''}${flat.slice(start, start + width)}${start + width < flat.length ? '…' : ''}`;
}

export async function searchWorkspace(tx: Tx, query: SearchQuery): Promise<SearchHit[]> {
  const { q, limit = 20 } = query;
  const wanted = new Set<SearchKind>(query.types?.length ? query.types : ['project', 'task', 'note', 'calendar_entry', 'workflow']);
  const take = limit;
  const hits: SearchHit[] = [];
  const hit = (type: SearchKind, id: string, title: string, body: string, updatedAt: Date) =>
    hits.push({ type, id, title, snippet: snippet(title.toLowerCase().includes(q.toLowerCase()) ? body || title : body, q), updatedAt: updatedAt.toISOString() });

  if (wanted.has('project'))
    for (const r of await tx.project.findMany({ where: { OR: [{ name: like(q) }, { description: like(q) }] }, orderBy: { updatedAt: 'desc' }, take }))
      hit('project', r.id, r.name, r.description, r.updatedAt);
  if (wanted.has('task'))
    for (const r of await tx.task.findMany({ where: { OR: [{ title: like(q) }, { notes: like(q) }] }, orderBy: { updatedAt: 'desc' }, take }))
      hit('task', r.id, r.title, r.notes, r.updatedAt);
  if (wanted.has('note'))
    for (const r of await tx.note.findMany({ where: { OR: [{ title: like(q) }, { content: like(q) }] }, orderBy: { updatedAt: 'desc' }, take }))
      hit('note', r.id, r.title, r.content, r.updatedAt);
  if (wanted.has('calendar_entry'))
    for (const r of await tx.calendarEntry.findMany({ where: { OR: [{ title: like(q) }, { description: like(q) }, { location: like(q) }] }, orderBy: { updatedAt: 'desc' }, take }))
      hit('calendar_entry', r.id, r.title, r.description, r.updatedAt);
  if (wanted.has('workflow'))
    for (const r of await tx.workflow.findMany({ where: { OR: [{ name: like(q) }, { description: like(q) }] }, orderBy: { updatedAt: 'desc' }, take }))
      hit('workflow', r.id, r.name, r.description, r.updatedAt);

  // Title matches first, then the most recently changed.
  const inTitle = (h: SearchHit) => (h.title.toLowerCase().includes(q.toLowerCase()) ? 0 : 1);
  return hits.sort((a, b) => inTitle(a) - inTitle(b) || b.updatedAt.localeCompare(a.updatedAt)).slice(0, limit);
}

export async function tagCounts(tx: Tx): Promise<TagCount[]> {
  // Raw SQL still runs inside the user's transaction, so row-level security filters it like any query.
  const rows = await tx.$queryRaw<{ tag: string; tasks: bigint; notes: bigint }[]>`
    SELECT tag,
           count(*) FILTER (WHERE kind = 'task') AS tasks,
           count(*) FILTER (WHERE kind = 'note') AS notes
      FROM (SELECT unnest(tags) AS tag, 'task' AS kind FROM "workspace"."task"
            UNION ALL
            SELECT unnest(tags) AS tag, 'note' AS kind FROM "workspace"."note") t
     GROUP BY tag
     ORDER BY count(*) DESC, tag ASC`;
  return rows.map((r) => ({ tag: r.tag, tasks: Number(r.tasks), notes: Number(r.notes) }));
}

export async function overview(tx: Tx, now: Date): Promise<Overview> {
  const today = startOfUtcDay(now);
  const open = { status: { in: OPEN_STATUSES } };
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const [projects, openTasks, doneTasks, overdue, dueToday, dueThisWeek, notes, upcoming, workflows, activeWorkflows, runs, failed] =
    await Promise.all([
      tx.project.groupBy({ by: ['status'], _count: { _all: true } }),
      tx.task.count({ where: open }),
      tx.task.count({ where: { status: 'done' } }),
      tx.task.count({ where: { ...open, dueDate: { lt: today } } }),
      tx.task.count({ where: { ...open, dueDate: today } }),
      tx.task.count({ where: { ...open, dueDate: { gte: today, lt: addDays(today, 7) } } }),
      tx.note.count(),
      tx.calendarEntry.count({ where: { endsAt: { gt: now }, startsAt: { lt: addDays(now, 7) } } }),
      tx.workflow.count(),
      tx.workflow.count({ where: { active: true } }),
      tx.workflowRun.count({ where: { createdAt: { gte: dayAgo } } }),
      tx.workflowRun.count({ where: { createdAt: { gte: dayAgo }, status: 'failed' } }),
    ]);
  const projectCount = (s: string) => projects.find((p) => p.status === s)?._count._all ?? 0;
  return {
    projects: { active: projectCount('active'), archived: projectCount('archived') },
    tasks: { open: openTasks, done: doneTasks, overdue, dueToday, dueThisWeek },
    notes,
    calendar: { upcoming7Days: upcoming },
    workflows: { total: workflows, active: activeWorkflows, runsLast24h: runs, failedLast24h: failed },
    asOf: now.toISOString(),
  };
}
