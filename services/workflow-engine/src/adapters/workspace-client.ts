import type { RecordRun, RecordedRun, Workflow } from '@flowdesk/contracts';
import type { UserTokenSource } from '@flowdesk/service-kit';
import type { CreateTaskInput } from '../domain/ports.ts';

/** The engine's view of workspace-api: every call as the workflow's owner (a token obtained by user id). */
export interface WorkspaceClient {
  /** null when the workflow does not exist (deleted since the event was published). */
  getWorkflow(ownerId: string, workflowId: string): Promise<Workflow | null>;
  recordRun(ownerId: string, workflowId: string, eventId: string, run: RecordRun): Promise<RecordedRun>;
  setSamplePayload(ownerId: string, workflowId: string, payload: Record<string, unknown>): Promise<void>;
  createTask(ownerId: string, input: CreateTaskInput, signal?: AbortSignal): Promise<Record<string, unknown>>;
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

export function workspaceClient(options: { workspaceApiUrl: string; userToken: UserTokenSource; timeoutMs?: number }): WorkspaceClient {
  const call = async (ownerId: string, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> => {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
    const res = await fetch(new URL(path, options.workspaceApiUrl), {
      method,
      headers: { authorization: `Bearer ${await options.userToken(ownerId)}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    return res;
  };
  const ok = async <T>(res: Response, what: string): Promise<T> => {
    if (res.ok) return (res.status === 204 ? undefined : await res.json()) as T;
    const detail = (await res.json().catch(() => ({}))) as { message?: string };
    throw new WorkspaceApiError(res.status, `${what}: workspace-api answered ${res.status}${detail.message ? ` (${detail.message})` : ''}`);
  };
  return {
    async getWorkflow(ownerId, workflowId) {
      const res = await call(ownerId, 'GET', `/api/v1/workflows/${workflowId}`);
      if (res.status === 404) return null;
      return ok<Workflow>(res, 'reading the workflow');
    },
    async recordRun(ownerId, workflowId, eventId, run) {
      return ok<RecordedRun>(await call(ownerId, 'PUT', `/internal/v1/workflows/${workflowId}/runs/${encodeURIComponent(eventId)}`, run), 'recording the run');
    },
    async setSamplePayload(ownerId, workflowId, payload) {
      await ok<void>(await call(ownerId, 'PUT', `/internal/v1/workflows/${workflowId}/sample-payload`, payload), 'keeping the sample payload');
    },
    async createTask(ownerId, input, signal) {
      return ok<Record<string, unknown>>(await call(ownerId, 'POST', '/api/v1/tasks', input, signal), 'creating the task');
    },
  };
}
