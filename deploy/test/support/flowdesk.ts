// Talking to a running stack as its users and operators do: a first user with an API key, internal
// tokens by token exchange at auth, the workspace API, webhook deliveries, runs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiKey, createPrismaClient, createUser } from '@flowdesk/auth';
import { Audience, MCP_PATH } from '@flowdesk/contracts';
import { AuthClient } from '@flowdesk/mcp-gateway';
import { openDatabase } from '@flowdesk/db';
import type { Stack } from './stack.ts';

export interface User {
  userId: string;
  /** A Read + Write API key (`fdk_...`), the credential an MCP client or the CLI holds. */
  apiKey: string;
}

/**
 * The first user and its first key. Auth has no sign-up endpoint (docs/auth.md, Users): an operator
 * creates them with auth's own domain functions on its database — what the embedded start does for
 * the demo user (embedded/src/demo-account.ts) — and every further key goes through auth's API.
 */
export async function createFirstUser(databaseUrl: string, email = 'ops@flowdesk.example'): Promise<User> {
  const db = await openDatabase({ kind: 'postgres', url: databaseUrl, poolMax: 2 });
  const prisma = createPrismaClient(db);
  try {
    const user = await createUser(prisma, { email, password: `pw-${crypto.randomUUID()}` });
    const { secret } = await createApiKey(prisma, { userId: user.id, name: 'bootstrap', scope: 'mcp:write' });
    return { userId: user.id, apiKey: secret };
  } finally {
    await prisma.$disconnect();
    await db.close();
  }
}

/** A further key through auth's key management API (what `npx flowdesk keys create` calls). */
export async function createKeyViaApi(stack: Stack, apiKey: string, name: string, scope: 'read' | 'write'): Promise<string> {
  const res = await fetch(`${stack.url('auth')}/auth/v1/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, scope }),
  });
  const body = (await res.json()) as { secret?: string };
  if (res.status !== 201 || !body.secret) throw new Error(`POST /auth/v1/api-keys answered ${res.status}: ${JSON.stringify(body)}`);
  return body.secret;
}

/**
 * An internal token for workspace-api, obtained as the gateway obtains it — with the gateway's own
 * AuthClient: RFC 8693 exchange of the user's API key at auth, authenticated with its service secret.
 */
export async function exchangeForWorkspaceToken(stack: Stack, apiKey: string, audience: string = Audience.workspaceApi): Promise<string> {
  const auth = new AuthClient({
    url: stack.url('auth'),
    clientId: 'mcp-gateway',
    clientSecret: stack.secrets.serviceClients['mcp-gateway'],
    now: () => new Date(),
    resource: `${stack.url('mcp-gateway')}${MCP_PATH}`,
  });
  try {
    return await auth.internalToken(apiKey, audience);
  } finally {
    await auth.close();
  }
}

/** The workspace API as `apiKey`'s user (a fresh exchanged token per call would be wasteful: one per client). */
export async function workspaceApi(stack: Stack, apiKey: string) {
  const token = await exchangeForWorkspaceToken(stack, apiKey);
  // Runs are the engine's data (its own runs API, audience workflow-engine), as the console's edge routes them.
  let engineToken: string | undefined;
  const isRunsPath = (path: string) => /^\/api\/v1\/(workflow-runs\b|workflows\/[^/]+\/runs\b)/.test(path);
  return async function call<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const toEngine = isRunsPath(path);
    if (toEngine) engineToken ??= await exchangeForWorkspaceToken(stack, apiKey, Audience.workflowEngine);
    const res = await fetch(`${stack.url(toEngine ? 'workflow-engine' : 'workspace-api')}${path}`, {
      method,
      headers: { authorization: `Bearer ${toEngine ? engineToken : token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as T };
  };
}
export type WorkspaceApi = Awaited<ReturnType<typeof workspaceApi>>;

export interface Run {
  id: string;
  eventId: string;
  status: string;
  steps: { nodeId: string }[];
}

/** Every run of a workflow (all pages). */
export async function allRuns(api: WorkspaceApi, workflowId: string): Promise<Run[]> {
  const out: Run[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: { items: Run[]; nextCursor: string | null } } = await api(
      'GET',
      `/api/v1/workflows/${workflowId}/runs?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    );
    if (page.status !== 200) throw new Error(`runs of ${workflowId}: ${page.status} ${JSON.stringify(page.body)}`);
    out.push(...page.body.items);
    cursor = page.body.nextCursor;
  } while (cursor);
  return out;
}

const FINISHED = new Set(['succeeded', 'failed', 'skipped']);

/** Waits until `done(finishedRuns)` holds; returns every run of the workflows then (or at the deadline). */
export async function waitForRuns(api: WorkspaceApi, workflowIds: string[], done: (finished: Run[]) => boolean, timeoutMs = 30_000): Promise<Run[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs = (await Promise.all(workflowIds.map((id) => allRuns(api, id)))).flat();
    if (done(runs.filter((r) => FINISHED.has(r.status))) || Date.now() > deadline) return runs;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** POSTs one webhook delivery to webhook-ingest. */
export function deliver(stack: Stack, workflowId: string, secret: string, body: unknown): Promise<{ status: number; body: any }> {
  return deliverTo(stack.url('webhook-ingest'), workflowId, secret, body);
}

/** POSTs one webhook delivery to the webhook-ingest process at `ingestUrl`. */
export async function deliverTo(ingestUrl: string, workflowId: string, secret: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${ingestUrl}/functions/v1/webhook-trigger/${workflowId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-secret': secret },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

/** A loopback HTTP server standing in for the CRM a workflow's HTTP Request node calls. */
export async function startReceiver(delayMs = 0) {
  const received: { path: string; body: any }[] = [];
  let arrived = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    arrived++;
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        received.push({ path: req.url ?? '', body: text ? JSON.parse(text) : undefined });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ticket: `T-${received.length}` }));
      }, delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    received,
    /** Requests that reached the receiver, answered or not yet. */
    arrived: () => arrived,
    close: () =>
      new Promise<void>((r) => {
        // Answers still waiting would keep the test process alive for their whole delay.
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Creates and activates a webhook workflow; returns its id and webhook secret. */
export async function createWebhookWorkflow(api: WorkspaceApi, name: string, graph: unknown): Promise<{ id: string; secret: string }> {
  const created = await api<{ id: string; webhookSecret: string }>('POST', '/api/v1/workflows', {
    name,
    triggerType: 'webhook',
    requireWebhookSecret: true,
    graph,
  });
  if (created.status !== 201) throw new Error(`create workflow: ${created.status} ${JSON.stringify(created.body)}`);
  const activated = await api('PATCH', `/api/v1/workflows/${created.body.id}`, { active: true });
  if (activated.status !== 200) throw new Error(`activate workflow: ${activated.status} ${JSON.stringify(activated.body)}`);
  return { id: created.body.id, secret: created.body.webhookSecret };
}
