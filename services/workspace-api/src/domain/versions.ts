/**
 * A workflow's version history (docs/workflow-versions.md): every save of its definition is a version,
 * numbered 1, 2, … per workflow, written in the save's own transaction, the newest `keep` kept.
 */
import type { WorkflowVersion, WorkflowVersionDefinition, WorkflowVersionSummary, ExecutionOrder, WorkflowGraph } from '@flowdesk/contracts';
import type { Workflow as WorkflowRow, WorkflowVersion as VersionRow } from '../generated/prisma/client.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { toRetention } from './mappers.ts';
import type { Tx } from './tx.ts';

/** Versions kept per workflow unless WORKFLOW_VERSIONS_KEEP says otherwise. */
export const DEFAULT_VERSIONS_KEEP = 100;

/** The fields of an update that change the definition (a save of any of them is a version; `active` alone is not). */
export const DEFINITION_FIELDS = [
  'name',
  'description',
  'triggerType',
  'triggerConfig',
  'graph',
  'requireWebhookSecret',
  'executionOrder',
  'errorWorkflowId',
  'retention',
] as const;

export interface VersionAuthor {
  userId: string;
  /** The client the save came through (OAuth / API key client id, or the calling service's azp). */
  client: string | null;
}

export function definitionOf(r: WorkflowRow): WorkflowVersionDefinition {
  return {
    name: r.name,
    description: r.description,
    triggerType: r.triggerType,
    triggerConfig: r.triggerConfig as Record<string, unknown>,
    graph: r.graph as unknown as WorkflowGraph,
    requireWebhookSecret: r.requireWebhookSecret,
    executionOrder: r.executionOrder as ExecutionOrder,
    errorWorkflowId: r.errorWorkflowId ?? null,
    retention: toRetention(r),
  };
}

/** JSON with object keys sorted: jsonb does not keep key order, so equality is compared on this. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * Records the workflow's definition after a save as its next version, unless it equals the newest
 * version (a save that changed nothing makes no version), then drops versions beyond the newest `keep`.
 * Runs after the save's UPDATE in the same transaction: that UPDATE locks the workflow's row, so two
 * saves of one workflow number their versions one after the other. The workflow row keeps the
 * number (`definition_version`, carried by workflow.changed events to the engine, which records it
 * with each run): returns the row as it is then.
 */
export async function recordVersion(tx: Tx, row: WorkflowRow, author: VersionAuthor, message: string | null, keep: number): Promise<WorkflowRow> {
  const definition = definitionOf(row);
  const latest = await tx.workflowVersion.findFirst({ where: { workflowId: row.id }, orderBy: { number: 'desc' }, select: { number: true, definition: true } });
  if (latest && canonicalJson(latest.definition) === canonicalJson(definition) && message === null) return row;
  const number = (latest?.number ?? 0) + 1;
  await tx.workflowVersion.create({
    data: {
      ownerId: row.ownerId,
      workflowId: row.id,
      number,
      definition: definition as unknown as Prisma.InputJsonValue,
      message,
      authorUserId: author.userId,
      authorClient: author.client,
    },
  });
  if (number > keep) await tx.workflowVersion.deleteMany({ where: { workflowId: row.id, number: { lte: number - keep } } });
  return tx.workflow.update({ where: { id: row.id }, data: { definitionVersion: number } });
}

export const toVersionSummary = (r: VersionRow): WorkflowVersionSummary => ({
  workflowId: r.workflowId,
  number: r.number,
  message: r.message,
  author: { userId: r.authorUserId, client: r.authorClient },
  createdAt: r.createdAt.toISOString(),
});

export const toVersion = (r: VersionRow): WorkflowVersion => ({
  ...toVersionSummary(r),
  definition: r.definition as unknown as WorkflowVersionDefinition,
});
