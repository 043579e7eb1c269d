import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { WEBHOOK_REPLY_MAX_BODY, type ErrorPayload, type TriggerEvent, type TriggerOrigin, type WebhookReply } from '@flowdesk/contracts';
import { NodeFailedError } from './errors.ts';
import { credentialSecrets, redactSecrets } from './mask.ts';
import { credentialNames } from './template.ts';
import type { DefinitionCache } from './definitions.ts';
import { currentTraceId, withSpan } from '@flowdesk/telemetry';
import { DEFAULT_RETRY_PARK_MS, executeWorkflow, type RunLimits, type RunRecord } from './executor.ts';
import type {
  CredentialValue,
  MailSender,
  Clock,
  CredentialResolver,
  DeliveryLedger,
  HttpClient,
  LogPort,
  RespondPort,
  RunMetrics,
  RunRecorder,
  RunWrite,
  Sandbox,
  StartWorkflowRequest,
  WorkspaceNodesPort,
  WorkspaceWrites,
} from './ports.ts';
import { recordRun, unstorablePayload } from './run-recording.ts';
import type { RunCancellations } from './run-control.ts';
import { resumeLinkOf } from './resume-links.ts';
import { childResult } from './nodes/run-workflow.ts';
import { StartQuotaError, StartQuotas } from './quotas.ts';

export interface ProcessDeps {
  runs: RunRecorder;
  /** The owner's credentials, read only for a graph that refers to some (docs/credentials.md). */
  credentials?: CredentialResolver;
  definitions: DefinitionCache;
  workspace: Pick<WorkspaceWrites, 'createTask' | 'nodes'>;
  samples: SampleKeeper;
  http: HttpClient;
  /** The Send Email node's SMTP client (adapters/smtp-mailer.ts). */
  mail?: MailSender;
  clock: Clock;
  log: LogPort;
  metrics: RunMetrics;
  /** Where Code steps and sandboxed expressions run (adapters/sandbox-pool.ts). */
  sandbox: Sandbox;
  limits?: Partial<RunLimits>;
  /** Delivery ids Verify signature nodes accepted (refuseReplays); absent: such a node fails. */
  deliveries?: DeliveryLedger;
  /** The runs executing here and which were cancelled (run-control.ts); none: runs are not cancellable in flight. */
  cancellations?: RunCancellations;
  /**
   * Quotas on runs that start runs (quotas.ts): depth, child runs per run, starts per owner per
   * minute. Default: the default limits, in a bucket of this call's own (tests).
   */
  quotas?: StartQuotas;
  /** Publishes the trigger event of an error workflow's run (the engine's trigger topic). */
  startErrorWorkflow?: (event: TriggerEvent, ordered: boolean) => Promise<void>;
  /** Publishes the trigger event of a run a Run workflow node starts (the engine's trigger topic). */
  startSubWorkflow?: (event: TriggerEvent, ordered: boolean) => Promise<void>;
  /**
   * Resumes a parent's step parked on a Run workflow node with its child's result (engine.run_wait,
   * compare-and-set: once); false when that step is not parked (yet, or any more).
   */
  resumeParent?: (parent: { ownerId: string; workflowId: string; eventId: string; nodeId: string }, body: unknown) => Promise<boolean>;
  /** The public base URL of resume links (PUBLIC_BASE_URL): `<base>/api/v1/resume/<waitId>?secret=…`. */
  resumeBaseUrl?: string;
  /** The key of resume links known before the Wait (resumeLinkKey of the credentials key); absent: links are random. */
  resumeLinkKey?: Buffer;
  /** A retry delay of at least this many ms parks the run (RETRY_PARK_MS, default 5000; docs/workflow-engine.md, "Retries"). */
  retryParkMs?: number;
  /** Sends the answer of a run whose webhook caller waits (the reply topic, keyed by ingest replica, to the replica's partition). */
  reply?: (reply: WebhookReply, partition: number | undefined) => Promise<void>;
}

/** SHA-256 (hex) of a resume secret: engine.run_wait keeps only this. */
export const resumeSecretHash = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** A graph's credential names, once per graph object (the definition cache hands every run of a version the same one). */
const graphCredentials = new WeakMap<object, string[]>();
function credentialNamesOf(graph: object): string[] {
  let names = graphCredentials.get(graph);
  if (!names) graphCredentials.set(graph, (names = credentialNames(graph)));
  return names;
}

