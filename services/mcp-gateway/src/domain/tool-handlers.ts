import {
  TOOL,
  ToolArgumentError,
  workflowArgsToApi,
  type RunsSummary,
  type Overview,
  type CalendarEntry,
  type Note,
  type PageOf,
  type Task,
  type Workflow,
  type WorkflowRun,
} from '@flowdesk/contracts';
import type { WorkspaceApi } from './ports.ts';
import { defineTool, toolRegistry } from './define-tool.ts';
import { unstorableText } from './arguments.ts';

/** Everything but `key`: the id goes in the path, the rest is the PATCH body. */
function without<A extends object, K extends keyof A>(args: A, key: K): Omit<A, K> {
  const { [key]: _id, ...rest } = args;
  return rest;
}
const deleted = async (api: WorkspaceApi, path: string, id: string) => {
  await api.delete(path);
  return { deleted: true as const, id };
};
/** The API's body of create/update_workflow; text no store can hold inside a node's params JSON is refused by field, as in any argument. */
function workflowBody(args: Record<string, unknown>): Record<string, unknown> {
  const body = workflowArgsToApi(args);
  const unstorable = unstorableText(body);
  if (unstorable) throw new ToolArgumentError('', unstorable);
  return body;
}
/** import_workflow's file: its JSON text as the import's body (a Flowdesk file or an n8n one; workspace-api checks the rest). */
function importFile(text: string): object {
  let file: unknown;
  try {
    file = JSON.parse(text);
  } catch {
    file = undefined;
  }
  if (file === null || typeof file !== 'object' || Array.isArray(file))
    throw new ToolArgumentError('file', 'must be the JSON text of a workflow file (a Flowdesk export or an n8n download)');
  const unstorable = unstorableText(file);
  if (unstorable) throw new ToolArgumentError('', unstorable);
  return file;
}
const day = (d: Date) => d.toISOString().slice(0, 10);
const addDays = (d: string, n: number) => day(new Date(Date.parse(`${d}T00:00:00Z`) + n * 86_400_000));
const OPEN = ['todo', 'in_progress'];

/** Every open task due in [from, to] and every calendar entry overlapping that span (UTC days). */
async function span(api: WorkspaceApi, from: string, to: string) {
  const [tasks, events] = await Promise.all([
    api.get<PageOf<Task>>('/tasks', { status: OPEN, dueAfter: from, dueBefore: to, sort: 'due_asc', limit: 100 }),
    api.get<PageOf<CalendarEntry>>('/calendar-entries', { from: `${from}T00:00:00.000Z`, to: `${addDays(to, 1)}T00:00:00.000Z`, limit: 100 }),
  ]);
  return { tasksDue: tasks.items, events: events.items };
}

/**
 * The workspace overview (the tool, the flowdesk://overview resource, the prompts). Runs are the
 * engine's data: the last 24 h's runs and failures come from its summary, the rest from workspace-api.
 */
export async function workspaceOverview(api: WorkspaceApi): Promise<Overview> {
  const [overview, runs] = await Promise.all([api.get<Overview>('/overview'), api.get<RunsSummary>('/workflow-runs/summary')]);
  return { ...overview, workflows: { ...overview.workflows, runsLast24h: runs.runs, failedLast24h: runs.failed } };
}

/**
 * How each catalogue tool becomes workspace-api calls, one defineTool per tool (its arguments typed
 * from its input schema). Arguments arrive validated against that schema; workspace-api validates
 * again and owns every rule about the data.
 */
