import type { Overview, SearchHit, SearchKind, SearchQuery, TagCount } from '@flowdesk/contracts';
import type { Tx } from './tx.ts';
import { addDays, startOfUtcDay } from './dates.ts';
import { OPEN_STATUSES } from './tasks.ts';
import { containsText as like } from './text-search.ts';

/** ~120 characters around the first match, so a hit explains itself. */
export function snippet(text: string, q: string, width = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const at = flat.toLowerCase().indexOf(q.toLowerCase());
  if (at < 0 || flat.length <= width) return flat.slice(0, width);
  const start = Math.max(0, Math.min(at - Math.floor((width - q.length) / 2), flat.length - width));
  return `${start > 0 ? '…' : ''}${flat.slice(start, start + width)}${start + width < flat.length ? '…' : ''}`;
}

interface Searchable {
  title: string;
  /** Text fields besides the title, in the order the snippet prefers them. */
  body: string[];
  find(tx: Tx, where: object, take: number): Promise<Array<{ id: string; updatedAt: Date } & Record<string, unknown>>>;
}

// What each kind is searched in. `find` is one Prisma call per kind; row-level security scopes it.
const SEARCHABLE: Record<SearchKind, Searchable> = {
  project: { title: 'name', body: ['description'], find: (tx, where, take) => tx.project.findMany({ where, take, orderBy: { updatedAt: 'desc' } }) },
  task: { title: 'title', body: ['notes'], find: (tx, where, take) => tx.task.findMany({ where, take, orderBy: { updatedAt: 'desc' } }) },
  note: { title: 'title', body: ['content'], find: (tx, where, take) => tx.note.findMany({ where, take, orderBy: { updatedAt: 'desc' } }) },
  calendar_entry: {
    title: 'title',
    body: ['description', 'location'],
    find: (tx, where, take) => tx.calendarEntry.findMany({ where, take, orderBy: { updatedAt: 'desc' } }),
  },
  workflow: { title: 'name', body: ['description'], find: (tx, where, take) => tx.workflow.findMany({ where, take, orderBy: { updatedAt: 'desc' } }) },
};

/**
 * Title matches first, then matches in the body, each group newest first. Two passes so that a
 * title match is never crowded out of a short result by more recently edited body matches.
 */
export async function searchWorkspace(tx: Tx, query: SearchQuery): Promise<SearchHit[]> {
  const { q, limit = 20 } = query;
  const kinds = (query.types?.length ? query.types : (Object.keys(SEARCHABLE) as SearchKind[])).filter((k, i, a) => a.indexOf(k) === i);
  // The snippet shows the match: from the body field that holds it, else from the title.
  const toHit = (type: SearchKind, s: Searchable, r: Record<string, unknown> & { id: string; updatedAt: Date }): SearchHit => {
    const text = (f: string) => (typeof r[f] === 'string' ? r[f] : '');
    const matchingBody = s.body.find((f) => text(f).toLowerCase().includes(q.toLowerCase()));
    return { type, id: r.id, title: text(s.title), snippet: snippet(text(matchingBody ?? s.title), q), updatedAt: r.updatedAt.toISOString() };
  };
  const newestFirst = (a: SearchHit, b: SearchHit) => b.updatedAt.localeCompare(a.updatedAt);

  const titleHits: SearchHit[] = [];
  for (const k of kinds) {
    const s = SEARCHABLE[k];
    for (const r of await s.find(tx, { [s.title]: like(q) }, limit)) titleHits.push(toHit(k, s, r));
  }
  titleHits.sort(newestFirst);
  if (titleHits.length >= limit) return titleHits.slice(0, limit);

  const bodyHits: SearchHit[] = [];
  const room = limit - titleHits.length;
  for (const k of kinds) {
    const s = SEARCHABLE[k];
    const where = { AND: [{ NOT: { [s.title]: like(q) } }, { OR: s.body.map((f) => ({ [f]: like(q) })) }] };
    for (const r of await s.find(tx, where, room)) bodyHits.push(toHit(k, s, r));
  }
  return [...titleHits, ...bodyHits.sort(newestFirst).slice(0, room)];
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
  const [projects, openTasks, doneTasks, overdue, dueToday, dueThisWeek, notes, upcoming, workflows, activeWorkflows] = await Promise.all([
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
  ]);
  const projectCount = (s: string) => projects.find((p) => p.status === s)?._count._all ?? 0;
  return {
    projects: { active: projectCount('active'), archived: projectCount('archived') },
    tasks: { open: openTasks, done: doneTasks, overdue, dueToday, dueThisWeek },
    notes,
    calendar: { upcoming7Days: upcoming },
    // Runs are the workflow engine's data: its GET /api/v1/workflow-runs/summary gives these two, and
    // the MCP gateway's overview tool fills them in from there (docs/workflow-engine.md).
    workflows: { total: workflows, active: activeWorkflows, runsLast24h: 0, failedLast24h: 0 },
    asOf: now.toISOString(),
  };
}
