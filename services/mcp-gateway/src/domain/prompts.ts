import type { CalendarEntry, PageOf, ProjectWithCounts, Task } from '@flowdesk/contracts';
import type { WorkspaceApi } from './ports.ts';
import { workspaceOverview } from './tool-handlers.ts';

export class PromptArgumentError extends Error {}

export interface RenderedPrompt {
  [key: string]: unknown;
  description: string;
  messages: { role: 'user'; content: { type: 'text'; text: string } }[];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const day = (d: Date) => d.toISOString().slice(0, 10);
const addDays = (d: string, n: number) => day(new Date(Date.parse(`${d}T00:00:00Z`) + n * 86_400_000));
const OPEN = ['todo', 'in_progress'];

const taskLine = (t: Task) =>
  `- [${t.status === 'done' ? 'x' : ' '}] ${t.title}${t.dueDate ? ` (due ${t.dueDate})` : ''}${t.priority !== 'none' ? ` [${t.priority}]` : ''} — id ${t.id}`;
const eventLine = (e: CalendarEntry) => `- ${e.startsAt} → ${e.endsAt}: ${e.title}${e.location ? ` @ ${e.location}` : ''}`;
const list = <T>(items: T[], line: (x: T) => string) => (items.length ? items.map(line).join('\n') : '- (none)');

function dateArg(args: Record<string, string>, name: string, fallback?: string): string {
  const v = args[name] ?? fallback;
  if (v === undefined) throw new PromptArgumentError(`Missing required argument: ${name}`);
  if (!DATE.test(v) || Number.isNaN(Date.parse(v))) throw new PromptArgumentError(`Argument ${name} must be a date, YYYY-MM-DD`);
  return v;
}

const message = (description: string, text: string): RenderedPrompt => ({ description, messages: [{ role: 'user', content: { type: 'text', text } }] });

/** The four prompts of the catalogue, rendered from the caller's live data. */
export const PROMPT_RENDERERS: Record<string, (args: Record<string, string>, api: WorkspaceApi, now: Date) => Promise<RenderedPrompt>> = {
  async plan_my_week(args, api, now) {
    const from = day(now);
    const to = addDays(from, 6);
    const [overview, due, overdue, events] = await Promise.all([
      workspaceOverview(api),
      api.get<PageOf<Task>>('/tasks', { status: OPEN, dueAfter: from, dueBefore: to, sort: 'due_asc', limit: 100 }),
      api.get<PageOf<Task>>('/tasks', { status: OPEN, overdue: true, sort: 'due_asc', limit: 50 }),
      api.get<PageOf<CalendarEntry>>('/calendar-entries', { from: `${from}T00:00:00.000Z`, to: `${addDays(to, 1)}T00:00:00.000Z`, limit: 100 }),
    ]);
    const focus = args.focus ? `\nMy focus this week: ${args.focus}\n` : '';
    return message(
      `Week plan ${from} to ${to}`,
      `Help me plan my week from ${from} to ${to}.${focus}
I have ${overview.tasks.open} open tasks, ${overview.tasks.overdue} overdue.

Overdue:
${list(overdue.items, taskLine)}

Due this week:
${list(due.items, taskLine)}

Calendar:
${list(events.items, eventLine)}

Propose a day-by-day plan that fits the tasks around the calendar, flags what will not fit, and suggests what to reschedule or drop. Use the Flowdesk tools (update_task, bulk_update_tasks, create_calendar_entry) only after I agree.`,
    );
  },

  async daily_standup(args, api, now) {
    const date = dateArg(args, 'date', day(now));
    const yesterday = addDays(date, -1);
    const [activity, dueToday, overdue] = await Promise.all([
      api.get<{ items: { type: string; action: string; title: string; at: string }[] }>('/activity', { since: `${yesterday}T00:00:00.000Z`, limit: 100 }),
      api.get<PageOf<Task>>('/tasks', { status: OPEN, dueAfter: date, dueBefore: date, limit: 100 }),
      api.get<PageOf<Task>>('/tasks', { status: OPEN, dueBefore: yesterday, sort: 'due_asc', limit: 50 }),
    ]);
    const done = activity.items.filter((i) => i.at < `${date}T00:00:00.000Z` || i.action === 'completed');
    return message(
      `Standup for ${date}`,
      `Write my daily standup for ${date} (yesterday / today / blockers).

Since ${yesterday}:
${list(done, (i) => `- ${i.action} ${i.type}: ${i.title}`)}

Due today:
${list(dueToday.items, taskLine)}

Overdue (possible blockers):
${list(overdue.items, taskLine)}

Keep it to three short sections, in the first person.`,
    );
  },

  async sprint_retrospective(args, api, now) {
    const start = dateArg(args, 'sprintStart');
    const end = dateArg(args, 'sprintEnd', day(now));
    if (end < start) throw new PromptArgumentError('sprintEnd must not be before sprintStart');
    if (args.projectId !== undefined && !UUID.test(args.projectId)) throw new PromptArgumentError('Argument projectId must be a project id (UUID)');
    const scope = args.projectId ? { projectId: args.projectId } : {};
    const [project, done, open] = await Promise.all([
      args.projectId ? api.get<ProjectWithCounts>(`/projects/${args.projectId}`) : Promise.resolve(undefined),
      api.get<PageOf<Task>>('/tasks', { ...scope, status: ['done'], sort: 'updated_desc', limit: 100 }),
      api.get<PageOf<Task>>('/tasks', { ...scope, status: OPEN, dueBefore: end, sort: 'due_asc', limit: 100 }),
    ]);
    const inSprint = done.items.filter((t) => t.completedAt && t.completedAt.slice(0, 10) >= start && t.completedAt.slice(0, 10) <= end);
    return message(
      `Retrospective ${start} to ${end}${project ? ` for ${project.name}` : ''}`,
      `Run a sprint retrospective for ${start} to ${end}${project ? ` of the project "${project.name}"` : ''}.

Completed in the sprint (${inSprint.length}):
${list(inSprint, taskLine)}

Planned by the end of the sprint but still open (${open.items.length}):
${list(open.items, taskLine)}

Structure it as: what went well, what did not, and three concrete changes for the next sprint. Ask me before creating follow-up tasks.`,
    );
  },

  async project_kickoff(args, api) {
    const id = args.projectId;
    if (id === undefined) throw new PromptArgumentError('Missing required argument: projectId');
    if (!UUID.test(id)) throw new PromptArgumentError('Argument projectId must be a project id (UUID)');
    const [project, tasks, notes] = await Promise.all([
      api.get<ProjectWithCounts>(`/projects/${id}`),
      api.get<PageOf<Task>>('/tasks', { projectId: id, sort: 'due_asc', limit: 100 }),
      api.get<PageOf<{ title: string }>>('/notes', { projectId: id, limit: 20 }),
    ]);
    return message(
      `Kickoff for ${project.name}`,
      `Let's kick off the project "${project.name}" (id ${project.id}).
Description: ${project.description || '(none yet)'}

Tasks so far (${project.taskCounts.total}):
${list(tasks.items, taskLine)}

Notes: ${notes.items.map((n) => n.title).join(', ') || '(none)'}

Draft: the goal in one sentence, what is in and out of scope, three milestones with dates, and the first five tasks. Then offer to create the missing tasks with create_task in this project.`,
    );
  },
};
