/** Errors the engine's domain raises; their messages are shown to users on the run's steps. */

// Outbound HTTP's errors live with the guarded client in service-kit (auth fetches client metadata documents through it too).
export { findCause, NetworkError, RequestRefusedError, RequestTimeoutError, SsrfBlockedError } from '@flowdesk/service-kit';

/** A node failed; `output` (e.g. the 500 response) is still recorded on the step. */
export class NodeFailedError extends Error {
  override readonly name: string = 'NodeFailedError';
  constructor(
    message: string,
    readonly output: unknown = null,
  ) {
    super(message);
  }
}

/**
 * A node failed on an HTTP answer (status 400 or more): the retry policy tells 5xx and 429 from the
 * rest by `status`, and waits `Retry-After` (the header as received) before repeating a 429 or 503.
 */
export class HttpStatusError extends NodeFailedError {
  override readonly name = 'HttpStatusError';
  constructor(
    message: string,
    readonly status: number,
    output: unknown = null,
    readonly retryAfter?: string,
  ) {
    super(message, output);
  }
}
