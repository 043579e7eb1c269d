/** Errors the engine's domain raises; their messages are shown to users on the run's steps. */

// Outbound HTTP's errors live with the guarded client in service-kit (auth fetches client metadata documents through it too).
export { findCause, NetworkError, RequestRefusedError, RequestTimeoutError, SsrfBlockedError } from '@flowdesk/service-kit';

/** A node failed; `output` (e.g. the 500 response) is still recorded on the step. */
export class NodeFailedError extends Error {
  override readonly name = 'NodeFailedError';
  constructor(
    message: string,
    readonly output: unknown = null,
  ) {
    super(message);
  }
}
