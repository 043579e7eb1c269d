/**
 * The engine domain's ports: everything it needs from the outside world, as small interfaces.
 * Adapters (the guarded undici client, the workspace-api client, the bus consumer) implement them;
 * tests pass fakes.
 */
import type { CreateTask } from '@flowdesk/contracts';

// The outbound HTTP port is service-kit's (the guarded client lives there, shared with auth).
import type { HttpClient } from '@flowdesk/service-kit';
export type { HttpClient, HttpMethod, OutboundRequest, OutboundResponse } from '@flowdesk/service-kit';

/** What the Create Task node sends: the subset of the task contract it fills. */
export type CreateTaskInput = Pick<CreateTask, 'title' | 'projectId' | 'dueDate' | 'notes'>;

/**
 * Creates a task as `ownerId` (the adapter calls workspace-api as the workflow's owner). With an
 * idempotency key, a second call with the same key answers the task the first one created.
 */
export type CreateTaskPort = (
  ownerId: string,
  input: CreateTaskInput,
  opts: { signal: AbortSignal; idempotencyKey?: string },
) => Promise<Record<string, unknown>>;

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