export type ProcessOutcome = 'ran' | 'duplicate' | 'workflow-gone' | 'inactive';

/**
 * One trigger event, start to end. The definition comes from the engine's cache (workflow.changed
 * events), never from a per-run read. The run is claimed first (recorded `running` under the event
 * id, batched with the other runs starting in the same turn): a redelivered event whose run already
 * finished is not executed again, so at-least-once delivery still gives one run per event. A run left
 * `running` by an engine that died is executed again on redelivery. The outcome is recorded (batched)
 * before the handler resolves, so the bus acknowledges the event only once its run is stored.
 */
export async function processTriggerEvent(event: TriggerEvent, deps: ProcessDeps): Promise<ProcessOutcome> {
  if (!event.parent) return answerAndRun(event, deps);
  const outcome = await answerAndRun(event, deps);
  await notifyParent(event, outcome, deps);
  return outcome;
}

async function answerAndRun(event: TriggerEvent, deps: ProcessDeps): Promise<ProcessOutcome> {
  const replyTo = event.replyTo;
  if (!replyTo || !deps.reply) return (await runTriggerEvent(event, deps)).outcome;
  // The caller waits (docs/webhooks.md, "Answering the caller"): a Respond node answers first, or the
  // run's summary once it is recorded. A lost answer costs the caller its wait (then the poll link),
  // never the run: a failed publish is logged, not thrown.
  const send = deps.reply;
  let answered = false;
  const answer = async (a: { status: number; headers: Record<string, string>; body: unknown }) => {
    answered = true;
    try {
      await send({ eventId: event.eventId, replica: replyTo.replica, ...a }, replyTo.partition);
    } catch (err) {
      deps.log.warn({ workflowId: event.workflowId, eventId: event.eventId, err }, 'answer to the webhook caller not sent');
    }
  };
  const respond: RespondPort = async (a) => {
    if (replyTo.mode !== 'respond_node') return 'nobody-waits';
    if (answered) return 'earlier';
    await answer(a);
    return 'sent';
  };
  const { outcome, answer: recorded } = await runTriggerEvent(event, deps, respond);
  if (!answered) {
    const run = await deps.runs.getByEvent(event.ownerId, event.workflowId, event.eventId).catch(() => null);
    await answer(fallbackAnswer(event.eventId, run?.id ?? null, outcome, recorded));
  }
  return outcome;
}

/**
 * What one trigger event came to: its outcome, and the run as the waiting webhook caller is answered
 * about it (absent: the event gave no run of its own, a duplicate or the workflow gone).
 */
interface TriggerRun {
  outcome: ProcessOutcome;
  answer?: Pick<RunRecord, 'status' | 'steps' | 'error'>;
}

const FALLBACK_STATUS: Record<RunRecord['status'], number> = { succeeded: 200, skipped: 200, failed: 500, cancelled: 409, waiting: 202 };

/**
 * The answer of a run that reached no Respond node (or of `finished` mode): `{runId, status, output}`
 * with the last executed step's output, HTTP 200 for a succeeded or skipped run, 500 with the error
 * for a failed one, 409 for a cancelled one. Every recorded run answers by its status, also one
 * recorded without executing (failed: credentials unreadable, payload unstorable; skipped: the
 * workflow deactivated meanwhile). An event that gave no run of its own (a duplicate delivery, the
 * workflow deleted) answers 202 with what happened.
 */
export function fallbackAnswer(
  eventId: string,
  runId: string | null,
  outcome: ProcessOutcome,
  record: Pick<RunRecord, 'status' | 'steps' | 'error'> | undefined,
): { status: number; headers: Record<string, string>; body: unknown } {
  if (!record) return { status: 202, headers: {}, body: { accepted: true, eventId, runId, status: outcome } };
  let output = record.steps.findLast((s) => s.status === 'succeeded')?.output ?? null;
  const tooBig = Buffer.byteLength(JSON.stringify(output) ?? 'null') > WEBHOOK_REPLY_MAX_BODY;
  if (tooBig) output = null;
  return {
    status: FALLBACK_STATUS[record.status],
    headers: {},
    body: {
      runId,
      status: record.status,
      output,
      ...(tooBig ? { outputOmitted: `larger than ${WEBHOOK_REPLY_MAX_BODY} bytes` } : {}),
      ...(record.error ? { error: record.error } : {}),
    },
  };
}

