import { Pool } from 'undici';
import {
  CREATE_TASK_BATCH_MAX,
  ENGINE_CREATE_BATCH_MAX,
  type CreateTaskBatchResult,
  type EngineCreateBatchResult,
  type EngineCreateKind,
  type TriggerOrigin,
  type WorkflowDefinition,
  type WorkflowDefinitionPage,
} from '@flowdesk/contracts';
import { callInProcess, type InProcessService, type ServiceTokenSource, type UserTokenSource } from '@flowdesk/service-kit';
import type { DefinitionSource } from '../domain/definitions.ts';
import type { CreateTaskInput, WorkspaceNodesPort, WorkspaceWrites } from '../domain/ports.ts';

/**
 * The engine's view of workspace-api: the workspace writes of a run, as the workflow's owner (a token
 * obtained by user id), and the definitions' cold start as the engine itself. Runs are not here:
 * they are the engine's own data (adapters/run-store.ts).
 */
export interface WorkspaceClient extends WorkspaceWrites {
  nodes: WorkspaceNodesPort;
  /** Present when a service token source was given. */
  definitions?: DefinitionSource;
  close(): Promise<void>;
}

export class WorkspaceApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'WorkspaceApiError';
  }
}

interface PendingCreate {
  kind: EngineCreateKind;
  body: Record<string, unknown>;
  idempotencyKey?: string;
  origin?: TriggerOrigin;
  resolve: (row: Record<string, unknown>) => void;
  reject: (err: unknown) => void;
}

/**
 * Per-owner batching: what is asked for during one event-loop turn, and while that owner's previous
 * batches (up to `maxInFlight`) are in flight, goes to `send` together (at most `max` at once).
 */
function ownerBatcher<P>(max: number, maxInFlight: number, send: (ownerId: string, batch: P[]) => Promise<void>) {
  const owners = new Map<string, { queue: P[]; inFlight: number; scheduled: boolean }>();
  const schedule = (ownerId: string) => {
    const o = owners.get(ownerId)!;
    if (o.scheduled || o.inFlight >= maxInFlight || o.queue.length === 0) return;
    o.scheduled = true;
    setImmediate(() => {
      o.scheduled = false;
      if (o.inFlight >= maxInFlight || o.queue.length === 0) return;
      const batch = o.queue.splice(0, max);
      o.inFlight++;
      void send(ownerId, batch).finally(() => {
        o.inFlight--;
        if (o.queue.length > 0) schedule(ownerId);
        else if (o.inFlight === 0) owners.delete(ownerId);
      });
    });
  };
  return (ownerId: string, pending: P) => {
    let o = owners.get(ownerId);
    if (!o) owners.set(ownerId, (o = { queue: [], inFlight: 0, scheduled: false }));
    o.queue.push(pending);
    schedule(ownerId);
  };
}

/** A promise that the run's abort rejects (the request, once sent, may still complete). */
function abortable<T>(signal: AbortSignal | undefined, start: (resolve: (v: T) => void, reject: (e: unknown) => void) => void): Promise<T> {
  signal?.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const done =
      <V>(f: (v: V) => void) =>
      (v: V) => {
        signal?.removeEventListener('abort', onAbort);
        f(v);
      };
    start(done(resolve), done(reject));
  });
}

interface PendingTask {
  input: CreateTaskInput;
  origin?: TriggerOrigin;
  idempotencyKey?: string;
  resolve: (task: Record<string, unknown>) => void;
  reject: (err: unknown) => void;
}

/**
 * Over one keep-alive undici Pool: a run's calls reuse connections instead of opening their own. Or,
 * when workspace-api runs in the same process (the embedded start), in process: `workspaceApi` is
 * its fastify app and every call goes through its routes by `callInProcess` (the same hooks, token
 * check, schema validation and serialisation, no socket). The calls, and what this client makes of
 * the answers, are the same either way; the engine's contract tests run both (test/workspace-nodes.test.ts).
 *
 * Create Task is batched per owner: the tasks asked for during one event-loop turn, and while that
 * owner's previous batch is in flight, go as one `POST /internal/v1/tasks/batch` (one multi-row
 * INSERT under the owner's row-level security in workspace-api), each run getting its own answer. A
 * workspace-api without the batch route (404 during a rolling upgrade) is called one task at a time.
 */
