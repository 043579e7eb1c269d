import Type, { type TSchema } from 'typebox';
import { DateOnly, Page, PageQuery, SearchText, Tags, Uuid } from '../common.ts';
import type { Access } from '../scopes.ts';
import { CreateProject, ListProjectsQuery, Project, ProjectWithCounts, UpdateProject } from '../entities/projects.ts';
import { BulkResult, BulkUpdateTasks, CreateTask, ListTasksQuery, Task, UpdateTask } from '../entities/tasks.ts';
import { CalendarEntry, CreateCalendarEntry, ListCalendarQuery, UpdateCalendarEntry } from '../entities/calendar.ts';
import { CreateNote, ListNotesQuery, Note, UpdateNote } from '../entities/notes.ts';
import { ListWorkflowsQuery, TriggerType, WebhookEndpoint, WebhookSecret, Workflow, WorkflowVersion, WorkflowVersionSummary } from '../entities/workflows.ts';
import { RunStatus, WorkflowRun } from '../entities/workflow-runs.ts';
import { WORKFLOW_IMPORT_MAX_BYTES, WorkflowExport, WorkflowImportResult } from '../entities/workflow-export.ts';
import { Overview, SearchQuery, SearchResult, TagList } from '../entities/workspace.ts';
import { ActivityFeed, ActivityQuery, Comment, CreateComment, ListCommentsQuery } from '../entities/comments.ts';
import { UpdateUserProfile, UserProfile } from '../entities/profile.ts';
import { toJsonSchema, type JsonSchemaObject } from './json-schema.ts';
import { McpCreateWorkflow, McpUpdateWorkflowGraph, NODE_CATALOGUE_URI } from './workflow-input.ts';

export const TOOL_DOMAINS = [
  'projects',
  'tasks',
  'calendar',
  'notes',
  'workflows',
  'workflow_runs',
  'webhook_triggers',
  'search',
  'tags',
  'comments_activity',
  'workspace',
  'profile',
] as const;
export type ToolDomain = (typeof TOOL_DOMAINS)[number];

export const DOMAIN_TITLES: Record<ToolDomain, string> = {
  projects: 'Projects',
  tasks: 'Tasks',
  calendar: 'Calendar',
  notes: 'Notes',
  workflows: 'Workflows',
  workflow_runs: 'Workflow runs',
  webhook_triggers: 'Webhook triggers',
  search: 'Search',
  tags: 'Tags',
  comments_activity: 'Comments and activity',
  workspace: 'Workspace overview and stats',
  profile: 'User profile and preferences',
};

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** Every tool works on the user's own workspace only, never the open world. */
  openWorldHint: false;
}

export interface ToolDefinition<N extends string = string, I extends TSchema = TSchema> {
  name: N;
  title: string;
  /** Written for the model: what it does, when to use it, what comes back. */
  description: string;
  domain: ToolDomain;
  /** read → mcp:read is enough; write → needs mcp:write (docs/mcp-gateway.md, "Scopes and JSON-RPC"). */
  access: Access;
  annotations: ToolAnnotations;
  /** The input schema as TypeBox: what a handler's arguments are typed from (Static<>, defineTool). */
  input: I;
  inputSchema: JsonSchemaObject;
  outputSchema: JsonSchemaObject;
}

interface ToolSpec {
  name: string;
  title: string;
  description: string;
  access: Access;
  /** Changes nothing (defaults to access === 'read'; a secret reveal is read-only yet needs write). */
  readOnly?: boolean;
  /** May destroy or invalidate data the user cannot get back. */
  destructive?: boolean;
  /** Calling it twice with the same arguments has the effect of calling it once. */
  idempotent?: boolean;
  input: TSchema;
  output: TSchema;
}

/** The tools of one domain; each keeps its name and TypeBox input type, so handlers can be typed from them. */
function domain<const S extends readonly ToolSpec[]>(name: ToolDomain, specs: S): { [K in keyof S]: ToolDefinition<S[K]['name'], S[K]['input']> } {
  const tools = specs.map((s): ToolDefinition => {
    const readOnly = s.readOnly ?? s.access === 'read';
    return {
      name: s.name,
      title: s.title,
      description: s.description,
      domain: name,
      access: s.access,
      annotations: {
        title: s.title,
        readOnlyHint: readOnly,
        destructiveHint: !readOnly && (s.destructive ?? false),
        idempotentHint: readOnly || (s.idempotent ?? false),
        openWorldHint: false,
      },
      input: s.input,
      inputSchema: describeProperties(toJsonSchema(s.input)),
      outputSchema: toJsonSchema(s.output),
    };
  });
  return tools as { [K in keyof S]: ToolDefinition<S[K]['name'], S[K]['input']> };
}