async function runTriggerEvent(event: TriggerEvent, deps: ProcessDeps, respond?: RespondPort): Promise<TriggerRun> {
  const { clock, log, runs } = deps;
  let workflow = await deps.definitions.get(event.workflowId);
  // Ingest accepted this event, so the workflow was active then; a cache that says otherwise may only
  // lag its workflow.changed events (the outbox relay): read it once from its owner before skipping.
  // A manual run (Run now, run again) runs whether the workflow is active or not, as a test run does;
  // so does an error workflow's run (the failing workflow names it).
  const manual = event.source === 'manual' || event.source === 'error';
  if (workflow && !workflow.active && !manual) workflow = await deps.definitions.refresh(event.workflowId);
  if (!workflow || workflow.ownerId !== event.ownerId) {
    // Deleted since the webhook was accepted: there is no workflow left to show a run under.
    log.info({ workflowId: event.workflowId, eventId: event.eventId }, 'workflow no longer exists; event dropped');
    return { outcome: 'workflow-gone' };
  }
  const key = { ownerId: event.ownerId, workflowId: workflow.id, eventId: event.eventId };
  const startedAt = clock().toISOString();
  // The run keeps its trace's id (the bus handler's span continues the webhook request's trace).
  const traceId = currentTraceId();
  const triggerType = event.source;
  // A data error (Postgres class 22 or 54, a payload nested deeper than the stack): the payload, not
  // the database, is the problem. Retrying a write that can never succeed would only delay the dead
  // letter: the run is recorded as failed now, with a placeholder instead of the payload, and says so.
  // Anything else (the database unreachable) throws, and the bus retries the event (and, after its
  // retries, the dead-letter subscriber records a failed run).
  const claim = await recordRun(
    runs,
    // A woken run keeps the start of its first claim (its duration counts the wait).
    {
      ...key,
      status: 'running',
      payload: event.payload,
      ...(event.resume ? { wake: true } : { startedAt }),
      triggerType,
      ...(traceId ? { traceId } : {}),
      // The version this run executes (a woken run continues with the definition it finds now).
      ...(workflow.definitionVersion ? { workflowVersion: workflow.definitionVersion } : {}),
    },
    (reason, err) => ({
      ...key,
      status: 'failed',
      payload: unstorablePayload(err),
      error: `the trigger payload could not be stored (${reason}); the run was not executed and keeps a placeholder payload`,
      startedAt,
      finishedAt: clock().toISOString(),
      triggerType,
    }),
  );
  if (claim.replaced) {
    if (claim.written) log.warn({ workflowId: workflow.id, eventId: event.eventId, err: claim.err }, 'run recorded as failed: its payload could not be stored');
    // The caller waiting for this run is answered as the run was recorded: failed, not executed.
    if (!claim.written) return { outcome: 'ran' };
    return { outcome: 'ran', answer: { status: 'failed', steps: [], error: 'the trigger payload could not be stored; the run was not executed' } };
  }
  const claimed = claim.claimed;
  if (!claimed) return { outcome: 'duplicate' };
  // Claimed before (its engine died mid-run): the steps it stored are reused, not executed again.
  const resume = claimed === 'resumed' ? await runs.checkpoints(key) : undefined;
  let checkpointed = resume !== undefined && resume.size > 0;

  deps.samples.keep(event.ownerId, workflow.id, event.payload);

  if (!workflow.active && !manual) {
    // Deactivated between the webhook's acceptance and now: inactive workflows do not run.
    await recordRun(runs, {
      ...key,
      status: 'skipped',
      error: 'The workflow was deactivated before this event was processed',
      finishedAt: clock().toISOString(),
    });
    return { outcome: 'inactive', answer: { status: 'skipped', steps: [], error: 'The workflow was deactivated before this event was processed' } };
  }

  // Credentials: one query on the engine's own database, only when the graph refers to some. A store
  // that cannot answer (not configured, a key missing) fails the run with the reason, never silently.
  let credentials: Map<string, CredentialValue> | undefined;
  const names = credentialNamesOf(workflow.graph);
  if (names.length > 0) {
    try {
      if (!deps.credentials) throw new Error('the credentials store is not configured on this server (CREDENTIALS_KEY)');
      credentials = await deps.credentials.resolve(event.ownerId, names);
    } catch (err) {
      const error = `credentials could not be read: ${(err as Error).message}`;
      await recordRun(runs, { ...key, status: 'failed', error, finishedAt: clock().toISOString() });
      // The caller learns that the run failed and its id, not the store's reason (the run's page has it).
      return { outcome: 'ran', answer: { status: 'failed', steps: [], error: 'credentials could not be read; the run was not executed' } };
    }
  }
  const secrets = credentialSecrets(credentials);
  // Resolved values never reach a log line or the recorded run: both pass through redactSecrets.
  const runLog =
    secrets.length === 0
      ? log
      : {
          info: (obj: object, msg?: string) => log.info(redactSecrets(obj, secrets), msg && redactSecrets(msg, secrets)),
          warn: (obj: object, msg?: string) => log.warn(redactSecrets(obj, secrets), msg && redactSecrets(msg, secrets)),
          error: (obj: object, msg?: string) => log.error(redactSecrets(obj, secrets), msg && redactSecrets(msg, secrets)),
        };
  deps.metrics.runStarted();
  // The child runs this execution started (their steps' keys: a step repeated starts the same child).
  const children = new Set<string>();
  const untrack = deps.cancellations?.track(key);
  const cancellations = deps.cancellations;
  const executed = await withSpan(
    'workflow-engine',
    'workflow run',
    () =>
      executeWorkflow({
        workflow: { id: workflow.id, ownerId: event.ownerId, graph: workflow.graph },
        event,
        options: { limits: deps.limits, retryParkMs: deps.retryParkMs ?? DEFAULT_RETRY_PARK_MS },
        // A claim after a dead engine reuses the earlier claim's checkpoints; a woken run executes its parked step again.
        resume: { ...(resume ? { checkpoints: resume } : {}), ...(event.resume ? { wake: event.resume } : {}) },
        ...(cancellations ? { control: { cancelled: () => cancellations.isCancelled(key), cancelSignal: () => cancellations.signalOf(key) } } : {}),
        ports: {
          http: deps.http,
          ...(deps.mail ? { mail: deps.mail } : {}),
          clock,
          log: runLog,
          metrics: deps.metrics,
          sandbox: deps.sandbox,
          // The task carries this run's origin: its change event never starts this workflow again, and
          // a chain across workflows ends at MAX_TRIGGER_DEPTH (docs/triggers.md, "Loops").
          createTask: (ownerId, input, { signal, idempotencyKey }) =>
            deps.workspace.createTask(ownerId, input, signal, { workflowId: workflow.id, depth: (event.origin?.depth ?? 0) + 1 }, idempotencyKey),
          // Notes and calendar entries carry it too (their change events start note/entity workflows).
          ...(deps.workspace.nodes ? { workspace: withOrigin(deps.workspace.nodes, { workflowId: workflow.id, depth: (event.origin?.depth ?? 0) + 1 }) } : {}),
          ...(deps.startSubWorkflow ? { startWorkflow: (request) => startSubWorkflow(event, request, deps, children) } : {}),
          ...(deps.deliveries ? { deliveries: deps.deliveries } : {}),
          // This run's own: its credentials, the webhook caller's answer, its resume links, its checkpoints.
          credentials,
          ...(respond ? { respond } : {}),
          ...(deps.resumeLinkKey ? { resumeUrl: (id: string) => resumeLinkOf(deps.resumeLinkKey!, key, id, deps.resumeBaseUrl).url } : {}),
          checkpoint: (steps) => {
            checkpointed = true;
            // Credential values never reach the table, as for the run's own record.
            return runs.checkpoint(key, secrets.length === 0 ? steps : redactSecrets(steps, secrets));
          },
        },
      }),
    { attributes: { 'flowdesk.workflow.id': workflow.id, 'flowdesk.event.id': event.eventId } },
  ).finally(() => untrack?.());
  const record =
    secrets.length === 0
      ? executed
      : {
          ...executed,
          steps: redactSecrets(executed.steps, secrets),
          warnings: redactSecrets(executed.warnings, secrets),
          error: redactSecrets(executed.error, secrets),
        };
  deps.metrics.runFinished(record.status, record.durationMs / 1000);
  if (record.status === 'waiting' && executed.parked) return { outcome: await park(event, key, record, executed.parked, secrets, deps), answer: record };
  const outcome: RunWrite = {
    ...key,
    status: record.status,
    steps: record.steps,
    warnings: record.warnings,
    error: record.error,
    ...(event.resume ? {} : { startedAt: record.startedAt }),
    finishedAt: record.finishedAt,
    ...(checkpointed ? { dropSteps: true } : {}),
  };
  // A value the run produced (an HTTP response with a \u0000, a body nested too deep) cannot be
  // stored. Throwing would have the bus run the workflow again (its requests sent again) and fail
  // the same way: the run is recorded as failed with the reason, its steps without their inputs and outputs.
  const stored = await recordRun(runs, outcome, (reason) => ({
    ...outcome,
    status: 'failed',
    steps: record.steps.map((s) => ({
      nodeId: s.nodeId,
      type: s.type,
      status: s.status,
      input: null,
      output: null,
      error: null,
      startedAt: s.startedAt,
      durationMs: s.durationMs,
    })),
    warnings: [],
    error: `the run finished as ${record.status} but its record could not be stored (${reason}); its steps are kept without their inputs, outputs and errors`,
  }));
  if (stored.replaced) {
    log.warn({ workflowId: workflow.id, eventId: event.eventId, err: stored.err }, 'run recorded as failed: its outcome could not be stored');
  }
  // Not written: the run was cancelled while it ran (a finished row is never changed). It keeps the
  // steps that did run.
  if (!stored.written) {
    await runs.keepCancelledSteps(outcome);
    return { outcome: 'ran', answer: { status: 'cancelled', steps: record.steps, error: null } };
  }
  if (record.status === 'failed' && workflow.errorWorkflowId) await startErrorWorkflow(event, workflow.errorWorkflowId, record, deps);
  if (stored.replaced)
    return { outcome: 'ran', answer: { status: 'failed', steps: [], error: `the run finished as ${record.status} but its record could not be stored` } };
  return { outcome: 'ran', answer: record };
}