export function workspaceClient(
  options: {
    userToken: UserTokenSource;
    serviceToken?: ServiceTokenSource;
    timeoutMs?: number;
    /** Batches of one owner in flight at once (default 2). */
    batchesInFlight?: number;
  } & (
    | {
        /** workspace-api's base URL (its own container, or a loopback port). */
        workspaceApiUrl: string;
        /** Connections of the pool (default 32). */
        connections?: number;
        workspaceApi?: undefined;
      }
    | {
        /** workspace-api's app in this process: calls go to it in process (the embedded start). */
        workspaceApi: InProcessService;
        workspaceApiUrl?: undefined;
      }
  ),
): WorkspaceClient {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const inProcess = options.workspaceApi;
  const pool =
    options.workspaceApiUrl === undefined
      ? undefined
      : new Pool(options.workspaceApiUrl, {
          connections: options.connections ?? 32,
          keepAliveTimeout: 30_000,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          connectTimeout: 2_000,
        });
  const call = async (
    token: string,
    method: 'GET' | 'PUT' | 'POST' | 'PATCH',
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<{ status: number; json: () => Promise<unknown> }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let status: number;
    let text: string;
    if (inProcess) {
      ({ status, text } = await callInProcess(inProcess, { method, path, headers, body: payload, signal, timeoutMs }));
    } else {
      const res = await pool!.request({
        method,
        path,
        headers,
        body: payload,
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
      });
      status = res.statusCode;
      text = await res.body.text();
    }
    return { status, json: async () => (text ? (JSON.parse(text) as unknown) : undefined) };
  };
  const ok = async <T>(res: { status: number; json: () => Promise<unknown> }, what: string): Promise<T> => {
    if (res.status >= 200 && res.status < 300) return (await res.json()) as T;
    const detail = (await res.json().catch(() => ({}))) as { message?: string } | undefined;
    throw new WorkspaceApiError(res.status, `${what}: workspace-api answered ${res.status}${detail?.message ? ` (${detail.message})` : ''}`);
  };
  const serviceToken = options.serviceToken;

  const createOne = async (ownerId: string, input: CreateTaskInput, signal?: AbortSignal) =>
    ok<Record<string, unknown>>(await call(await options.userToken(ownerId), 'POST', '/api/v1/tasks', input, signal), 'creating the task');
  const maxInFlight = options.batchesInFlight ?? 2;
  let batchRoute = true;
  // One batcher per kind of write; Create Task's, the first, over its own batch route.
  const enqueueTask = ownerBatcher<PendingTask>(CREATE_TASK_BATCH_MAX, maxInFlight, (ownerId, batch) => sendBatch(ownerId, batch));
  const sendBatch = async (ownerId: string, batch: PendingTask[]): Promise<void> => {
    // A task with an origin or a key always goes through the batch route: only it takes them.
    if (!batchRoute || (batch.length === 1 && !batch[0]!.origin && !batch[0]!.idempotencyKey)) {
      await Promise.all(batch.map((p) => createOne(ownerId, p.input).then(p.resolve, p.reject)));
      return;
    }
    try {
      const res = await call(await options.userToken(ownerId), 'POST', '/internal/v1/tasks/batch', {
        tasks: batch.map((p) => p.input),
        origins: batch.map((p) => p.origin ?? null),
        ...(batch.some((p) => p.idempotencyKey) ? { idempotencyKeys: batch.map((p) => p.idempotencyKey ?? null) } : {}),
      });
      if (res.status === 404) {
        batchRoute = false; // an older workspace-api
        await sendBatch(ownerId, batch);
        return;
      }
      const { results } = await ok<CreateTaskBatchResult>(res, 'creating the tasks');
      batch.forEach((p, i) => {
        const r = results[i];
        if (r && 'task' in r) p.resolve(r.task);
        else
          p.reject(
            new WorkspaceApiError(
              r?.status ?? 502,
              `creating the task: workspace-api answered ${r?.status ?? 'nothing'}${r && 'message' in r ? ` (${r.message})` : ''}`,
            ),
          );
      });
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  };

  // Create Note / Create Calendar Entry / Add Comment of many runs of one owner: one call.
  const enqueueCreate = ownerBatcher<PendingCreate>(ENGINE_CREATE_BATCH_MAX, maxInFlight, async (ownerId, batch) => {
    try {
      const res = await call(await options.userToken(ownerId), 'POST', '/internal/v1/creates/batch', {
        items: batch.map((p) => ({
          kind: p.kind,
          body: p.body,
          ...(p.idempotencyKey ? { idempotencyKey: p.idempotencyKey } : {}),
          ...(p.origin ? { origin: p.origin } : {}),
        })),
      });
      const { results } = await ok<EngineCreateBatchResult>(res, 'creating');
      batch.forEach((p, i) => {
        const r = results[i];
        if (r && 'item' in r) p.resolve(r.item);
        else
          p.reject(
            new WorkspaceApiError(
              r?.status ?? 502,
              `creating the ${p.kind.replace('_', ' ')}: workspace-api answered ${r?.status ?? 'nothing'}${r && 'message' in r ? ` (${r.message})` : ''}`,
            ),
          );
      });
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  });
  const asOwner = async <T>(ownerId: string, method: 'GET' | 'PATCH', path: string, what: string, body: unknown, signal: AbortSignal) =>
    ok<T>(await call(await options.userToken(ownerId), method, path, body, signal), what);
  const nodes: WorkspaceNodesPort = {
    updateTask: (ownerId, taskId, changes, signal) =>
      asOwner(ownerId, 'PATCH', `/api/v1/tasks/${encodeURIComponent(taskId)}`, 'updating the task', changes, signal),
    async findTasks(ownerId, query, signal) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
      }
      const page = await asOwner<{ items: Record<string, unknown>[]; nextCursor: string | null }>(
        ownerId,
        'GET',
        `/api/v1/tasks?${q.toString()}`,
        'finding tasks',
        undefined,
        signal,
      );
      return { items: page.items, nextCursor: page.nextCursor ?? null };
    },
    getTask: (ownerId, taskId, signal) => asOwner(ownerId, 'GET', `/api/v1/tasks/${encodeURIComponent(taskId)}`, 'reading the task', undefined, signal),
    getProject: (ownerId, projectId, signal) =>
      asOwner(ownerId, 'GET', `/api/v1/projects/${encodeURIComponent(projectId)}`, 'reading the project', undefined, signal),
    create: (ownerId, kind, body, { signal, idempotencyKey, origin }) =>
      abortable(signal, (resolve, reject) =>
        enqueueCreate(ownerId, { kind, body, ...(idempotencyKey ? { idempotencyKey } : {}), ...(origin ? { origin } : {}), resolve, reject }),
      ),
  };

  return {
    nodes,
    async setSamplePayload(ownerId, workflowId, payload) {
      await ok<void>(
        await call(await options.userToken(ownerId), 'PUT', `/internal/v1/workflows/${workflowId}/sample-payload`, payload),
        'keeping the sample payload',
      );
    },
    createTask(ownerId, input, signal, origin, idempotencyKey) {
      signal?.throwIfAborted();
      return new Promise((resolve, reject) => {
        // The run gives up on abort (its time limit); a task already sent in a batch may still be created.
        const onAbort = () => reject(signal!.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        const done =
          <T>(f: (v: T) => void) =>
          (v: T) => {
            signal?.removeEventListener('abort', onAbort);
            f(v);
          };
        enqueueTask(ownerId, {
          input,
          ...(origin ? { origin } : {}),
          ...(idempotencyKey ? { idempotencyKey } : {}),
          resolve: done(resolve),
          reject: done(reject),
        });
      });
    },
    definitions: serviceToken && {
      async page(after) {
        const q = after ? `?after=${encodeURIComponent(after)}` : '';
        return ok<WorkflowDefinitionPage>(await call(await serviceToken(), 'GET', `/internal/v1/workflow-definitions${q}`), 'reading workflow definitions');
      },
      async get(workflowId) {
        const res = await call(await serviceToken(), 'GET', `/internal/v1/workflow-definitions/${encodeURIComponent(workflowId)}`);
        if (res.status === 404) return null;
        return ok<WorkflowDefinition>(res, 'reading a workflow definition');
      },
    },
    close: async () => {
      await pool?.close();
    },
  };
}
