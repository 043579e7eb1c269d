import Type, { type Static } from 'typebox';
import { StringEnum } from './common.ts';

/** Every error any service answers with: a stable machine code and a sentence for people. */
export const ErrorCode = StringEnum([
  'bad_request',
  'validation_failed',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'too_many_requests',
  'internal_error',
  'unavailable',
]);
export type ErrorCode = Static<typeof ErrorCode>;

export const ErrorBody = Type.Object(
  {
    error: ErrorCode,
    message: Type.String(),
  },
  { $id: 'ErrorBody', description: 'The error body of every 4xx and 5xx: a code in `error`, a sentence in `message`.' },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const HTTP_STATUS_OF: Record<ErrorCode, number> = {
  bad_request: 400,
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  /** Login throttling (wrong passwords): wait Retry-After seconds. */
  too_many_requests: 429,
  internal_error: 500,
  unavailable: 503,
};

/** Thrown by handlers and domain code; the service kit turns it into status + ErrorBody. */
export class HttpError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = HTTP_STATUS_OF[code];
  }
  toBody(): ErrorBody {
    return { error: this.code, message: this.message };
  }
}

export const notFound = (what: string) => new HttpError('not_found', `${what} not found`);