/**
 * Parks a run (docs/workflow-engine.md, "Parking"): the executed steps not stored yet (the parked one
 * last, `waiting`) are stored as checkpoints and the run's row becomes `waiting` with its wait
 * (engine.run_wait: timer, resume secret's hash, the event that wakes it), all in one batch
 * statement. The handler then resolves: the bus acknowledges the event, nothing stays in memory.
 */
async function park(
  event: TriggerEvent,
  key: { ownerId: string; workflowId: string; eventId: string },
  record: RunRecord,
  parked: NonNullable<RunRecord['parked']>,
  secrets: string[],
  deps: ProcessDeps,
): Promise<ProcessOutcome> {
  let waitId: string = randomUUID();
  let secretHash: string | null = null;
  if (parked.resumable) {
    // With the server key, the link earlier steps could send as {{wait.<id>.resumeUrl}} (resume-links.ts).
    const link = deps.resumeLinkKey ? resumeLinkOf(deps.resumeLinkKey, key, parked.nodeId, deps.resumeBaseUrl) : null;
    const secret = link?.secret ?? randomBytes(32).toString('base64url');
    if (link) waitId = link.waitId;
    secretHash = resumeSecretHash(secret);
    const base = (deps.resumeBaseUrl ?? '').replace(/\/+$/, '');
    const resumeUrl = link?.url ?? `${base}/api/v1/resume/${waitId}?secret=${secret}`;
    // The owner sees the link on the run page (the parked step's output); the lookup keeps only the hash.
    const step = parked.unsaved[parked.unsaved.length - 1]!.step;
    step.output = { ...(step.output as Record<string, unknown>), resumeUrl };
    parked.unsaved[parked.unsaved.length - 1]!.output = step.output;
    const recorded = record.steps.findLast((s) => s.nodeId === parked.nodeId);
    if (recorded && recorded !== step) recorded.output = { ...(recorded.output as Record<string, unknown>), resumeUrl };
  }
  // Stored to wake the run later; a webhook caller waiting for this run was answered at the park
  // (202, status waiting), so the woken run answers nobody.
  const { resume: _previous, replyTo: _answered, ...original } = event;
  const unsaved = secrets.length === 0 ? parked.unsaved : redactSecrets(parked.unsaved, secrets);
  const stored = deps.runs.checkpoint(key, unsaved);
  const write: RunWrite = {
    ...key,
    status: 'waiting',
    steps: record.steps,
    warnings: record.warnings,
    error: null,
    ...(event.resume ? {} : { startedAt: record.startedAt }),
    finishedAt: null,
    wait: { nodeId: parked.nodeId, until: parked.until?.toISOString() ?? null, resumable: parked.resumable, waitId, secretHash, event: original },
  };
  const [written] = await Promise.all([recordRun(deps.runs, write), stored]);
  if (!written.written) await deps.runs.keepCancelledSteps(write); // cancelled meanwhile
  deps.log.info({ workflowId: key.workflowId, eventId: key.eventId, nodeId: parked.nodeId, until: write.wait!.until }, 'workflow run parked');
  // Parked on a Run workflow node: the child may have finished before this wait was stored (its
  // resume then found no wait). The wait is stored now, so look once: one of the two sees the other.
  const last = parked.unsaved[parked.unsaved.length - 1]!.step;
  const child = last.type === 'run_workflow' ? (last.output as { workflowId?: string; eventId?: string } | null) : null;
  if (written.written && child?.workflowId && child.eventId && deps.resumeParent) {
    const run = await deps.runs.getByEvent(key.ownerId, child.workflowId, child.eventId);
    if (run && FINISHED.has(run.status ?? '')) await deps.resumeParent({ ...key, nodeId: parked.nodeId }, childResult(run));
  }
  return 'ran';
}

