export const WELCOME_PROJECT = 'Welcome to Flowdesk';

interface Api {
  /** workspace-api's own loopback URL: the seed holds an internal token, which only workspace-api takes (the public /api/v1 edge does not). */
  workspaceApiUrl: string;
  /** The URL people use, for the links in the task notes. */
  publicBaseUrl: string;
  token: string;
}

function welcomeTasks(base: string) {
  return [
    {
      title: 'Connect your AI assistant to Flowdesk',
      priority: 'high',
      notes: `Add the MCP server ${base}/functions/v1/mcp-server-v2 to your MCP client. The demo user's credentials are in .flowdesk/dev.json.`,
    },
    {
      title: 'Plan your week with tasks and due dates',
      priority: 'medium',
      notes: 'Tasks take a due date, a priority and tags. Ask your assistant: "What is due this week?"',
    },
    {
      title: 'Automate something with a workflow',
      priority: 'low',
      notes: `Create a workflow with a webhook trigger, then POST JSON to ${base}/functions/v1/webhook-trigger/<workflow_id> with the x-webhook-secret header.`,
    },
  ];
}

/**
 * The demo user's welcome project and its three tasks, through workspace-api's API. Safe to
 * repeat after a partial failure: it only adds what is missing.
 */
export async function seedWelcome(api: Api): Promise<{ projectId: string }> {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${api.workspaceApiUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${api.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /api/v1${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  };
  type Page = { items: { id: string; name?: string; title?: string }[] };

  const projects = await call<Page>('GET', `/projects?limit=100&q=${encodeURIComponent(WELCOME_PROJECT)}`);
  const project =
    projects.items.find((p) => p.name === WELCOME_PROJECT) ??
    (await call<{ id: string }>('POST', '/projects', {
      name: WELCOME_PROJECT,
      description: 'A few first steps. Delete this project whenever you like.',
      color: '#4f46e5',
    }));
  const tasks = await call<Page>('GET', `/tasks?limit=100&projectId=${project.id}`);
  const have = new Set(tasks.items.map((t) => t.title));
  for (const task of welcomeTasks(api.publicBaseUrl)) {
    if (!have.has(task.title)) await call('POST', '/tasks', { ...task, projectId: project.id });
  }
  return { projectId: project.id };
}