/**
 * What a top-level input property means when its schema does not say: every input property of every
 * tool carries a description (clients show them; models read them). Short on purpose: tools/list
 * goes into the model's context.
 */
const PROPERTY_DESCRIPTIONS: Record<string, string> = {
  limit: 'Page size.',
  cursor: 'nextCursor of the previous page.',
  q: 'Text to look for (case-insensitive).',
  status: 'Status.',
  name: 'Name.',
  description: 'Description.',
  color: 'Color, #rrggbb.',
  projectId: 'Project id; null for none.',
  inbox: 'true: only tasks without a project.',
  priority: 'Priority.',
  tag: 'A tag.',
  overdue: 'true: only open tasks due before today.',
  sort: 'Order.',
  title: 'Title.',
  dueDate: 'Due day, YYYY-MM-DD; null clears it.',
  notes: 'Notes (Markdown).',
  ids: 'Ids of the tasks (up to 100).',
  set: 'The change to apply to every task.',
  from: 'Window start (ISO date-time).',
  to: 'Window end (ISO date-time).',
  location: 'Where.',
  startsAt: 'Start, ISO date-time with offset.',
  endsAt: 'End, ISO date-time with offset.',
  allDay: 'All-day event.',
  pinned: 'Pinned notes come first.',
  content: 'Markdown content.',
  active: 'Whether the workflow runs on its trigger.',
  triggerType: 'What starts the workflow.',
  requireWebhookSecret: 'Webhook deliveries must carry x-webhook-secret (default true).',
  workflowId: 'Workflow id.',
  types: 'Only these kinds of items.',
  targetType: 'Kind of item commented on.',
  targetId: 'Id of that item.',
  body: 'Comment text.',
  since: 'Only changes after this ISO date-time.',
  days: 'How many days, from today.',
  displayName: 'Name shown to others.',
  weekStartsOn: 'First day of the week.',
  defaultProjectId: 'Project for new tasks; null for the inbox.',
};

/**
 * Fills in the description of every property at every depth (nested objects, array items, anyOf /
 * oneOf / allOf branches, additionalProperties) from PROPERTY_DESCRIPTIONS where the schema gives
 * none; a description the schema gives always wins (the workflow graph's fields carry their own).
 */
function describeProperties<T extends object>(schema: T): T {
  const s = schema as Record<string, unknown>;
  const out: Record<string, unknown> = { ...s };
  if (s.properties && typeof s.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(s.properties as Record<string, object>).map(([name, p]) => {
        const prop = describeProperties(p) as { description?: string };
        const description = prop.description ?? PROPERTY_DESCRIPTIONS[name];
        return [name, description === undefined ? prop : { ...prop, description }];
      }),
    );
  }
  if (s.items && typeof s.items === 'object' && !Array.isArray(s.items)) out.items = describeProperties(s.items);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = s[key];
    if (Array.isArray(list)) out[key] = list.map((v: unknown) => (v && typeof v === 'object' ? describeProperties(v) : v));
  }
  if (s.additionalProperties && typeof s.additionalProperties === 'object') out.additionalProperties = describeProperties(s.additionalProperties);
  return out as T;
}

const strict = { additionalProperties: false } as const;
const NoInput = Type.Object({}, strict);
const Deleted = Type.Object({ deleted: Type.Literal(true), id: Uuid });
const withId = <K extends string>(key: K, description: string) =>
  ({ [key]: Type.String({ format: 'uuid', description }) }) as unknown as Record<K, ReturnType<typeof Type.String>>;
const pageOf = Page;
const limit = (max: number, dflt: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: dflt }));

const projectId = withId('projectId', 'Project id.');
const taskId = withId('taskId', 'Task id.');
const entryId = withId('entryId', 'Calendar entry id.');
const noteId = withId('noteId', 'Note id.');
/**
 * A workflow as the tools answer it, without `samplePin` (the editor's pinned sample, docs/console.md):
 * tools/list goes into the model's context and is held to a token budget; the answers still carry it.
 */