/**
 * A failed run starts its workflow's error workflow (docs/workflow-engine.md, "Error workflow") with
 * `{workflow, run, failedNode, error}` as the trigger payload: one run per failed run (the event id is
 * derived from the failed run's, so a redelivery does not start a second), never for a run of an
 * error workflow itself (no chain, no loop), and only when the target still is a workflow of the same
 * owner. A publish that fails is logged: the failed run is recorded already and is not run again.
 */
async function startErrorWorkflow(event: TriggerEvent, errorWorkflowId: string, record: RunRecord, deps: ProcessDeps): Promise<void> {
  if (event.source === 'error' || !deps.startErrorWorkflow) return;
  const log = { workflowId: event.workflowId, eventId: event.eventId, errorWorkflowId };
  try {
    const target = await deps.definitions.get(errorWorkflowId);
    if (!target || target.ownerId !== event.ownerId) {
      deps.log.info(log, 'error workflow not started: it no longer exists');
      return;
    }
    // The owner's starts per minute bound error workflows too (a failing fan-out would otherwise double it).
    (deps.quotas ??= new StartQuotas()).takeStart(event.ownerId);
    const run = await deps.runs.getByEvent(event.ownerId, event.workflowId, event.eventId);
    const failed = record.steps.findLast((s) => s.status === 'failed' && record.error?.startsWith(`node "${s.nodeId}" failed`));
    const payload: ErrorPayload = {
      workflow: { id: event.workflowId },
      run: { id: run?.id ?? null, eventId: event.eventId, triggerType: event.source, startedAt: record.startedAt, finishedAt: record.finishedAt },
      failedNode: failed ? { id: failed.nodeId, type: failed.type, error: failed.error } : null,
      error: record.error ?? 'the run failed',
    };
    await deps.startErrorWorkflow(
      {
        eventId: `error_${event.workflowId}_${event.eventId}`.slice(0, 200),
        workflowId: target.id,
        ownerId: event.ownerId,
        source: 'error',
        receivedAt: deps.clock().toISOString(),
        payload,
        headers: {},
        origin: { workflowId: event.workflowId, depth: (event.origin?.depth ?? 0) + 1 },
      },
      target.executionOrder === 'ordered',
    );
  } catch (err) {
    if (err instanceof StartQuotaError) deps.log.warn({ ...log, quota: err.quota }, `error workflow not started: ${err.message}`);
    else deps.log.warn({ ...log, err }, 'error workflow not started');
  }
}

