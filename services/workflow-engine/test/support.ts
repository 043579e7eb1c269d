// Shared test helpers: the stack an engine runs against, a loopback HTTP server that records what it
// received, the public API as a user, and a quiet ports set.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { createTestDatabase, type Database, type TestDatabase } from '@flowdesk/db';
import { listen, signInternalToken, type Service, type SigningKeys } from '@flowdesk/service-kit';
import { callJson, type JsonAnswer } from '@flowdesk/service-kit/testing';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';
import { createGuardedHttpClient, type GuardedHttpClient } from '@flowdesk/service-kit';
import { migrateEngine } from '../src/adapters/run-store.ts';
import { workspaceClient, type WorkspaceClient } from '../src/adapters/workspace-client.ts';
import type { TriggerEvent } from '@flowdesk/contracts';
import type { CreateTaskInput, EnginePorts, HttpClient, LogPort, RunPorts } from '../src/domain/ports.ts';
import { executeWorkflow, type ExecuteWorkflowInput } from '../src/domain/executor.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { buildApp, type WorkflowEngineDeps } from '../src/app.ts';
import { until } from '@flowdesk/service-kit/testing';
import type { WorkflowGraph, WorkflowNode } from '@flowdesk/contracts';
import { SsrfPolicy, parseAllowlist } from '@flowdesk/service-kit';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  port: number;
  /** Base URL, e.g. http://127.0.0.1:1234 */
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export type Handler = (req: Received, res: http.ServerResponse, count: number) => void;

