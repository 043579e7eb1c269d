/**
 * MCP resources: read-only JSON views of the workspace, for clients that attach context (listed), and
 * the workflow node catalogue (Markdown, generated from the node registry; the same for every caller;
 * readable by its URI, not listed).
 */
import { NODE_CATALOGUE_URI } from './workflow-input.ts';

export interface ResourceDefinition {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json' | 'text/markdown';
}
export interface ResourceTemplateDefinition {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json';
}

export const RESOURCE_URIS = {
  overview: 'flowdesk://workspace/overview',
  projects: 'flowdesk://projects',
  tasks: 'flowdesk://tasks',
  calendar: 'flowdesk://calendar',
  workflowNodes: NODE_CATALOGUE_URI,
} as const;

export const RESOURCES: readonly ResourceDefinition[] = [
  {
    uri: RESOURCE_URIS.overview,
    name: 'workspace-overview',
    title: 'Workspace overview',
    description: 'Counts at a glance: projects, open, overdue and due tasks, upcoming events, workflow health.',
    mimeType: 'application/json',
  },
  {
    uri: RESOURCE_URIS.projects,
    name: 'projects',
    title: 'Active projects',
    description: 'The active projects (up to 100), newest first.',
    mimeType: 'application/json',
  },
  {
    uri: RESOURCE_URIS.tasks,
    name: 'open-tasks',
    title: 'Open tasks',
    description: 'Open tasks (to do and in progress, up to 100), soonest due first.',
    mimeType: 'application/json',
  },
  {
    uri: RESOURCE_URIS.calendar,
    name: 'calendar-next-7-days',
    title: 'Calendar: next 7 days',
    description: 'Calendar entries from now to seven days ahead (up to 100), by start.',
    mimeType: 'application/json',
  },
];

/**
 * Readable by `resources/read` of its URI but not listed: the specification's catalogue is 4 static
 * resources + 1 template (the workspace views). The tools that need it (get_workflow,
 * create_workflow, a node's params and retry fields) name its URI, and a wrong params text's error does too.
 */
export const UNLISTED_RESOURCES: readonly ResourceDefinition[] = [
  {
    uri: RESOURCE_URIS.workflowNodes,
    name: 'workflow-node-types',
    title: 'Workflow node types',
    description: "Every workflow node type: its params (what create_workflow and update_workflow take as a node's params JSON text), branches and output.",
    mimeType: 'text/markdown',
  },
];

/** `{projectId}` is a project id (UUID). */
export const PROJECT_RESOURCE_TEMPLATE = 'flowdesk://projects/{projectId}';

export const RESOURCE_TEMPLATES: readonly ResourceTemplateDefinition[] = [
  {
    uriTemplate: PROJECT_RESOURCE_TEMPLATE,
    name: 'project',
    title: 'Project with its tasks',
    description: 'One project with its task counts and its tasks (up to 100, soonest due first).',
    mimeType: 'application/json',
  },
];