const ToolWorkflow = Type.Omit(Workflow, ['samplePin']);
const ToolCreatedWorkflow = Type.Intersect([ToolWorkflow, Type.Object({ webhookSecret: Type.Union([Type.String(), Type.Null()]) })]);
const workflowId = withId('workflowId', 'Workflow id.');
/**
 * The project filter of list_tasks, list_calendar_entries and list_notes. Models often send null for
 * a filter they do not want, so null is accepted and means what leaving it out means: any project
 * (workspace-api's query string drops it).
 */
const projectFilter = (ofWhat: string) =>
  Type.Optional(Type.Union([Uuid, Type.Null()], { description: `Only ${ofWhat} of this project; null or omitted: any project.` }));

const Agenda = Type.Object({
  date: DateOnly,
  overdue: Type.Array(Task),
  tasksDue: Type.Array(Task),
  events: Type.Array(CalendarEntry),
});
const Upcoming = Type.Object({
  from: DateOnly,
  to: DateOnly,
  tasksDue: Type.Array(Task),
  events: Type.Array(CalendarEntry),
});

/**
 * The catalogue: every tool's definition, one place. The gateway binds a handler to each with
 * defineTool (services/mcp-gateway/src/domain/tool-handlers.ts), its arguments typed from `input`.
 */
