import type {
  CalendarEntry,
  ExecutionOrder,
  Note,
  Project,
  SampleSource,
  Task,
  Workflow,
  WorkflowDefinition,
  WorkflowGraph,
  WorkflowRetention,
} from '@flowdesk/contracts';
import type {
  CalendarEntry as CalendarRow,
  Note as NoteRow,
  Project as ProjectRow,
  Task as TaskRow,
  Workflow as WorkflowRow,
} from '../generated/prisma/client.ts';
import { signatureGated } from '@flowdesk/contracts';
import { iso, isoOrNull, toDateOnly } from './dates.ts';

// Rows to the API's shapes (libs/contracts): dates as ISO strings, no owner ids, no secrets.

export const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  name: r.name,
  description: r.description,
  color: r.color,
  status: r.status,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

export const toTask = (r: TaskRow): Task => ({
  id: r.id,
  title: r.title,
  projectId: r.projectId,
  dueDate: toDateOnly(r.dueDate),
  notes: r.notes,
  status: r.status,
  priority: r.priority,
  tags: r.tags,
  completedAt: isoOrNull(r.completedAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

export const toCalendarEntry = (r: CalendarRow): CalendarEntry => ({
  id: r.id,
  title: r.title,
  description: r.description,
  location: r.location,
  startsAt: iso(r.startsAt),
  endsAt: iso(r.endsAt),
  allDay: r.allDay,
  projectId: r.projectId,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

export const toNote = (r: NoteRow): Note => ({
  id: r.id,
  title: r.title,
  content: r.content,
  projectId: r.projectId,
  tags: r.tags,
  pinned: r.pinned,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

export const webhookUrl = (publicBaseUrl: string, workflowId: string) => `${publicBaseUrl}/functions/v1/webhook-trigger/${workflowId}`;

/** The retention columns as the API's `retention` (null when neither is set). */
export function toRetention(r: { retentionDays?: number | null; retentionRuns?: number | null }): WorkflowRetention | null {
  if (r.retentionDays == null && r.retentionRuns == null) return null;
  return { ...(r.retentionDays != null ? { days: r.retentionDays } : {}), ...(r.retentionRuns != null ? { runs: r.retentionRuns } : {}) };
}

/** The API's `retention` as its columns (undefined: unchanged; null or {}: both cleared). */
export function retentionColumns(retention: WorkflowRetention | null | undefined): { retentionDays?: number | null; retentionRuns?: number | null } {
  if (retention === undefined) return {};
  return { retentionDays: retention?.days ?? null, retentionRuns: retention?.runs ?? null };
}

/**
 * How a webhook trigger authenticates a delivery, as ingest checks it (webhook-ingest's route): a signed
 * trigger (Standard Webhooks) needs no x-webhook-secret whatever requireWebhookSecret says.
 */
export function webhookEndpoint(url: string, requireWebhookSecret: boolean, triggerConfig: unknown, graph?: WorkflowGraph): NonNullable<Workflow['webhook']> {
  const signed = (triggerConfig as { signature?: unknown } | null)?.signature === 'standard-webhooks';
  // The graph starts with Verify signature (signatureGated; ingest reads the same rule from Postgres).
  const gated = !signed && graph !== undefined && signatureGated(graph);
  return {
    url,
    requireSecret: requireWebhookSecret && !signed && !gated,
    authentication: signed ? 'standard-webhooks' : gated ? 'provider-signature' : requireWebhookSecret ? 'secret-header' : 'none',
  };
}

export const toWorkflow =
  (publicBaseUrl: string) =>
  (r: WorkflowRow): Workflow => ({
    id: r.id,
    name: r.name,
    description: r.description,
    tags: r.tags,
    triggerType: r.triggerType,
    active: r.active,
    graph: r.graph as unknown as WorkflowGraph,
    triggerConfig: r.triggerConfig as Record<string, unknown>,
    executionOrder: r.executionOrder as ExecutionOrder,
    errorWorkflowId: r.errorWorkflowId ?? null,
    retention: toRetention(r),
    webhook:
      r.triggerType === 'webhook'
        ? webhookEndpoint(webhookUrl(publicBaseUrl, r.id), r.requireWebhookSecret, r.triggerConfig, r.graph as unknown as WorkflowGraph)
        : null,
    samplePayload: (r.samplePayload as Record<string, unknown> | null) ?? null,
    samplePayloadAt: isoOrNull(r.samplePayloadAt),
    samplePin: r.samplePinnedAt ? { source: (r.sampleSource ?? 'typed') as SampleSource, pinnedAt: iso(r.samplePinnedAt), runId: r.sampleRunId ?? null } : null,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  });

/** What workflow.changed events and the definitions API carry: no name, no secret. */
export const toDefinition = (
  r: Pick<WorkflowRow, 'id' | 'ownerId' | 'version' | 'triggerType' | 'active' | 'executionOrder' | 'graph' | 'triggerConfig'> & {
    definitionVersion?: number | null;
    errorWorkflowId?: string | null;
    retentionDays?: number | null;
    retentionRuns?: number | null;
  },
): WorkflowDefinition => ({
  id: r.id,
  ownerId: r.ownerId,
  version: r.version,
  definitionVersion: r.definitionVersion ?? null,
  triggerType: r.triggerType,
  active: r.active,
  executionOrder: r.executionOrder as ExecutionOrder,
  errorWorkflowId: r.errorWorkflowId ?? null,
  retention: toRetention(r),
  graph: r.graph as unknown as WorkflowGraph,
  triggerConfig: r.triggerConfig as Record<string, unknown>,
});
