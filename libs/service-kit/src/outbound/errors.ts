/** Errors of outbound HTTP through the SSRF guard; their messages are shown to users (a run's step, an OAuth error page). */

/** The SSRF guard refused a destination. Never retried: the answer will not change. */
export class SsrfBlockedError extends Error {
  override readonly name = 'SsrfBlockedError';
  readonly code = 'ssrf_blocked';
}

/** A URL, scheme or redirect the HTTP client will not follow. Never retried. */
export class RequestRefusedError extends Error {
  override readonly name = 'RequestRefusedError';
  readonly code = 'request_refused';
}

/** The connection failed or broke (refused, reset, DNS failure). Retried for idempotent methods. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  readonly code = 'network_error';
}

/** No complete response within the request's timeout. Retried for idempotent methods. */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
  readonly code = 'timeout';
}

/** Finds an error of the given class anywhere in a `cause` chain (undici wraps connector errors). */
export function findCause<T extends Error>(err: unknown, type: abstract new (...args: never[]) => T): T | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof type) return e;
  }
  return null;
}