export const TOOLS = [
  ...domain('projects', [
    {
      name: 'list_projects',
      title: 'List projects',
      description: 'List the user’s projects, newest first. Filter by status (active or archived) or a text in the name. Returns { items, nextCursor }.',
      access: 'read',
      input: ListProjectsQuery,
      output: pageOf(Project),
    },
    {
      name: 'get_project',
      title: 'Get a project',
      description: 'Get one project with its task counts (open, done, total). Use list_tasks with projectId to see the tasks themselves.',
      access: 'read',
      input: Type.Object({ ...projectId }, strict),
      output: ProjectWithCounts,
    },
    {
      name: 'create_project',
      title: 'Create a project',
      description: 'Create a project. Only the name is required; color is #rrggbb. Returns the new project with its id.',
      access: 'write',
      input: CreateProject,
      output: Project,
    },
    {
      name: 'update_project',
      title: 'Update a project',
      description: 'Change a project’s name, description, color or status. Pass only the fields to change.',
      access: 'write',
      idempotent: true,
      input: Type.Object({ ...projectId, ...UpdateProject.properties }, strict),
      output: Project,
    },
    {
      name: 'archive_project',
      title: 'Archive a project',
      description: 'Archive a finished project: it keeps its tasks and notes but drops out of the active list. Undo with update_project status "active".',
      access: 'write',
      idempotent: true,
      input: Type.Object({ ...projectId }, strict),
      output: Project,
    },
    {
      name: 'delete_project',
      title: 'Delete a project',
      description:
        'Permanently delete a project AND all of its tasks; its notes and calendar entries are kept but unlinked. Cannot be undone: prefer archive_project unless the user asked to delete.',
      access: 'write',
      destructive: true,
      idempotent: false,
      input: Type.Object({ ...projectId }, strict),
      output: Deleted,
    },
  ]),
  ...domain('tasks', [
    {
      name: 'list_tasks',
      title: 'List tasks',
      description:
        'List and filter tasks: by project (projectId, or inbox=true: none), status, priority, tag, due dates (dueBefore/dueAfter), overdue=true or text (q); newest first unless sort says otherwise.',
      access: 'read',
      input: Type.Object({ ...ListTasksQuery.properties, projectId: projectFilter('tasks') }, strict),
      output: pageOf(Task),
    },
    {
      name: 'get_task',
      title: 'Get a task',
      description: 'Get one task with its notes, status, priority, due date and tags.',
      access: 'read',
      input: Type.Object({ ...taskId }, strict),
      output: Task,
    },
    {
      name: 'create_task',
      title: 'Create a task',
      description: 'Create a task. Only the title is required; without projectId the task goes to the inbox.',
      access: 'write',
      input: CreateTask,
      output: Task,
    },
    {
      name: 'update_task',
      title: 'Update a task',
      description:
        'Change any field of a task: title, notes, due date (null clears it), status, priority, tags (replaces the list), project. Pass only the fields to change.',
      access: 'write',
      idempotent: true,
      input: Type.Object({ ...taskId, ...UpdateTask.properties }, strict),
      output: Task,
    },
    {
      name: 'complete_task',
      title: 'Complete a task',
      description: 'Mark a task as done (records when it was completed). Completing a done task changes nothing.',
      access: 'write',
      idempotent: true,
      input: Type.Object({ ...taskId }, strict),
      output: Task,
    },
    {
      name: 'move_task',
      title: 'Move a task',
      description: 'Move a task to another project, or to the inbox with projectId null.',
      access: 'write',
      idempotent: true,
      input: Type.Object({ ...taskId, projectId: Type.Union([Uuid, Type.Null()], { description: 'Target project id, or null for the inbox.' }) }, strict),
      output: Task,
    },
    {
      name: 'delete_task',
      title: 'Delete a task',
      description: 'Permanently delete a task and its comments. Cannot be undone; to close a task use complete_task or status "cancelled".',
      access: 'write',
      destructive: true,
      input: Type.Object({ ...taskId }, strict),
      output: Deleted,
    },
    {
      name: 'bulk_update_tasks',
      title: 'Update many tasks',
      description:
        'Apply one change (status, priority, projectId or dueDate) to up to 100 tasks at once, e.g. complete several tasks or reschedule them. Returns which ids were updated and which were not found.',
      access: 'write',
      idempotent: true,
      input: BulkUpdateTasks,
      output: BulkResult,
    },
  ]),
  ...domain('calendar', [
    {
      name: 'list_calendar_entries',
      title: 'List calendar entries',
      description:
        'List calendar entries by start time. from/to (ISO date-times) select entries overlapping that window; filter by projectId or text (q). Returns { items, nextCursor }.',
      access: 'read',
      input: Type.Object({ ...ListCalendarQuery.properties, projectId: projectFilter('entries') }, strict),
      output: pageOf(CalendarEntry),
    },
    {
      name: 'get_calendar_entry',
      title: 'Get a calendar entry',
      description: 'Get one calendar entry with its description, location and times.',
      access: 'read',
      input: Type.Object({ ...entryId }, strict),
      output: CalendarEntry,
    },
    {
      name: 'create_calendar_entry',
      title: 'Create a calendar entry',
      description:
        'Add an event. startsAt is an ISO date-time with offset (e.g. 2026-05-04T09:00:00+02:00); endsAt defaults to one hour later (end of day for allDay).',
      access: 'write',
      input: CreateCalendarEntry,
      output: CalendarEntry,
    },
    {
      name: 'update_calendar_entry',
      title: 'Update or reschedule a calendar entry',
      description: 'Change an entry’s title, description, location, project or times. Changing startsAt alone keeps the duration (reschedule).',
      access: 'write',
      idempotent: true,
      input: Type.Object({ ...entryId, ...UpdateCalendarEntry.properties }, strict),
      output: CalendarEntry,
    },
    {
      name: 'delete_calendar_entry',
      title: 'Delete a calendar entry',
      description: 'Permanently delete a calendar entry (to move it, use update_calendar_entry).',
      access: 'write',
      destructive: true,
      input: Type.Object({ ...entryId }, strict),
      output: Deleted,
    },
  ]),
  ...domain('notes', [
    {
      name: 'list_notes',
      title: 'List notes',
      description: 'List notes, newest first; filter by projectId, tag, pinned or text (q). Returns { items, nextCursor } with full note content.',
      access: 'read',
      input: Type.Object({ ...ListNotesQuery.properties, projectId: projectFilter('notes') }, strict),
      output: pageOf(Note),
    },
    {
      name: 'get_note',
      title: 'Get a note',
      description: 'Get one note with its full content.',
      access: 'read',
      input: Type.Object({ ...noteId }, strict),
      output: Note,
    },
    {
      name: 'create_note',
      title: 'Create a note',
      description: 'Write a note (Markdown content up to 100,000 characters), optionally in a project, with tags, pinned.',
      access: 'write',
      input: CreateNote,
      output: Note,
    },
    {
      name: 'update_note',
      title: 'Update a note',
      description: 'Change a note’s title, content (replaces it), project, tags or pinned flag. Pass only the fields to change.',
      access: 'write',
      idempotent: true,
      input: Type.Object({ ...noteId, ...UpdateNote.properties }, strict),
      output: Note,
    },
    {
      name: 'delete_note',
      title: 'Delete a note',
      description: 'Permanently delete a note and its comments.',
      access: 'write',
      destructive: true,
      input: Type.Object({ ...noteId }, strict),
      output: Deleted,
    },
  ]),
  ...domain('workflows', [
    {
      name: 'list_workflows',
      title: 'List workflows',
      description: 'List workflows; filter by active, triggerType, tag or q (name, description, tags); sort.',
      access: 'read',
      input: ListWorkflowsQuery,
      output: pageOf(ToolWorkflow),
    },
    {
      name: 'get_workflow',
      title: 'Get a workflow',
      description: `Get a workflow with its node graph (node types: resource ${NODE_CATALOGUE_URI}), trigger and webhook URL. Without mcp:write, secrets written inline in http_request nodes read ••••; {{credentials.<name>}} references show as written.`,
      access: 'read',
      input: Type.Object({ ...workflowId, asFile: Type.Optional(Type.Boolean({ description: 'true: the export file, for import_workflow.' })) }, strict),
      // asFile: the export file (docs/workflow-export.md) instead of the workflow (one object schema: MCP's output schemas are objects).
      output: Type.Partial(Type.Object({ ...Workflow.properties, ...WorkflowExport.properties })),
    },
    {
      // One tool for the history (list, and one version with number): a second tool cost tools/list its token budget.
      name: 'get_workflow_versions',
      title: 'Workflow versions',
      description: 'Saved versions of a workflow, newest first; with number, that version’s definition.',
      access: 'read',
      input: Type.Object({ ...workflowId, number: Type.Optional(Type.Integer({ minimum: 1, description: 'Version number.' })), ...PageQuery }, strict),
      // Without number: a page ({ items, nextCursor }); with it: one version (its summary and definition).
      output: Type.Partial(Type.Object({ ...pageOf(WorkflowVersionSummary).properties, ...WorkflowVersion.properties })),
    },
    {
      name: 'create_workflow',
      title: 'Create a workflow',
      description: `Create a workflow with a trigger type and optionally a node graph (node types, params, branches, outputs: read resource ${NODE_CATALOGUE_URI} first). A webhook workflow's secret is in this answer, once. Inactive unless active is true.`,
      access: 'write',
      input: McpCreateWorkflow,
      output: ToolCreatedWorkflow,
    },
    {
      name: 'update_workflow',
      title: 'Update a workflow',
      description: 'Change a workflow’s name, description, trigger, graph (replaces it) or settings. Pass only the fields to change.',
      access: 'write',
      idempotent: true,
      input: Type.Object(
        {
          ...workflowId,
          ...Type.Partial(McpCreateWorkflow).properties,
          graph: Type.Optional(McpUpdateWorkflowGraph),
          retention: Type.Optional(
            Type.Object(
              {
                days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'Keep finished runs this many days.' })),
                runs: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Keep this many newest finished runs.' })),
              },
              { ...strict, description: 'Run history kept for this workflow (replaces the previous one); {}: the global setting.' },
            ),
          ),
        },
        strict,
      ),
      output: ToolWorkflow,
    },
    {
      // One tool for a Flowdesk file and an n8n download: POST /workflows/import tells them apart.
      name: 'import_workflow',
      title: 'Import a workflow file',
      description:
        'New inactive workflow from a file: a Flowdesk export (get_workflow asFile) or an n8n download. Returns it, the problems per step and the credentials its steps name.',
      access: 'write',
      input: Type.Object({ file: Type.String({ maxLength: WORKFLOW_IMPORT_MAX_BYTES, description: 'The file’s JSON text.' }) }, strict),
      output: WorkflowImportResult,
    },
    {
      name: 'set_workflow_active',
      title: 'Activate, deactivate or run a workflow now',
      description:
        'Turn a workflow on (active: true) or off (inactive ones ignore their triggers), and/or run it now (runNow, even while inactive; payload: its {{trigger.*}} data). Returns the workflow, the queued run as startedRun (see get_workflow_run).',
      access: 'write',
      input: Type.Object(
        {
          ...workflowId,
          active: Type.Optional(Type.Boolean({ description: 'true: on, false: off; omit to leave as is.' })),
          runNow: Type.Optional(
            Type.Object(
              { payload: Type.Optional(Type.String({ maxLength: 100_000, description: 'JSON text of an object: the run’s trigger data (default {}).' })) },
              { ...strict, description: 'Start one run now.' },
            ),
          ),
        },
        strict,
      ),
      output: Type.Intersect([ToolWorkflow, Type.Object({ startedRun: Type.Optional(WorkflowRun) })]),
    },
    {
      name: 'delete_workflow',
      title: 'Delete a workflow',
      description: 'Permanently delete a workflow and all its runs; its webhook URL stops working.',
      access: 'write',
      destructive: true,
      input: Type.Object({ ...workflowId }, strict),
      output: Deleted,
    },
  ]),
  ...domain('workflow_runs', [
    {
      name: 'list_workflow_runs',
      title: 'List workflow runs',
      description:
        'List workflow runs newest first, of one workflow (workflowId) or of all; filter by status (queued, running, succeeded, failed, skipped). Use it to find failures.',
      access: 'read',
      input: Type.Object({ workflowId: Type.Optional(Uuid), status: Type.Optional(RunStatus), ...PageQuery }, strict),
      output: pageOf(WorkflowRun),
    },
    {
      name: 'get_workflow_run',
      title: 'Get a workflow run',
      description: 'Get one run with its trigger payload and per-node steps (input, output, error, duration): what to read when explaining why a run failed.',
      access: 'read',
      input: Type.Object({ runId: Type.String({ format: 'uuid', description: 'Id of the run (from list_workflow_runs).' }) }, strict),
      output: WorkflowRun,
    },
    {
      name: 'get_latest_workflow_run',
      title: 'Get the latest run of a workflow',
      description: 'The most recent run of a workflow, or run: null if it never ran. Quick answer to "did my workflow work?".',
      access: 'read',
      input: Type.Object({ ...workflowId }, strict),
      output: Type.Object({ run: Type.Union([WorkflowRun, Type.Null()]) }),
    },
  ]),
  ...domain('webhook_triggers', [
    {
      name: 'get_webhook_trigger',
      title: 'Get a webhook trigger',
      description:
        'A workflow’s webhook URL and how deliveries authenticate: standard-webhooks (signed), provider-signature (a Verify signature step: GitHub, Stripe… with a credential), secret-header (x-webhook-secret) or none. webhook is null for other triggers. No secret shown.',
      access: 'read',
      input: Type.Object({ ...workflowId }, strict),
      output: Type.Object({ workflowId: Uuid, triggerType: TriggerType, active: Type.Boolean(), webhook: Type.Union([WebhookEndpoint, Type.Null()]) }),
    },
    {
      name: 'reveal_webhook_secret',
      title: 'Reveal a webhook secret',
      description:
        'Show the current webhook secret of a workflow (to configure the sending system). Changes nothing, but needs write access because the secret lets anyone start the workflow.',
      access: 'write',
      readOnly: true,
      input: Type.Object({ ...workflowId }, strict),
      output: WebhookSecret,
    },
    {
      name: 'regenerate_webhook_secret',
      title: 'Regenerate a webhook secret',
      description: 'Replace a workflow’s webhook secret with a new one; senders using the old secret are rejected from now on. Returns the new secret.',
      access: 'write',
      destructive: true,
      input: Type.Object({ ...workflowId }, strict),
      output: WebhookSecret,
    },
  ]),
  ...domain('search', [
    {
      name: 'search_workspace',
      title: 'Search the workspace',
      description:
        'Find projects, tasks, notes, calendar entries and workflows whose title or text contains q (case-insensitive), title matches first; optionally only some types. Hits: type, id, title, snippet.',
      access: 'read',
      input: SearchQuery,
      output: SearchResult,
    },
    {
      name: 'search_notes',
      title: 'Search notes',
      description: 'Full-text search in note titles and content, newest first, optionally within a tag. Returns whole notes.',
      access: 'read',
      input: Type.Object({ q: SearchText, tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })), limit: limit(100, 25) }, strict),
      output: pageOf(Note),
    },
  ]),
  ...domain('tags', [
    {
      name: 'list_tags',
      title: 'List tags',
      description: 'Every tag in use, with how many tasks and notes carry it.',
      access: 'read',
      input: NoInput,
      output: TagList,
    },
    {
      name: 'list_tagged_items',
      title: 'List items with a tag',
      description: 'The tasks and notes that carry a tag (newest first, up to limit of each).',
      access: 'read',
      input: Type.Object({ tag: Type.String({ minLength: 1, maxLength: 50 }), limit: limit(100, 25) }, strict),
      output: Type.Object({ tag: Type.String(), tasks: Type.Array(Task), notes: Type.Array(Note) }),
    },
    {
      name: 'tag_task',
      title: 'Add tags to a task',
      description: 'Add tags to a task, keeping the ones it has (tags without spaces or commas, at most 20 per task).',
      access: 'write',
      idempotent: true,
      input: Type.Object({ ...taskId, tags: Tags }, strict),
      output: Task,
    },
    {
      name: 'untag_task',
      title: 'Remove tags from a task',
      description: 'Remove tags from a task; tags it does not have are ignored.',
      access: 'write',
      idempotent: true,
      input: Type.Object({ ...taskId, tags: Tags }, strict),
      output: Task,
    },
  ]),
  ...domain('comments_activity', [
    {
      name: 'list_comments',
      title: 'List comments',
      description: 'The comments on a task, project or note (targetType + targetId), newest first.',
      access: 'read',
      input: ListCommentsQuery,
      output: pageOf(Comment),
    },
    {
      name: 'add_comment',
      title: 'Add a comment',
      description: 'Comment on a task, project or note, e.g. to record progress or a decision.',
      access: 'write',
      input: CreateComment,
      output: Comment,
    },
    {
      name: 'delete_comment',
      title: 'Delete a comment',
      description: 'Permanently delete a comment (only the comment; its task, project or note stays).',
      access: 'write',
      destructive: true,
      input: Type.Object({ commentId: Type.String({ format: 'uuid', description: 'Id of the comment (from list_comments).' }) }, strict),
      output: Deleted,
    },
    {
      name: 'list_recent_activity',
      title: 'Recent activity',
      description:
        'What changed lately across projects, tasks, notes, events, workflows and comments, newest first (created, updated, completed, commented). since limits it to changes after an ISO date-time.',
      access: 'read',
      input: ActivityQuery,
      output: ActivityFeed,
    },
  ]),
  ...domain('workspace', [
    {
      name: 'get_workspace_overview',
      title: 'Workspace overview',
      description:
        'Counts at a glance: active projects, open/overdue/due-today/this-week tasks, notes, events in 7 days, workflow health in 24 h. A good first call.',
      access: 'read',
      input: NoInput,
      output: Overview,
    },
    {
      name: 'get_agenda',
      title: 'Agenda for a day',
      description: 'One day at a glance: overdue open tasks, open tasks due that day and the day’s calendar entries (UTC day). date defaults to today.',
      access: 'read',
      input: Type.Object({ date: Type.Optional(DateOnly) }, strict),
      output: Agenda,
    },
    {
      name: 'get_upcoming',
      title: 'Upcoming tasks and events',
      description: 'Open tasks due and calendar entries in the next days (default 7, at most 31), starting today.',
      access: 'read',
      input: Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 31, default: 7 })) }, strict),
      output: Upcoming,
    },
  ]),
  ...domain('profile', [
    {
      name: 'get_profile',
      title: 'Get profile and preferences',
      description:
        'The user’s display name, time zone, week start, working hours and default project. Use the time zone when talking about "today" or scheduling.',
      access: 'read',
      input: NoInput,
      output: UserProfile,
    },
    {
      name: 'update_profile',
      title: 'Update profile',
      description: 'Change the user’s display name or time zone (IANA name such as Europe/Berlin).',
      access: 'write',
      idempotent: true,
      input: Type.Object(
        { displayName: UpdateUserProfile.properties.displayName, timezone: UpdateUserProfile.properties.timezone },
        { ...strict, minProperties: 1 },
      ),
      output: UserProfile,
    },
    {
      name: 'update_preferences',
      title: 'Update preferences',
      description:
        'Change planning preferences: weekStartsOn (monday, sunday, saturday), workday hours (HH:MM) and the default project for new tasks (null for the inbox).',
      access: 'write',
      idempotent: true,
      input: Type.Object(
        {
          weekStartsOn: UpdateUserProfile.properties.weekStartsOn,
          workdayStart: UpdateUserProfile.properties.workdayStart,
          workdayEnd: UpdateUserProfile.properties.workdayEnd,
          defaultProjectId: UpdateUserProfile.properties.defaultProjectId,
        },
        { ...strict, minProperties: 1 },
      ),
      output: UserProfile,
    },
  ]),
] as const;

