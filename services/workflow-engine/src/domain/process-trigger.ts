import type { TriggerEvent } from '@flowdesk/contracts';
import { isUnstorable, unstorablePayload, writeErrorText, type RunStore } from '../adapters/run-store.ts';
import type { CredentialStore } from '../adapters/credential-store.ts';
import { redactSecrets } from './mask.ts';
import { credentialNames } from './template.ts';
import type { WorkspaceClient } from '../adapters/workspace-client.ts';
import type { DefinitionCache } from './definitions.ts';
import { currentTraceId, withSpan } from '@flowdesk/telemetry';
import { runDuration, runsFinished, runsStarted } from '../adapters/telemetry.ts';
import { executeWorkflow, type RunLimits } from './executor.ts';
import type { Clock, HttpClient, LogPort } from './ports.ts';

export interface ProcessDeps {
  runs: RunStore;
  /** The owner's credentials, read only for a graph that refers to some (docs/credentials.md). */
  credentials?: Pick<CredentialStore, 'resolve'>;
  definitions: DefinitionCache;
  workspace: Pick<WorkspaceClient, 'createTask' | 'setSamplePayload'>;
  samples: SampleKeeper;
  http: HttpClient;
  clock: Clock;
  log: LogPort;
  limits?: Partial<RunLimits>;
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
  const { clock, log, runs } = deps;
  let workflow = await deps.definitions.get(event.workflowId);
  // Ingest accepted this event, so the workflow was active then; a cache that says otherwise may only
  // lag its workflow.changed events (the outbox relay): read it once from its owner before skipping.
  // A manual run (Run now, run again) runs whether the workflow is active or not, as a test run does.
  const manual = event.source === 'manual';
  if (workflow && !workflow.active && !manual) workflow = await deps.definitions.refresh(event.workflowId);
  if (!workflow || workflow.ownerId !== event.ownerId) {
    // Deleted since the webhook was accepted: there is no workflow left to show a run under.
    log.info({ workflowId: event.workflowId, eventId: event.eventId }, 'workflow no longer exists; event dropped');
    return 'workflow-gone';
  }
  const key = { ownerId: event.ownerId, workflowId: workflow.id, eventId: event.eventId };
  const startedAt = clock().toISOString();
  // The run keeps its trace's id (the bus handler's span continues the webhook request's trace).
  const traceId = currentTraceId();
  const triggerType = event.source;
  const claimed = await runs
    .claim({ ...key, status: 'running', payload: event.payload, startedAt, triggerType, ...(traceId ? { traceId } : {}) })
    .catch(async (err: unknown) => {
      // A data error (Postgres class 22 or 54, a payload nested deeper than the stack): the payload, not
      // the database, is the problem. Anything else (the database unreachable) throws, and the bus
      // retries the event (and, after its retries, the dead-letter subscriber records a failed run).
      if (!isUnstorable(err)) throw err;
      // Retrying a write that can never succeed would only delay the dead letter: record the run as
      // failed now, with a placeholder instead of the payload, and say so.
      const reason = `the trigger payload could not be stored (${writeErrorText(err)}); the run was not executed and keeps a placeholder payload`;
      const stored = await runs.record({
        ...key,
        status: 'failed',
        payload: unstorablePayload(err),
        error: reason,
        startedAt,
        finishedAt: clock().toISOString(),
        triggerType,
      });
      if (stored) log.warn({ workflowId: workflow.id, eventId: event.eventId, err }, 'run recorded as failed: its payload could not be stored');
      return null;
    });
  if (claimed === null) return 'ran';
  if (!claimed) return 'duplicate';
  // Claimed before (its engine died mid-run): the steps it stored are reused, not executed again.
  const resume = claimed === 'resumed' ? await runs.checkpoints(key) : undefined;
  let checkpointed = resume !== undefined && resume.size > 0;

  deps.samples.keep(event.ownerId, workflow.id, event.payload);

  if (!workflow.active && !manual) {
    // Deactivated between the webhook's acceptance and now: inactive workflows do not run.
    await runs.record({ ...key, status: 'skipped', error: 'The workflow was deactivated before this event was processed', finishedAt: clock().toISOString() });
    return 'inactive';
  }