/**
 * The editor's variable picker shows a recent real payload (kept by workspace-api, with the workflow).
 * Keeping it on every run would cost workspace-api a write per run: at most one per workflow every
 * `intervalMs`, in the background; losing one is harmless.
 */
export class SampleKeeper {
  private readonly last = new Map<string, number>();
  constructor(
    private readonly workspace: Pick<WorkspaceWrites, 'setSamplePayload'>,
    private readonly log: LogPort,
    private readonly intervalMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  keep(ownerId: string, workflowId: string, payload: Record<string, unknown>): void {
    const at = this.now();
    const prev = this.last.get(workflowId);
    if (prev !== undefined && at - prev < this.intervalMs) return;
    if (this.last.size > 100_000) this.last.clear();
    this.last.set(workflowId, at);
    this.workspace.setSamplePayload(ownerId, workflowId, payload).catch((err: unknown) => this.log.warn({ err, workflowId }, 'sample payload not kept'));
  }
}

const FINISHED = new Set(['succeeded', 'failed', 'skipped', 'cancelled']);

/**
 * Starts a child run for a Run workflow node (docs/workflow-engine.md, "Run workflow"): the target
 * must be a workflow of the same owner (active or not; it runs as a manual run with the payload),
 * within the start quotas (quotas.ts: the chain's depth, the run's child runs, the owner's starts per
 * minute; a refusal fails the step naming the limit). The event id is derived from the step's idempotency
 * key, so a step executed again (a crash, a retry) publishes the same event and the child runs once.
 */
async function startSubWorkflow(event: TriggerEvent, request: StartWorkflowRequest, deps: ProcessDeps, children: Set<string>): Promise<{ eventId: string }> {
  const quotas = (deps.quotas ??= new StartQuotas());
  const depth = (event.origin?.depth ?? 0) + 1;
  quotas.checkDepth(event.ownerId, depth - 1);
  const target = await deps.definitions.get(request.workflowId);
  if (!target || target.ownerId !== event.ownerId) throw new NodeFailedError(`workflow ${request.workflowId} not found`);
  // A step executed again (a retry, a redelivery) publishes the same event: it is not another start.
  if (!children.has(request.idempotencyKey)) {
    quotas.checkChildRuns(event.ownerId, children.size);
    quotas.takeStart(event.ownerId);
    children.add(request.idempotencyKey);
  }
  const eventId = `sub_${request.idempotencyKey}`;
  await deps.startSubWorkflow!(
    {
      eventId,
      workflowId: target.id,
      ownerId: event.ownerId,
      source: 'manual',
      receivedAt: deps.clock().toISOString(),
      payload: request.payload,
      headers: {},
      origin: { workflowId: event.workflowId, depth },
      ...(request.wait ? { parent: { workflowId: event.workflowId, eventId: event.eventId, nodeId: request.nodeId } } : {}),
    },
    target.executionOrder === 'ordered',
  );
  return { eventId };
}

/**
 * A child run whose parent waits ended (or was handled before: a redelivery): its result resumes the
 * parent's parked step, at most once (compare-and-set on the wait). A parent not parked yet looks for
 * the finished child itself once it parked (park, above). A failed resume throws: the bus delivers the
 * child's event again, which finds the run finished and tries again (at least once).
 */
async function notifyParent(event: TriggerEvent, outcome: ProcessOutcome, deps: ProcessDeps): Promise<void> {
  const parent = event.parent;
  if (!parent || !deps.resumeParent) return;
  let result;
  if (outcome === 'workflow-gone') result = { runId: null, status: 'failed', output: null, error: `workflow ${event.workflowId} not found` };
  else {
    const run = await deps.runs.getByEvent(event.ownerId, event.workflowId, event.eventId);
    if (!run || !FINISHED.has(run.status ?? '')) return; // parked itself: its final outcome notifies
    result = childResult(run);
  }
  const resumed = await deps.resumeParent({ ownerId: event.ownerId, ...parent }, result);
  if (resumed) deps.log.info({ workflowId: parent.workflowId, eventId: parent.eventId, nodeId: parent.nodeId }, 'parent run resumed by its child');
}
/** The workspace nodes' port with the run's origin on every create (the loop guard, docs/triggers.md "Loops"). */
export const withOrigin = (nodes: WorkspaceNodesPort, origin: TriggerOrigin): WorkspaceNodesPort => ({
  ...nodes,
  create: (ownerId, kind, body, opts) => nodes.create(ownerId, kind, body, { ...opts, origin }),
});
