/**
 * The engine domain's ports: everything it needs from the outside world, as small interfaces.
 * Adapters (the guarded undici client, the workspace-api client, the run and schedule stores, the
 * metrics) implement them and app.ts wires them in; tests pass fakes. domain/ never imports adapters/
 * (eslint.config.js refuses it).
 */
import type {
  CreateTask,
  EngineCreateKind,
  ListTasksQuery,
  MissedTicks,
  UpdateTask,
  RunStatus,
  RunStep,
  TriggerEvent,
  TriggerOrigin,
} from '@flowdesk/contracts';
import type { Sandbox } from './sandbox-port.ts';
import type { StepCheckpoint } from './types.ts';

// The sandbox port (Code steps, sandboxed expressions) has a file of its own, with its errors and limits.
export type { CodeJob, ExpressionsJob, Sandbox, SandboxScope } from './sandbox-port.ts';

// The outbound HTTP port is service-kit's (the guarded client lives there, shared with auth).
import type { HttpClient } from '@flowdesk/service-kit';
export type { HttpClient, HttpMethod, OutboundRequest, OutboundResponse } from '@flowdesk/service-kit';

/** What the Create Task node sends: the subset of the task contract it fills. */
export type CreateTaskInput = Pick<CreateTask, 'title' | 'projectId' | 'dueDate' | 'notes' | 'priority' | 'tags'>;

/** What Find Tasks asks for: the public task list's filters (GET /api/v1/tasks). */
export type FindTasksInput = Pick<ListTasksQuery, 'projectId' | 'status' | 'tag' | 'dueBefore' | 'overdue' | 'q' | 'limit' | 'cursor'>;

/**
 * The workspace nodes besides Create Task (Update Task, Find Tasks, Get Task, Get Project, Create Note, Create
 * Calendar Entry, Add Comment), each as `ownerId` under row-level security. `create` takes the public
 * create body of its kind; with an idempotency key, the same key again answers the row created first.
 */
