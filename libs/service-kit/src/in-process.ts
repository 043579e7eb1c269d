import type { FastifyInstance } from 'fastify';
import { injectTraceHeaders } from '@flowdesk/telemetry';

/**
 * One call of an internal client (the engine's workspace client), as it goes over either transport:
 * a JSON body in, a status and the answer's text out.
 */
export interface InternalCall {
  method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
  /** Path and query, e.g. `/internal/v1/tasks/batch`. */
  path: string;
  headers: Record<string, string>;
  /** The JSON body, already serialised (the same bytes the HTTP transport sends). */
  body?: string;
  /** The caller's abort (a run's time limit): the call's promise rejects with its reason. */
  signal?: AbortSignal;
  /** How long to wait for the answer (the HTTP transport's headers and body timeout). */
  timeoutMs: number;
}

export interface InternalAnswer {
  status: number;
  text: string;
}

/** A service in the same process, reached without a socket: what `callInProcess` needs of its fastify app. */
export type InProcessService = Pick<FastifyInstance, 'inject'>;

export class InProcessTimeoutError extends Error {
  constructor(
    readonly path: string,
    timeoutMs: number,
  ) {
    super(`${path}: no answer in process within ${timeoutMs} ms`);
    this.name = 'InProcessTimeoutError';
  }
}

/**
 * The in-process transport of the embedded start (docs/development.md, "In-process hops"): the call
 * goes through the target service's own request handling — its onRequest hooks (the internal token
 * is verified as over HTTP), schema validation of params, query and body, the handler, response
 * serialisation, its error shape — by fastify's `inject` (light-my-request), with no socket, no HTTP
 * parser and no connection pool. The body is handed over as the string the client built; the
 * answer comes back as the string the service serialised. Chosen over loopback HTTP by measurement
 * (bench/in-process-hop.ts, docs/performance.md). `validate: false` skips light-my-request's own
 * check of these options (an Ajv run per call), which are built here.
 */
export function callInProcess(app: InProcessService, call: InternalCall): Promise<InternalAnswer> {
  const { signal } = call;
  signal?.throwIfAborted();
  return new Promise<InternalAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (err: unknown, answer?: InternalAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (answer) resolve(answer);
      else reject(err);
    };
    // As over HTTP: the caller stops waiting; a call already under way may still complete.
    const onAbort = () => finish(signal!.reason);
    const timer = setTimeout(() => finish(new InProcessTimeoutError(call.path, call.timeoutMs)), call.timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    app.inject(
      {
        method: call.method,
        url: call.path,
        // The caller's trace goes on as over HTTP (where undici's instrumentation adds it): the
        // service's server span is a child of the caller's span (docs/observability.md).
        headers: injectTraceHeaders(call.headers)!,
        ...(call.body === undefined ? {} : { payload: call.body }),
        validate: false,
      },
      (err, res) => (err ? finish(err) : finish(undefined, { status: res!.statusCode, text: res!.payload })),
    );
  });
}