/** One tool of the catalogue, with its literal name and TypeBox input type. */
export type CatalogueTool = (typeof TOOLS)[number];
export type ToolName = CatalogueTool['name'];

export const TOOLS_BY_NAME: ReadonlyMap<string, ToolDefinition> = new Map(TOOLS.map((t) => [t.name, t]));
/** The catalogue by name, typed per tool: `TOOL.create_task` is the spec a handler binds to. */
export const TOOL = Object.fromEntries(TOOLS.map((t) => [t.name, t])) as { readonly [T in CatalogueTool as T['name']]: T };

/** An icon of MCP 2025-11-25 (SEP-973): a URL the client fetches (the type is the file's, `.svg`). */
export interface ToolIcon {
  src: string;
}

/** A tool as tools/list shows it (docs/mcp-gateway.md, "What tools/list carries"). */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchemaObject;
  annotations: Partial<Omit<ToolAnnotations, 'title'>>;
  icons?: ToolIcon[];
}

/**
 * The kinds of tool icon, one per kind of thing a tool works on; the console serves each at
 * `/icons/<kind>.svg` (services/console/web/public/icons). A tool of none of them (the workspace,
 * search, tags, the profile) shows Flowdesk's own mark, `/favicon.svg`.
 */
export const TOOL_ICON_KINDS = ['workflow', 'calendar', 'comment', 'note', 'project', 'task'] as const;
const ICON_KIND_WORDS: Record<(typeof TOOL_ICON_KINDS)[number], readonly string[]> = {
  workflow: ['workflow', 'webhook'],
  calendar: ['calendar', 'agenda', 'upcoming'],
  comment: ['comment'],
  note: ['note'],
  project: ['project'],
  task: ['task'],
};