export const TOOL_HANDLERS = toolRegistry([
  // projects
  defineTool(TOOL.list_projects, (a, api) => api.get('/projects', a)),
  defineTool(TOOL.get_project, (a, api) => api.get(`/projects/${a.projectId}`)),
  defineTool(TOOL.create_project, (a, api) => api.post('/projects', a)),
  defineTool(TOOL.update_project, (a, api) => api.patch(`/projects/${a.projectId}`, without(a, 'projectId'))),
  defineTool(TOOL.archive_project, (a, api) => api.patch(`/projects/${a.projectId}`, { status: 'archived' })),
  defineTool(TOOL.delete_project, (a, api) => deleted(api, `/projects/${a.projectId}`, a.projectId)),
  // tasks
  defineTool(TOOL.list_tasks, (a, api) => api.get('/tasks', a)),
  defineTool(TOOL.get_task, (a, api) => api.get(`/tasks/${a.taskId}`)),
  defineTool(TOOL.create_task, (a, api) => api.post('/tasks', a)),
  defineTool(TOOL.update_task, (a, api) => api.patch(`/tasks/${a.taskId}`, without(a, 'taskId'))),
  defineTool(TOOL.complete_task, (a, api) => api.patch(`/tasks/${a.taskId}`, { status: 'done' })),
  defineTool(TOOL.move_task, (a, api) => api.patch(`/tasks/${a.taskId}`, { projectId: a.projectId })),
  defineTool(TOOL.delete_task, (a, api) => deleted(api, `/tasks/${a.taskId}`, a.taskId)),
  defineTool(TOOL.bulk_update_tasks, (a, api) => api.post('/tasks/bulk-update', a)),
  // calendar
  defineTool(TOOL.list_calendar_entries, (a, api) => api.get('/calendar-entries', a)),
  defineTool(TOOL.get_calendar_entry, (a, api) => api.get(`/calendar-entries/${a.entryId}`)),
  defineTool(TOOL.create_calendar_entry, (a, api) => api.post('/calendar-entries', a)),
  defineTool(TOOL.update_calendar_entry, (a, api) => api.patch(`/calendar-entries/${a.entryId}`, without(a, 'entryId'))),
  defineTool(TOOL.delete_calendar_entry, (a, api) => deleted(api, `/calendar-entries/${a.entryId}`, a.entryId)),
  // notes
  defineTool(TOOL.list_notes, (a, api) => api.get('/notes', a)),
  defineTool(TOOL.get_note, (a, api) => api.get(`/notes/${a.noteId}`)),
  defineTool(TOOL.create_note, (a, api) => api.post('/notes', a)),
  defineTool(TOOL.update_note, (a, api) => api.patch(`/notes/${a.noteId}`, without(a, 'noteId'))),
  defineTool(TOOL.delete_note, (a, api) => deleted(api, `/notes/${a.noteId}`, a.noteId)),
  // workflows
  defineTool(TOOL.list_workflows, (a, api) => api.get('/workflows', a)),
  // asFile: the export file (docs/workflow-export.md), which import_workflow takes back.
  defineTool(TOOL.get_workflow, (a, api) => api.get(a.asFile === true ? `/workflows/${a.workflowId}/export` : `/workflows/${a.workflowId}`)),
  defineTool(TOOL.get_workflow_versions, (a, api) =>
    a.number === undefined
      ? api.get(`/workflows/${a.workflowId}/versions`, { limit: a.limit, cursor: a.cursor })
      : api.get(`/workflows/${a.workflowId}/versions/${a.number}`),
  ),
  // The tools take each node's params as JSON text (strict schemas); the API takes the object.
  defineTool(TOOL.create_workflow, (a, api) => api.post('/workflows', workflowBody(a))),
  defineTool(TOOL.update_workflow, (a, api) => api.patch(`/workflows/${a.workflowId}`, workflowBody(without(a, 'workflowId')))),
  // Run now goes through the existing tool (no new tool for it, docs/triggers.md): a manual
  // run on the engine's runs API, POST /workflows/:id/runs.
  defineTool(TOOL.set_workflow_active, async (a, api) => {
    const run = a.runNow;
    if (a.active === undefined && !run) throw new ToolArgumentError('active', 'give active, runNow, or both');
    let payload: unknown = {};
    if (run?.payload !== undefined) {
      try {
        payload = JSON.parse(run.payload);
      } catch {
        throw new ToolArgumentError('runNow.payload', 'is not valid JSON');
      }
      if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw new ToolArgumentError('runNow.payload', 'must be a JSON object');
    }
    const workflow =
      a.active === undefined
        ? await api.get<Workflow>(`/workflows/${a.workflowId}`)
        : await api.patch<Workflow>(`/workflows/${a.workflowId}`, { active: a.active });
    if (!run) return workflow;
    const startedRun = await api.post<WorkflowRun>(`/workflows/${a.workflowId}/runs`, { payload });
    return { ...workflow, startedRun };
  }),
  defineTool(TOOL.import_workflow, (a, api) => api.post('/workflows/import', importFile(a.file))),
  defineTool(TOOL.delete_workflow, (a, api) => deleted(api, `/workflows/${a.workflowId}`, a.workflowId)),
  // workflow runs
  defineTool(TOOL.list_workflow_runs, (a, api) => {
    const query = without(a, 'workflowId');
    return a.workflowId ? api.get(`/workflows/${a.workflowId}/runs`, query) : api.get('/workflow-runs', query);
  }),
  defineTool(TOOL.get_workflow_run, (a, api) => api.get(`/workflow-runs/${a.runId}`)),
  defineTool(TOOL.get_latest_workflow_run, async (a, api) => {
    const page = await api.get<PageOf<WorkflowRun>>(`/workflows/${a.workflowId}/runs`, { limit: 1 });
    return { run: page.items[0] ?? null };
  }),
  // webhook triggers
  defineTool(TOOL.get_webhook_trigger, async (a, api) => {
    const wf = await api.get<Workflow>(`/workflows/${a.workflowId}`);
    return { workflowId: wf.id, triggerType: wf.triggerType, active: wf.active, webhook: wf.webhook };
  }),
  defineTool(TOOL.reveal_webhook_secret, (a, api) => api.get(`/workflows/${a.workflowId}/webhook-secret`)),
  defineTool(TOOL.regenerate_webhook_secret, (a, api) => api.post(`/workflows/${a.workflowId}/webhook-secret/regenerate`)),
  // search
  defineTool(TOOL.search_workspace, (a, api) => api.get('/search', a)),
  defineTool(TOOL.search_notes, (a, api) => api.get('/notes', a)),
  // tags
  defineTool(TOOL.list_tags, (_a, api) => api.get('/tags')),
  defineTool(TOOL.list_tagged_items, async (a, api) => {
    const [tasks, notes] = await Promise.all([
      api.get<PageOf<Task>>('/tasks', { tag: a.tag, limit: a.limit }),
      api.get<PageOf<Note>>('/notes', { tag: a.tag, limit: a.limit }),
    ]);
    return { tag: a.tag, tasks: tasks.items, notes: notes.items };
  }),
  // Read, then write the whole list: workspace-api replaces tags as a whole.
  defineTool(TOOL.tag_task, async (a, api) => {
    const task = await api.get<Task>(`/tasks/${a.taskId}`);
    const tags = [...new Set([...task.tags, ...a.tags])];
    return tags.length === task.tags.length ? task : api.patch(`/tasks/${a.taskId}`, { tags });
  }),
  defineTool(TOOL.untag_task, async (a, api) => {
    const task = await api.get<Task>(`/tasks/${a.taskId}`);
    const drop = new Set(a.tags);
    const tags = task.tags.filter((t) => !drop.has(t));
    return tags.length === task.tags.length ? task : api.patch(`/tasks/${a.taskId}`, { tags });
  }),
  // comments and activity
  defineTool(TOOL.list_comments, (a, api) => api.get('/comments', a)),
  defineTool(TOOL.add_comment, (a, api) => api.post('/comments', a)),
  defineTool(TOOL.delete_comment, (a, api) => deleted(api, `/comments/${a.commentId}`, a.commentId)),
  defineTool(TOOL.list_recent_activity, (a, api) => api.get('/activity', a)),
  // workspace overview and stats
  defineTool(TOOL.get_workspace_overview, (_a, api) => workspaceOverview(api)),
  defineTool(TOOL.get_agenda, async (a, api, now) => {
    const date = a.date ?? day(now);
    const [dueThatDay, overdue] = await Promise.all([
      span(api, date, date),
      api.get<PageOf<Task>>('/tasks', { status: OPEN, dueBefore: addDays(date, -1), sort: 'due_asc', limit: 100 }),
    ]);
    return { date, overdue: overdue.items, ...dueThatDay };
  }),
  defineTool(TOOL.get_upcoming, async (a, api, now) => {
    const from = day(now);
    const to = addDays(from, (a.days ?? 7) - 1);
    return { from, to, ...(await span(api, from, to)) };
  }),
  // profile and preferences
  defineTool(TOOL.get_profile, (_a, api) => api.get('/profile')),
  defineTool(TOOL.update_profile, (a, api) => api.patch('/profile', a)),
  defineTool(TOOL.update_preferences, (a, api) => api.patch('/profile', a)),
]);