  // Credentials: one query on the engine's own database, only when the graph refers to some. A store
  // that cannot answer (not configured, a key missing) fails the run with the reason, never silently.
  let credentials: Map<string, string> | undefined;
  const names = credentialNames(workflow.graph);
  if (names.length > 0) {
    try {
      if (!deps.credentials) throw new Error('the credentials store is not configured on this server (CREDENTIALS_KEY)');
      credentials = await deps.credentials.resolve(event.ownerId, names);
    } catch (err) {
      const error = `credentials could not be read: ${(err as Error).message}`;
      await runs.record({ ...key, status: 'failed', error, finishedAt: clock().toISOString() });
      return 'ran';
    }
  }
  const secrets = [...(credentials?.values() ?? [])];
  // Resolved values never reach a log line or the recorded run: both pass through redactSecrets.
  const runLog =
    secrets.length === 0
      ? log
      : {
          info: (obj: object, msg?: string) => log.info(redactSecrets(obj, secrets), msg && redactSecrets(msg, secrets)),
          warn: (obj: object, msg?: string) => log.warn(redactSecrets(obj, secrets), msg && redactSecrets(msg, secrets)),
          error: (obj: object, msg?: string) => log.error(redactSecrets(obj, secrets), msg && redactSecrets(msg, secrets)),
        };
  runsStarted.inc();
  const executed = await withSpan(
    'workflow-engine',
    'workflow run',
    () =>
      executeWorkflow({
        workflow: { id: workflow.id, ownerId: event.ownerId, graph: workflow.graph },
        event,
        limits: deps.limits,
        credentials,
        ...(resume ? { resume } : {}),
        checkpoint: (steps) => {
          checkpointed = true;
          // Credential values never reach the table, as for the run's own record.
          return runs.checkpoint(key, secrets.length === 0 ? steps : redactSecrets(steps, secrets));
        },
        ports: {
          http: deps.http,
          clock,
          log: runLog,
          // The task carries this run's origin: its change event never starts this workflow again, and
          // a chain across workflows ends at MAX_TRIGGER_DEPTH (docs/triggers.md, "Loops").
          createTask: (ownerId, input, { signal, idempotencyKey }) =>
            deps.workspace.createTask(ownerId, input, signal, { workflowId: workflow.id, depth: (event.origin?.depth ?? 0) + 1 }, idempotencyKey),
        },
      }),
    { attributes: { 'flowdesk.workflow.id': workflow.id, 'flowdesk.event.id': event.eventId } },
  );
  const record =
    secrets.length === 0
      ? executed
      : {
          ...executed,
          steps: redactSecrets(executed.steps, secrets),
          warnings: redactSecrets(executed.warnings, secrets),
          error: redactSecrets(executed.error, secrets),
        };
  runsFinished.inc({ status: record.status });
  runDuration.observe({ status: record.status }, record.durationMs / 1000);
  const outcome = {
    ...key,
    status: record.status,
    steps: record.steps,
    warnings: record.warnings,
    error: record.error,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
    ...(checkpointed ? { dropSteps: true } : {}),
  };
  await runs.record(outcome).catch(async (err: unknown) => {
    if (!isUnstorable(err)) throw err;
    // A value the run produced (an HTTP response with a \u0000, a body nested too deep) cannot be
    // stored. Throwing would have the bus run the workflow again (its requests sent again) and fail
    // the same way: record the run as failed with the reason, its steps without their inputs and outputs.
    const reason = `the run finished as ${record.status} but its record could not be stored (${writeErrorText(err)}); its steps are kept without their inputs, outputs and errors`;
    const steps = record.steps.map((s) => ({
      nodeId: s.nodeId,
      type: s.type,
      status: s.status,
      input: null,
      output: null,
      error: null,
      startedAt: s.startedAt,
      durationMs: s.durationMs,
    }));
    log.warn({ workflowId: workflow.id, eventId: event.eventId, err }, 'run recorded as failed: its outcome could not be stored');
    await runs.record({ ...outcome, status: 'failed', steps, warnings: [], error: reason });
  });
  return 'ran';
}

/**
 * The editor's variable picker shows a recent real payload (kept by workspace-api, with the workflow).
 * Keeping it on every run would cost workspace-api a write per run: at most one per workflow every
 * `intervalMs`, in the background; losing one is harmless.
 */
export class SampleKeeper {
  private readonly last = new Map<string, number>();
  constructor(
    private readonly workspace: Pick<WorkspaceClient, 'setSamplePayload'>,
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
