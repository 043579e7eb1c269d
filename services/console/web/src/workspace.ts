/**
 * The workspace's data through the public API (/api/v1), the same routes the MCP tools use: runs
 * (served by the workflow engine), projects, tasks, calendar entries and notes (workspace-api).
 */
import type {
  CalendarEntry,
  Note,
  PageOf,
  ProjectWithCounts,
  RunsHealth,
  RunsSummary,
  RunStatus,
  Task,
  TaskStatus,
  Workflow,
  WorkflowRun,
} from '@flowdesk/contracts';
import { api } from './api.ts';

// The API's shapes are the contracts' (libs/contracts), imported as types only.
export type { CalendarEntry, Note, RunsHealth, RunsSummary, RunStatus, RunStep, Task, TaskPriority, TaskStatus, WorkflowRun } from '@flowdesk/contracts';
/** What the Runs list filters by (every status a run can have). */
export const RUN_STATUSES: RunStatus[] = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'skipped', 'cancelled'];
/** The statuses the pipeline health counts (RunsHealth.byStatus). */
export type HealthRunStatus = keyof RunsHealth['byStatus'];
export const HEALTH_RUN_STATUSES: HealthRunStatus[] = ['queued', 'running', 'succeeded', 'failed', 'skipped'];

/** A project as the lists show it: with its task counts where the listing adds them. */
export type Project = Omit<ProjectWithCounts, 'taskCounts'> & Partial<Pick<ProjectWithCounts, 'taskCounts'>>;
/** What the runs panel and the overview need of a workflow. */
export type WorkflowItem = Pick<Workflow, 'id' | 'name' | 'triggerType' | 'active'>;

/** A query string; arrays repeat their key (status=todo&status=done). */
function qs(query: Record<string, string | number | boolean | string[] | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => p.append(k, x));
    else p.set(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Every page of a listing (up to `max` items): the views show a user's whole list. */
async function all<T>(path: string, query: Record<string, string | number | boolean | string[] | undefined> = {}, max = 500): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.request<PageOf<T>>('GET', `${path}${qs({ ...query, limit: 100, cursor })}`);
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && items.length < max);
  return items;
}

const id = encodeURIComponent;

export const workspace = {
  listRuns: (opts: { workflowId?: string; status?: RunStatus; limit?: number }) =>
    api
      .request<PageOf<WorkflowRun>>(
        'GET',
        `${opts.workflowId ? `/workflows/${id(opts.workflowId)}/runs` : '/workflow-runs'}${qs({ status: opts.status, limit: opts.limit ?? 50 })}`,
      )
      .then((p) => p.items),
  /**
   * The newest `count` runs (pages of up to 100, the API's maximum), and whether older ones exist:
   * the runs panel's list, grown by "Show older runs".
   */
  listRunsUpTo: async (opts: { workflowId?: string; status?: RunStatus; count: number }): Promise<{ items: WorkflowRun[]; more: boolean }> => {
    const items: WorkflowRun[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.request<PageOf<WorkflowRun>>(
        'GET',
        `${opts.workflowId ? `/workflows/${id(opts.workflowId)}/runs` : '/workflow-runs'}${qs({ status: opts.status, limit: Math.min(100, opts.count - items.length), cursor })}`,
      );
      items.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && items.length < opts.count);
    return { items, more: cursor !== undefined };
  },
  getRun: (runId: string) => api.request<WorkflowRun>('GET', `/workflow-runs/${id(runId)}`),
  rerun: (runId: string) => api.request<WorkflowRun>('POST', `/workflow-runs/${id(runId)}/rerun`),
  cancelRun: (runId: string) => api.request<WorkflowRun>('POST', `/workflow-runs/${id(runId)}/cancel`),
  /** Approve or Reject a run waiting for a resume (a Wait node in mode resume). */
  resumeRun: (runId: string, action: 'approve' | 'reject', body?: Record<string, unknown>) =>
    api.request<{ runId: string; resumedBy: string }>('POST', `/workflow-runs/${id(runId)}/resume`, { action, ...(body ? { body } : {}) }),
  /** Resume now: a run waiting for a timer (a Wait's time, a retry's delay) goes on at once (`canResumeNow`). */
  resumeNow: (runId: string) => api.request<{ runId: string; resumedBy: string }>('POST', `/workflow-runs/${id(runId)}/resume-now`),
  runsSummary: () => api.request<RunsSummary>('GET', '/workflow-runs/summary'),
  runsHealth: () => api.request<RunsHealth>('GET', '/workflow-runs/health'),
  listWorkflows: () => all<WorkflowItem>('/workflows'),
  getWorkflow: (workflowId: string) => api.request<WorkflowItem>('GET', `/workflows/${id(workflowId)}`),

  listProjects: (status?: 'active' | 'archived') => all<Project>('/projects', { status }),
  createProject: (input: Partial<Project>) => api.request<Project>('POST', '/projects', input),
  updateProject: (projectId: string, input: Partial<Project>) => api.request<Project>('PATCH', `/projects/${id(projectId)}`, input),
  deleteProject: (projectId: string) => api.request<void>('DELETE', `/projects/${id(projectId)}`),

  listTasks: (query: { status?: TaskStatus[]; projectId?: string; q?: string; sort?: string; dueBefore?: string; dueAfter?: string } = {}) =>
    all<Task>('/tasks', query),
  createTask: (input: Partial<Task>) => api.request<Task>('POST', '/tasks', input),
  updateTask: (taskId: string, input: Partial<Task>) => api.request<Task>('PATCH', `/tasks/${id(taskId)}`, input),
  deleteTask: (taskId: string) => api.request<void>('DELETE', `/tasks/${id(taskId)}`),

  listEntries: (from: string, to: string) => all<CalendarEntry>('/calendar-entries', { from, to }),
  createEntry: (input: Partial<CalendarEntry>) => api.request<CalendarEntry>('POST', '/calendar-entries', input),
  updateEntry: (entryId: string, input: Partial<CalendarEntry>) => api.request<CalendarEntry>('PATCH', `/calendar-entries/${id(entryId)}`, input),
  deleteEntry: (entryId: string) => api.request<void>('DELETE', `/calendar-entries/${id(entryId)}`),

  listNotes: () => all<Note>('/notes'),
  createNote: (input: Partial<Note>) => api.request<Note>('POST', '/notes', input),
  updateNote: (noteId: string, input: Partial<Note>) => api.request<Note>('PATCH', `/notes/${id(noteId)}`, input),
  deleteNote: (noteId: string) => api.request<void>('DELETE', `/notes/${id(noteId)}`),
};

/**
 * Calls `onRun` whenever one of the user's runs (of `workflowId`, or any) is queued, starts or
 * finishes: the engine's Server-Sent Events stream through the edge. EventSource reconnects by itself
 * (the server's `retry`).
 *
 * `onRun` is also called on every open, the first included: the caller read its data before the
 * stream was connected, and a run that finished in between sent its event to no one (under load that
 * gap is long enough to leave a run page on "queued" for good). The server listens before it sends
 * its headers, so after an open nothing is missed.
 */
export function subscribeRuns(onRun: () => void, workflowId?: string): () => void {
  if (typeof EventSource === 'undefined') return () => {};
  const source = new EventSource(`/api/v1/workflow-runs/stream${qs({ workflowId })}`);
  source.addEventListener('run', () => onRun());
  source.onopen = () => onRun();
  return () => source.close();
}
