/**
 * The engine domain's ports: everything it needs from the outside world, as small interfaces.
 * Adapters (the guarded undici client, the workspace-api client, the bus consumer) implement them;
 * tests pass fakes.
 */
import type { CreateTask } from '@flowdesk/contracts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface OutboundRequest {
  method: HttpMethod;
  url: string;
  headers: Record<string, string>;
  /**
   * Names (any case) of headers whose value came from a credential (`{{credentials.<name>}}`):
   * sent to the request's own origin only, dropped when a redirect leaves it, whatever the name.
   */
  credentialHeaders?: readonly string[];
  body?: string;
  /** For the whole exchange: every redirect hop and the body read. */
  timeoutMs: number;
  /** Bytes of response body kept; the rest is discarded unread and `truncated` is set. */
  maxBodyBytes: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Uint8Array;
  truncated: boolean;
  /** The URL that answered, after redirects. */
  url: string;
}

/**
 * Sends one HTTP exchange, following redirects. Throws SsrfBlockedError, RequestRefusedError,
 * NetworkError or RequestTimeoutError (domain/errors.ts); any status is a response, not an error.
 */
export interface HttpClient {
  send(request: OutboundRequest): Promise<OutboundResponse>;
}

/** What the Create Task node sends: the subset of the task contract it fills. */
export type CreateTaskInput = Pick<CreateTask, 'title' | 'projectId' | 'dueDate' | 'notes'>;

/** Creates a task as `ownerId` (the adapter calls workspace-api as the workflow's owner). */
export type CreateTaskPort = (ownerId: string, input: CreateTaskInput, opts: { signal: AbortSignal }) => Promise<Record<string, unknown>>;

/** pino-compatible subset. */
export interface LogPort {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export type Clock = () => Date;

export interface EnginePorts {
  http: HttpClient;
  createTask: CreateTaskPort;
  clock: Clock;
  log: LogPort;
}