/** Flowdesk's own mark (the console's favicon; serverInfo carries it as a data: URI). */
const SERVER_ICON_PATH = '/favicon.svg';

/** The path of a tool's icon under the public base URL: the first kind (in TOOL_ICON_KINDS order) its name names. */
export function toolIconPath(name: string): string {
  const words = name.split('_');
  const kind = TOOL_ICON_KINDS.find((k) => ICON_KIND_WORDS[k].some((w) => words.some((x) => x === w || x === `${w}s`)));
  return kind ? `/icons/${kind}.svg` : SERVER_ICON_PATH;
}

/**
 * The input schema as tools/list sends it: without length and count bounds (`maxLength`,
 * `minLength: 1`, `maxItems`, `minimum: 1`) and without `pattern`s (each pattern's rule is in its
 * property's description: `#rrggbb`, `HH:MM`, tags without spaces or commas), which a model does not
 * need to write a call and which cost 444 + 70 + 56 + 189 tokens across the catalogue. The server
 * still validates every call against the full schema and answers a tool error that names the field
 * and the bound (`title must NOT have more than 500 characters`), which a model reads and corrects.
 * `additionalProperties: false` stays: OpenAI's strict mode needs closed objects
 * (test/mcp-tool-schemas.test.ts).
 */
export function listedSchema<S>(schema: S): S {
  if (Array.isArray(schema)) return (schema as unknown[]).map((s) => listedSchema(s)) as S;
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    // uniqueItems too (tags): a bound the server checks, as it checks every other one here.
    if (k === 'maxLength' || k === 'maxItems' || k === 'pattern' || k === 'uniqueItems' || ((k === 'minLength' || k === 'minimum') && v === 1)) continue;
    // `properties` maps names to schemas: a property may be called anything, even `maxLength`.
    out[k] =
      k === 'properties' && v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([n, p]) => [n, listedSchema(p)]))
        : listedSchema(v);
  }
  return out as S;
}

