import type { TriggerEvent } from '@flowdesk/contracts';
import type { WorkspaceClient } from '../adapters/workspace-client.ts';
import { executeWorkflow, type RunLimits } from './executor.ts';
import type { Clock, HttpClient, LogPort } from './ports.ts';

export interface ProcessDeps {
  workspace: WorkspaceClient;
  http: HttpClient;
  clock: Clock;
  log: LogPort;
  limits?: Partial<RunLimits>;
}

export type ProcessOutcome = 'ran' | 'duplicate' | 'workflow-gone' | 'inactive';

/**
 * One trigger event, start to end. The run is claimed first (recorded `running` under the event id):
 * a redelivered event whose run already finished is not executed again, so at-least-once delivery
 * still gives one run per event. A run left `running` by an engine that died is executed again on
 * redelivery. Failures to reach workspace-api throw, and the bus retries the event.
 */
export async function processTriggerEvent(event: TriggerEvent, deps: ProcessDeps): Promise<ProcessOutcome> {
  const { workspace, clock, log } = deps;
  const workflow = await workspace.getWorkflow(event.ownerId, event.workflowId);
  if (!workflow) {
    log.info({ workflowId: event.workflowId, eventId: event.eventId }, 'workflow no longer exists; event dropped');
    return 'workflow-gone';
  }
  const startedAt = clock().toISOString();
  const claim = await workspace.recordRun(event.ownerId, workflow.id, event.eventId, { status: 'running', triggerPayload: event.payload, startedAt });
  if (!claim.changed) return 'duplicate';

  // The editor's variable picker shows the latest real payload; losing one update is harmless.
  await workspace.setSamplePayload(event.ownerId, workflow.id, event.payload).catch((err: unknown) => log.warn({ err, workflowId: workflow.id }, 'sample payload not kept'));

  if (!workflow.active) {
    // Deactivated between the webhook's acceptance and now: inactive workflows do not run.
    await workspace.recordRun(event.ownerId, workflow.id, event.eventId, {
      status: 'skipped',
      error: 'The workflow was deactivated before this event was processed',
      finishedAt: clock().toISOString(),
    });
    return 'inactive';
  }

  const record = await executeWorkflow({
    workflow: { id: workflow.id, ownerId: event.ownerId, graph: workflow.graph },
    event,
    limits: deps.limits,
    ports: {
      http: deps.http,
      clock,
      log,
      createTask: (ownerId, input, { signal }) => workspace.createTask(ownerId, input, signal),
    },
  });
  await workspace.recordRun(event.ownerId, workflow.id, event.eventId, {
    status: record.status,
    steps: record.steps,
    warnings: record.warnings,
    error: record.error,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
  });
  log.info({ workflowId: workflow.id, eventId: event.eventId, status: record.status, durationMs: record.durationMs }, 'run finished');
  return 'ran';
}