export async function startServer(handler: Handler, host = '127.0.0.1'): Promise<TestServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      received.push(r);
      handler(r, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    port,
    url: `http://${shown}:${port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A webhook trigger event for `workflow` as webhook-ingest publishes it, with a new event id. */
export const webhookEvent = (workflow: { id: string }, ownerId: string, payload: Record<string, unknown> = {}): TriggerEvent => ({
  eventId: `evt_${randomUUID()}`,
  workflowId: workflow.id,
  ownerId,
  source: 'webhook',
  receivedAt: new Date().toISOString(),
  payload,
  headers: {},
});

/** Order lines the Code node and expression tests compute totals and SKUs from. */
export const orderLines = () => [
  { sku: 'A', qty: 3, price: 4.5 },
  { sku: 'B', qty: 1, price: 10 },
  { sku: 'C', qty: 2, price: 0.25 },
  { sku: 'D', qty: 4, price: 1 },
];

/** A webhook trigger event with fixed ids and time, for executeWorkflow without a stack. */
export const fixedEvent = (eventId: string, payload: Record<string, unknown>, headers: Record<string, string> = {}): TriggerEvent => ({
  eventId,
  workflowId: '00000000-0000-4000-8000-000000000001',
  ownerId: '00000000-0000-4000-8000-0000000000aa',
  source: 'webhook',
  receivedAt: '2025-03-01T10:00:00.000Z',
  payload,
  headers,
});

/** An HTTP port for workflows that send nothing: any request fails the step. */
export const noHttp: HttpClient = { send: () => Promise.reject(new Error('no HTTP in this test')) };

/**
 * Runs `graph` for `event` through executeWorkflow with in-memory tasks (ids task-1, task-2, …), a
 * fixed clock and a quiet log; returns the run record and the tasks it created.
 */
export async function runInMemory(graph: WorkflowGraph, event: TriggerEvent, http: HttpClient = noHttp) {
  const tasks: CreateTaskInput[] = [];
  const record = await executeWorkflow({
    workflow: { id: event.workflowId, ownerId: event.ownerId, graph },
    event,
    ports: {
      http,
      createTask: async (_owner, input) => (tasks.push(input), { id: `task-${tasks.length}`, ...input }),
      clock: fixedClock(),
      log: silentLog,
      sandbox: inProcessSandbox,
    },
  });
  return { record, tasks };
}

/** What a test's run helper adds to executeWorkflow's input: its groups, and ports over the helper's own. */
export type RunExtras = Omit<Partial<ExecuteWorkflowInput>, 'ports'> & { ports?: Partial<RunPorts> };

export const silentLog: LogPort = { info() {}, warn() {}, error() {} };

/**
 * Runs `nodes` as one chain after the trigger (trigger → first → second …) for `event` with quiet,
 * fixed ports (clock, no real sleep: the delays asked for are returned, random 0.5, no tasks): the
 * outbound nodes' tests give their HTTP client, credentials and options.
 */
export async function runChain(
  nodes: WorkflowNode[],
  event: TriggerEvent,
  ports: Pick<RunPorts, 'http'> & Partial<RunPorts>,
  options?: ExecuteWorkflowInput['options'],
) {
  const sleeps: number[] = [];
  const record = await executeWorkflow({
    workflow: {
      id: event.workflowId,
      ownerId: event.ownerId,
      graph: { nodes, edges: [{ from: 'trigger', to: nodes[0]!.id }, ...nodes.slice(1).map((n, i) => ({ from: nodes[i]!.id, to: n.id }))] },
    },
    event,
    ports: {
      clock: () => new Date('2025-03-01T10:00:00.000Z'),
      log: silentLog,
      sandbox: inProcessSandbox,
      sleep: async (ms) => void sleeps.push(ms),
      random: () => 0.5,
      createTask: async () => ({}),
      ...ports,
    },
    ...(options ? { options } : {}),
  });
  return { record, sleeps };
}

export function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function fixedClock(): EnginePorts['clock'] {
  let t = Date.parse('2025-03-01T10:00:00.000Z');
  return () => new Date((t += 5));
}

/** The public API's paths the engine serves (runs, credentials); the rest of /api/v1 is workspace-api's. */
const ENGINE_PATH = /^\/api\/v1\/(workflows\/[^/]+\/(runs|test-step|step-tests|dry-run)|workflow-runs|credentials)/;

/**
 * Calls the public API as a user, as the console's edge would: the request goes to the service that
 * owns the path with a token for that audience. `urls` is read at each call (the servers start in
 * the suite's `before`).
 */
export function userCaller(keys: SigningKeys, urls: () => { apiUrl: string; engineUrl: string }) {
  return (userId: string, method: string, path: string, body?: unknown, scope = 'mcp:read mcp:write'): Promise<JsonAnswer> => {
    const toEngine = ENGINE_PATH.test(path);
    const token = signInternalToken(keys, { sub: userId, aud: toEngine ? 'workflow-engine' : 'workspace-api', scope, azp: 'test' });
    const { apiUrl, engineUrl } = urls();
    return callJson(`${toEngine ? engineUrl : apiUrl}${path}`, token, method, body);
  };
}

export interface EngineStackOptions {
  keys: SigningKeys;
  /** The bus on the stack's database. Default: the embedded bus, polling every 25 ms, 3 quick attempts. */
  bus?: (db: Database) => Promise<EventBus>;
  /** What a loopback receiver answers; the SSRF allowlist opens exactly it (absent: no receiver, nothing allowed). */
  receiver?: Handler;
  /** workspace-api's outbox poll (default 100 ms) and log level (default silent). */
  outboxPollMs?: number;
  apiLogLevel?: string;
  /**
   * How the engine's workspace client reaches workspace-api: over its loopback port (default, as
   * separate containers do) or in process (as the embedded start does).
   */
  workspaceTransport?: WorkspaceTransport;
}

/** The two ways the engine reaches workspace-api; the contract tests run both. */
export const WORKSPACE_TRANSPORTS = ['http', 'in-process'] as const;
export type WorkspaceTransport = (typeof WORKSPACE_TRANSPORTS)[number];

/** What a workflow engine under test runs against; `close()` stops it all (close the engines first). */
export interface EngineStack {
  /** The signing keys the stack's services trust (the engines started on it use them too). */
  keys: SigningKeys;
  testDb: TestDatabase;
  bus: EventBus;
  api: Service;
  apiUrl: string;
  /** The engine's client of workspace-api (user calls as the user, with the engine as azp). */
  workspace: WorkspaceClient;
  /** The HTTP Request node's client, SSRF guard on. */
  http: GuardedHttpClient;
  receiver: TestServer | undefined;
  close(): Promise<void>;
}

/**
 * A fresh database (PGlite, or Postgres with DATABASE_URL) with both services' migrations, a bus, a
 * real workspace-api publishing its outbox on that bus, the engine's workspace client and guarded
 * HTTP client, and optionally a loopback receiver for HTTP Request nodes: what every engine suite
 * starts before its engine.
 */
export async function startEngineStack(options: EngineStackOptions): Promise<EngineStack> {
  const { keys } = options;
  const testDb = await createTestDatabase();
  await migrateWorkspace(testDb.db);
  await migrateEngine(testDb.db);
  const bus = await (
    options.bus ?? ((db) => createEmbeddedBus(db, { pollIntervalMs: 25, retry: { maxAttempts: 3, initialBackoffMs: 50, maxBackoffMs: 200 } }))
  )(testDb.db);
  const api = await buildWorkspaceApi({
    db: testDb.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    webhookSecretKey: randomBytes(32),
    publicBaseUrl: 'http://flowdesk.test',
    logLevel: options.apiLogLevel ?? 'silent',
    events: bus,
    outboxPollMs: options.outboxPollMs ?? 100,
  });
  const apiUrl = await listen(api, 0);
  const workspace = workspaceClient({
    ...(options.workspaceTransport === 'in-process' ? { workspaceApi: api } : { workspaceApiUrl: apiUrl }),
    userToken: async (id) => signInternalToken(keys, { sub: id, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp: 'workflow-engine' }),
    serviceToken: async () => signInternalToken(keys, { sub: 'svc:workflow-engine', aud: 'workspace-api', scope: 'internal', azp: 'workflow-engine' }),
  });
  const receiver = options.receiver ? await startServer(options.receiver) : undefined;
  const guarded = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist(receiver ? `127.0.0.1:${receiver.port}` : '')) });
  return {
    keys,
    testDb,
    bus,
    api,
    apiUrl,
    workspace,
    http: guarded,
    receiver,
    async close() {
      await bus.close();
      await guarded.close();
      await workspace.close();
      await api.close();
      await receiver?.close();
      await testDb.close();
    },
  };
}

/** An engine started on a stack, listening on a loopback port. */
export interface EngineUnderTest {
  app: Service;
  url: string;
}

/**
 * A workflow engine on `stack` (its bus, database, keys, guarded HTTP client and workspace client;
 * quiet; public base URL http://flowdesk.test; its own definitions group), listening on a loopback
 * port. `extra` adds or overrides options (retryParkMs, waits, workflowConcurrency, …). Close its
 * `app` before the stack.
 */
export async function startEngineOn(stack: EngineStack, extra: Partial<WorkflowEngineDeps> = {}): Promise<EngineUnderTest> {
  const app = await buildApp({
    bus: stack.bus,
    db: stack.testDb.db,
    jwtPublicKeyPem: stack.keys.publicKeyPem,
    http: stack.http,
    workspace: stack.workspace,
    logLevel: 'silent',
    publicBaseUrl: 'http://flowdesk.test',
    definitionsGroup: `engine-test-${randomUUID()}`,
    ...extra,
  });
  return { app, url: await listen(app, 0) };
}

/** Statuses a run ends in. */
export const FINISHED_STATUSES = ['succeeded', 'failed', 'skipped', 'cancelled'];

/**
 * The runs API as a user (a `userCaller`): start a run now, read one, and wait until one parked or
 * finished (a failed start or read fails the test).
 */
export function runsApi(call: ReturnType<typeof userCaller>) {
  const getRun = async (owner: string, id: string) => (await call(owner, 'GET', `/api/v1/workflow-runs/${id}`)).body;
  return {
    /** Run now (202) with `payload`; the queued run. */
    runNow: async (owner: string, wf: { id: string }, payload: Record<string, unknown>) => {
      const res = await call(owner, 'POST', `/api/v1/workflows/${wf.id}/runs`, { payload });
      if (res.status !== 202) throw new Error(`run now answered ${res.status}: ${res.text}`);
      return res.body as { id: string };
    },
    getRun,
    /** The run once it is `waiting` (parked). */
    waiting: (owner: string, id: string) =>
      until('the run parked', async () => {
        const r = await getRun(owner, id);
        return r.status === 'waiting' ? r : undefined;
      }),
    /** The run once it finished (any of FINISHED_STATUSES). */
    finished: (owner: string, id: string, timeoutMs?: number) =>
      until(
        'the run finished',
        async () => {
          const r = await getRun(owner, id);
          return FINISHED_STATUSES.includes(r.status) ? r : undefined;
        },
        timeoutMs,
      ),
  };
}
