import { Pool, errors } from 'undici';
import { UpstreamError, type Query, type WorkspaceApi } from '../domain/ports.ts';

const RETRYABLE_STATUS = new Set([502, 503, 504]);
const RETRY_DELAYS_MS = [25, 100];

/**
 * workspace-api over one keep-alive connection pool. Reads (GET) are retried on connection errors
 * and 502/503/504, twice with a short pause; writes never are (a retried POST could create twice).
 */
/** The runs API's paths: served by the workflow engine, the owner of runs (docs/workflow-engine.md). */
const RUNS_PATH = /^\/(?:workflows\/[^/]+\/runs|workflow-runs)(?:\/|$)/;

export class WorkspaceClient {
  private readonly pool: Pool;
  private readonly enginePool: Pool | undefined;
  /** `engineUrl`: where the runs API is (the workflow engine); without it runs go to workspace-api's URL too. */
  constructor(url: string, opts: { connections?: number; timeoutMs?: number; engineUrl?: string } = {}) {
    const poolOptions = {
      connections: opts.connections ?? 32,
      keepAliveTimeout: 30_000,
      headersTimeout: opts.timeoutMs ?? 10_000,
      bodyTimeout: opts.timeoutMs ?? 10_000,
      connectTimeout: 2_000,
    };
    this.pool = new Pool(url, poolOptions);
    this.enginePool = opts.engineUrl ? new Pool(opts.engineUrl, { ...poolOptions, connections: 8 }) : undefined;
  }

  /**
   * Calls made with this internal token act as its user. Reads of runs go to the workflow engine with
   * a token for its audience, obtained on first use (`engineToken`).
   */
  as(internalToken: string, requestId?: string, engineToken?: () => Promise<string>): WorkspaceApi {
    const call = (method: string, path: string, body?: unknown) => this.request(this.pool, internalToken, method, path, body, requestId);
    const get = async (path: string, query?: Query) => {
      if (this.enginePool && engineToken && RUNS_PATH.test(path)) {
        return this.request(this.enginePool, await engineToken(), 'GET', `/api/v1${path}${toQueryString(query)}`, undefined, requestId);
      }
      return call('GET', `/api/v1${path}${toQueryString(query)}`);
    };
    return {
      get: (path, query) => get(path, query) as never,
      post: async (path, body) => {
        // Run now (POST /workflows/:id/runs) and rerun are the engine's, as the runs reads are.
        if (this.enginePool && engineToken && RUNS_PATH.test(path)) {
          return this.request(this.enginePool, await engineToken(), 'POST', `/api/v1${path}`, body ?? {}, requestId) as never;
        }
        return call('POST', `/api/v1${path}`, body ?? {}) as never;
      },
      patch: (path, body) => call('PATCH', `/api/v1${path}`, body) as never,
      delete: async (path) => void (await call('DELETE', `/api/v1${path}`)),
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.enginePool?.close()]);
  }

  private async request(pool: Pool, token: string, method: string, path: string, body: unknown, requestId: string | undefined): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (requestId) headers['x-request-id'] = requestId;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const attempts = method === 'GET' ? RETRY_DELAYS_MS.length + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await pool.request({ method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        const text = await res.body.text();
        if (RETRYABLE_STATUS.has(res.statusCode) && attempt < attempts) {
          await pause(RETRY_DELAYS_MS[attempt - 1]!);
          continue;
        }
        const parsed = text ? safeJson(text) : undefined;
        if (res.statusCode >= 400) {
          const err = parsed as { error?: string; message?: string } | undefined;
          throw new UpstreamError(res.statusCode, err?.error ?? 'upstream_error', err?.message ?? `workspace-api answered ${res.statusCode}`);
        }
        return parsed;
      } catch (err) {
        if (err instanceof UpstreamError) throw err;
        const transient = err instanceof errors.UndiciError || (err as NodeJS.ErrnoException).code === 'ECONNRESET';
        if (transient && attempt < attempts) {
          await pause(RETRY_DELAYS_MS[attempt - 1]!);
          continue;
        }
        throw new UpstreamError(503, 'unavailable', 'The workspace service is unavailable; try again shortly');
      }
    }
  }
}

function toQueryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const x of v) params.append(k, String(x));
    else params.append(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