/**
 * The catalogue as tools/list sends it, sized for a model's context (under 10k o200k tokens with the
 * icons under any base URL up to 60 characters; a test holds the ceiling). Left out: output schemas
 * (54 % of the listing, read by no model; every tool still returns structuredContent, documented by
 * its description and in docs/mcp-tools.md), the annotations' copy of the title, hints that mean
 * nothing for the tool (destructive or idempotent on a read-only tool, MCP 2025-06-18
 * "ToolAnnotations") or say the default (`idempotentHint: false`, `readOnlyHint: false`), and the
 * schemas' bounds (listedSchema). With `iconBaseUrl` (the public
 * base URL), each tool of a kind (task, project, …) carries that kind's icon (MCP 2025-11-25); the
 * workspace-wide ones carry none, their icon being the server's.
 */
export function listedTools(tools: readonly ToolDefinition[] = TOOLS, options: { iconBaseUrl?: string } = {}): ListedTool[] {
  const base = options.iconBaseUrl?.replace(/\/+$/, '');
  return tools.map((t) => {
    const a = t.annotations;
    const annotations: ListedTool['annotations'] = a.readOnlyHint
      ? { readOnlyHint: true, openWorldHint: false }
      : { destructiveHint: a.destructiveHint, ...(a.idempotentHint ? { idempotentHint: true } : {}), openWorldHint: false };
    const listed: ListedTool = { name: t.name, title: t.title, description: t.description, inputSchema: listedSchema(t.inputSchema), annotations };
    // A workspace-wide tool's icon would be Flowdesk's mark, which the server's own icon already is.
    const icon = toolIconPath(t.name);
    if (base !== undefined && icon !== SERVER_ICON_PATH) listed.icons = [{ src: `${base}${icon}` }];
    return listed;
  });
}
