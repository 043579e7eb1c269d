import { PROJECT_RESOURCE_TEMPLATE, RESOURCE_URIS, renderNodeCatalogue, type PageOf, type Task } from '@flowdesk/contracts';
import type { WorkspaceApi } from './ports.ts';
import { workspaceOverview } from './tool-handlers.ts';

export class UnknownResourceError extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PROJECT_PREFIX = PROJECT_RESOURCE_TEMPLATE.slice(0, PROJECT_RESOURCE_TEMPLATE.indexOf('{'));

/** Resources that are the same for every caller (no workspace-api call): their text and media type. */
const STATIC_RESOURCES = new Map<string, { mimeType: string; text: string }>([
  [RESOURCE_URIS.workflowNodes, { mimeType: 'text/markdown', text: renderNodeCatalogue() }],
]);
export const staticResource = (uri: string): { mimeType: string; text: string } | undefined => STATIC_RESOURCES.get(uri);

/** The JSON behind a resource URI, read live from workspace-api as the caller. */
export async function readResource(uri: string, api: WorkspaceApi, now: Date): Promise<unknown> {
  switch (uri) {
    case RESOURCE_URIS.overview:
      return workspaceOverview(api);
    case RESOURCE_URIS.projects:
      return api.get('/projects', { status: 'active', limit: 100 });
    case RESOURCE_URIS.tasks:
      return api.get('/tasks', { status: ['todo', 'in_progress'], sort: 'due_asc', limit: 100 });
    case RESOURCE_URIS.calendar:
      return api.get('/calendar-entries', { from: now.toISOString(), to: new Date(now.getTime() + 7 * 86_400_000).toISOString(), limit: 100 });
  }
  if (uri.startsWith(PROJECT_PREFIX)) {
    const id = uri.slice(PROJECT_PREFIX.length);
    if (!UUID.test(id)) throw new UnknownResourceError(uri);
    const [project, tasks] = await Promise.all([api.get(`/projects/${id}`), api.get<PageOf<Task>>('/tasks', { projectId: id, sort: 'due_asc', limit: 100 })]);
    return { project, tasks: tasks.items };
  }
  throw new UnknownResourceError(uri);
}