export interface WorkspaceNodesPort {
  updateTask(ownerId: string, taskId: string, changes: UpdateTask, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** One page of GET /api/v1/tasks (at most 100); `nextCursor` null on the last. */
  findTasks(ownerId: string, query: FindTasksInput, signal: AbortSignal): Promise<{ items: Record<string, unknown>[]; nextCursor: string | null }>;
  getTask(ownerId: string, taskId: string, signal: AbortSignal): Promise<Record<string, unknown>>;
  getProject(ownerId: string, projectId: string, signal: AbortSignal): Promise<Record<string, unknown>>;
  create(
    ownerId: string,
    kind: EngineCreateKind,
    body: Record<string, unknown>,
    /** `origin`: the run's workflow and chain depth, kept on a note or calendar entry (the loop guard). */
    opts: { signal: AbortSignal; idempotencyKey?: string; origin?: TriggerOrigin },
  ): Promise<Record<string, unknown>>;
}

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

/** An SMTP server as a Send Email node reaches it (from its smtp credential). */
export interface MailServer {
  host: string;
  port: number;
  security: 'tls' | 'starttls' | 'none';
  user?: string;
  password?: string;
}

export interface MailMessage {
  from: string;
  to: string;
  cc?: string;
  bcc?: string;
  replyTo?: string;
  subject: string;
  text?: string;
  html?: string;
  attachments: { filename: string; content: Buffer; contentType?: string }[];
}

export interface MailReceipt {
  messageId: string;
  accepted: string[];
  rejected: string[];
}

/**
 * Sends one mail through an SMTP server (adapters/smtp-mailer.ts, over nodemailer): the server's
 * address passes the SSRF guard first, as every outbound connection's does. Rejects with NetworkError
 * (connection), RequestTimeoutError, SsrfBlockedError or NodeFailedError (a refused login, recipients).
 */
export interface MailSender {
  send(server: MailServer, message: MailMessage, options: { timeoutMs: number; signal: AbortSignal }): Promise<MailReceipt>;
}

export interface EnginePorts {
  http: HttpClient;
  /** The Send Email node's SMTP client; absent (unit tests), the node fails with a clear error. */
  mail?: MailSender;
  createTask: CreateTaskPort;
  /** The other workspace nodes; absent (executor unit tests), they fail with a clear error. */
  workspace?: WorkspaceNodesPort;
  clock: Clock;
  log: LogPort;
  metrics?: RunMetrics;
  /**
   * Every delay of a run (a retry's backoff) goes through here; rejects with the signal's reason when
   * it aborts (the run's time limit, a cancel). Default: a timer in memory (domain/retry.ts).
   */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Jitter's randomness in [0, 1); default Math.random. */
  random?: () => number;
  /**
   * Starts another workflow of the run's owner (the Run workflow node): refuses a missing workflow,
   * another owner's, and a chain deeper than RUN_WORKFLOW_MAX_DEPTH. Absent: the node fails.
   */
  startWorkflow?: (request: StartWorkflowRequest) => Promise<{ eventId: string }>;
  /**
   * Where user work runs (Code steps, expressions that are not plain arithmetic over paths):
   * adapters/sandbox-pool.ts, a pool of worker threads with deadlines enforced from outside (unit
   * tests: adapters/code-sandbox.ts inProcessSandbox, the same work in process, unpreemptible).
   */
  sandbox: Sandbox;
  /** Delivery ids Verify signature accepted (refuseReplays). Absent: such a node fails with a clear error. */
  deliveries?: DeliveryLedger;
}

/**
 * What one run reaches besides the engine's ports: its own dependencies, built per run by its caller
 * (process-trigger.ts, step-test.ts). The executor receives these; node handlers see EnginePorts.
 */
export interface RunPorts extends EnginePorts {
  /** Plaintext of the credentials the graph refers to, by name (docs/credentials.md). */
  credentials?: ReadonlyMap<string, CredentialValue>;
  /** The answer to the webhook's caller, for Respond nodes (NodeContext.respond; process-trigger.ts). */
  respond?: RespondPort;
  /** The resume link of the `resume` Wait `nodeId` of this run, for {{wait.<nodeId>.resumeUrl}} (absent: no server key). */
  resumeUrl?: (nodeId: string) => string;
  /**
   * Stores executed steps durably (batched across runs). Called before a side-effecting step when an
   * earlier side effect of the run is not stored yet and a repeat could make it again (an action not
   * `exactlyOnce`), so a resumed run never repeats it. A rejection ends the run unfinished
   * (executeWorkflow rejects): the bus delivers the event again. Absent: nothing is stored (a step test).
   */
  checkpoint?: (steps: StepCheckpoint[]) => Promise<void>;
}

/**
 * The run's answer to the webhook's caller (a Respond node): `sent` for the first answer of a run,
 * `earlier` when one was sent before, `nobody-waits` when no caller waits for this run's answer.
 */
export type RespondPort = (answer: { status: number; headers: Record<string, string>; body: unknown }) => Promise<'sent' | 'earlier' | 'nobody-waits'>;

/** The delivery ids a workflow's Verify signature nodes accepted, each until its window ends (adapters/delivery-store.ts). */
export interface DeliveryLedger {
  /** Records `deliveryId` for this workflow until `until`; false when it is already recorded and its window has not ended (a repeat). */
  claim(workflowId: string, deliveryId: string, now: Date, until: Date): Promise<boolean>;
}

export interface StartWorkflowRequest {
  workflowId: string;
  payload: Record<string, unknown>;
  /** The parent waits: the child's outcome resumes the parent's step `nodeId`. */
  wait: boolean;
  nodeId: string;
  /** The step's idempotency key: the child's event id is derived from it. */
  idempotencyKey: string;
}

/**
 * The run's counters and timings (docs/observability.md). adapters/telemetry.ts implements it with the
 * engine's Prometheus metrics; left out (unit tests of the executor), nothing is counted.
 */
export interface RunMetrics {
  runStarted(): void;
  runFinished(status: RunStatus, seconds: number): void;
  nodeFinished(type: string, status: RunStep['status'], seconds: number): void;
  ssrfRefused(): void;
}

/** One write of a run: its claim (status running), or its outcome. */
export interface RunWrite {
  ownerId: string;
  workflowId: string;
  eventId: string;
  status: RunStatus;
  /** Sent with the claim (or with an outcome that had no claim); omitted keeps the stored one. */
  payload?: Record<string, unknown>;
  steps?: RunStep[];
  warnings?: string[];
  error?: string | null;
  startedAt?: string | null;
  finishedAt?: string | null;
  /** The run's W3C trace id (docs/observability.md); omitted keeps the stored one. */
  traceId?: string;
  /** The workflow version being run (WorkflowDefinition.definitionVersion), sent with a claim; omitted keeps the stored one. */
  workflowVersion?: number;
  /** What started the run (TriggerEvent.source), taken when the row is created; default webhook. */
  triggerType?: TriggerEvent['source'];
  /** With a final status: delete the run's checkpoints (engine.run_step) in the same statement. */
  dropSteps?: boolean;
  /** A claim that wakes a parked run (its TriggerEvent.resume): it may take a `waiting` run. */
  wake?: boolean;
  /** With status `waiting`: the run's timer / resume, stored in engine.run_wait in the same statement. */
  wait?: WaitWrite;
}

/** A parked run's wait (engine.run_wait): what wakes it, and the event that resumes it. */
export interface WaitWrite {
  nodeId: string;
  /** When the timer fires (ISO), or null: only a resume wakes it. */
  until: string | null;
  resumable: boolean;
  /** The resume URL's id, and the SHA-256 (hex) of its secret; null when not resumable. */
  waitId: string;
  secretHash: string | null;
  /** The run's trigger event, republished with `resume` to wake it. */
  event: TriggerEvent;
}

/** What a claim (a write with status running) found: a new run, a resumed one (claimed before), or a finished one. */
export type ClaimResult = 'new' | 'resumed' | false;

/** The run a checkpoint belongs to. */
export interface RunKey {
  ownerId: string;
  workflowId: string;
  eventId: string;
}

/** Where runs are recorded (adapters/run-store.ts, the engine's own schema). */
export interface RunRecorder {
  /**
   * True when a write failed because of the data it carries, not the store (writing the same data
   * again can never succeed); anything else (the database unreachable) may, so the bus retries it.
   */
  isUnstorable(err: unknown): boolean;
  /**
   * Records a run (batched). Resolves false when the run had already finished (a finished run is never
   * changed: for a claim, the event was handled before); else, for a claim, 'new', or 'resumed' when
   * an engine claimed it before (its checkpoints are reused).
   */
  claim(write: RunWrite): Promise<ClaimResult>;
  /** Stores executed steps of a running run (batched); resolves once committed. */
  checkpoint(run: RunKey, steps: StepCheckpoint[]): Promise<void>;
  /** The checkpoints of one run, by checkpointKey (node id; `<id>#<item>` in a loop body; read only when a claim answered 'resumed'). */
  checkpoints(run: RunKey): Promise<Map<string, StepCheckpoint>>;
  /** Keeps the steps a run cancelled while it ran did execute (its row, already finished as cancelled, is not changed otherwise). */
  keepCancelledSteps(write: RunWrite): Promise<void>;
  /** The run an event started (its id for an error workflow's payload), or null. */
  getByEvent(
    userId: string,
    workflowId: string,
    eventId: string,
  ): Promise<{ id: string; status?: RunStatus; steps?: readonly RunStep[]; error?: string | null } | null>;
}

/** A typed credential as a run uses it: its type (libs/contracts credential-types.ts) and fields, secret ones in the clear. */
export interface TypedCredential {
  type: string;
  fields: Readonly<Record<string, string>>;
  /** Why it cannot be used now (an OAuth2 credential that needs reconnecting): a step that names it fails with this. */
  problem?: string;
  /**
   * An OAuth2 credential's new fields after the server refused the access token `refused` (a 401):
   * refreshed once across the engine's replicas (docs/credentials.md, "OAuth2"). Rejects with the reason.
   */
  refresh?: (refused: string) => Promise<Readonly<Record<string, string>>>;
}
/** A resolved credential: a `secret` credential's value, or a typed one (docs/credentials.md, "Types"). */
export type CredentialValue = string | TypedCredential;

/** The owner's credentials, read only for a graph that refers to some (docs/credentials.md). */
export interface CredentialResolver {
  resolve(ownerId: string, names: readonly string[]): Promise<Map<string, CredentialValue>>;
}

/** The workspace writes of a run, as the workflow's owner (adapters/workspace-client.ts). */
export interface WorkspaceWrites {
  setSamplePayload(ownerId: string, workflowId: string, payload: Record<string, unknown>): Promise<void>;
  /** `origin`: the run's workflow and chain depth, kept with the task (the loop guard, docs/triggers.md). */
  /** With an idempotency key, a second call with the same key answers the task the first created. */
  createTask(ownerId: string, input: CreateTaskInput, signal?: AbortSignal, origin?: TriggerOrigin, idempotencyKey?: string): Promise<Record<string, unknown>>;
  /** The other workspace nodes' calls (optional so fakes that only create tasks still fit). */
  nodes?: WorkspaceNodesPort;
}

/** A schedule as the engine keeps it (engine.schedule, migration 20261231000000_triggers). */
export interface ScheduleRow {
  workflowId: string;
  ownerId: string;
  cron: string;
  timezone: string;
  missed: MissedTicks;
  nextTick: Date;
}

/** The settings of one workflow's schedule at one definition version; `enabled: false` records that it has none. */
export interface ScheduleState {
  workflowId: string;
  ownerId: string;
  version: number;
  enabled: boolean;
  cron: string;
  timezone: string;
  missed: MissedTicks;
  /** The first tick after now: used when the schedule is new or its cron or zone changed. */
  nextTick: Date;
}

/** A due tick moved on: the new next tick, and the event to publish when the tick fires a run. */
export interface TickClaim {
  workflowId: string;
  /** The next_tick this replica read: the compare-and-set holds only if nobody moved it since. */
  due: Date;
  next: Date;
  lastTick: Date | null;
  event: TriggerEvent | null;
}

/** Where the scheduler keeps its schedules and claims their ticks (adapters/schedule-store.ts). */
export interface ScheduleStorePort {
  /** Records a definition's schedule; an older version than the stored one changes nothing. */
  sync(s: ScheduleState): Promise<void>;
  /** Enabled schedules whose next tick is due at `now`, oldest first. */
  due(now: Date, limit: number): Promise<ScheduleRow[]>;
  /** Moves due ticks on, each only if its next_tick is still the one read; returns the workflow ids this replica claimed. */
  claim(claims: TickClaim[], pendingUntil: Date): Promise<Set<string>>;
  /** The claimed ticks' events are published: no longer pending. */
  published(workflowIds: string[]): Promise<void>;
  /** Pending events whose claimer did not publish them in time, taken over by this replica until `leaseUntil`. */
  takeOverStale(now: Date, leaseUntil: Date, limit: number): Promise<{ workflowId: string; event: TriggerEvent }[]>;
  /** The earliest time anything is due (an enabled schedule's next tick, a pending event's lease); null: nothing. */
  nextDue(): Promise<Date | null>;
}

/** A due wake this replica claimed: the run's trigger event, and how it is woken. */
export interface DueWake {
  waitId: string;
  /** The claim's lease (fire_at while claimed): published(), renew() and release() match on it. */
  leaseUntil: Date;
  event: TriggerEvent;
  resume: NonNullable<TriggerEvent['resume']>;
}

/** Where parked runs' timers are kept (adapters/wait-store.ts, engine.run_wait). */
export interface WaitStorePort {
  claimDue(now: Date, leaseUntil: Date, limit: number): Promise<DueWake[]>;
  /** The handled wakes' rows left (a run that did not finish or park again): no longer due. */
  published(wakes: readonly Pick<DueWake, 'waitId' | 'leaseUntil'>[]): Promise<void>;
  /** The earliest fire_at, or null. */
  nextDue(): Promise<Date | null>;
  /** Moves the leases still ours to `leaseUntil` (and updates each wake's leaseUntil). */
  renew(wakes: readonly Pick<DueWake, 'waitId' | 'leaseUntil'>[], leaseUntil: Date): Promise<void>;
  /** Claimed wakes not started (the replica stops): due again at `now`. */
  release(wakes: readonly Pick<DueWake, 'waitId' | 'leaseUntil'>[], now: Date): Promise<void>;
}
