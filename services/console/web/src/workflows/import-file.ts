/**
 * The console's side of a workflow file (docs/workflow-export.md): reading what was pasted or chosen,
 * and the problems shown after an import. workspace-api says per step what it left out or what needs
 * a change; which credentials are missing only the engine knows, so the console compares the names
 * the steps use with the user's credentials (GET /credentials) and lists the missing ones per step.
 */
import { WORKFLOW_IMPORT_MAX_BYTES, type WorkflowImportProblem, type WorkflowImportResult } from '@flowdesk/contracts';

/** The file's JSON, or the reason it cannot be sent (not JSON, larger than the server takes). */
export function readWorkflowFile(text: string): { file: unknown } | { error: string } {
  if (new TextEncoder().encode(text).length > WORKFLOW_IMPORT_MAX_BYTES)
    return { error: `The file is larger than ${Math.round(WORKFLOW_IMPORT_MAX_BYTES / 1024)} KB, the most an import takes.` };
  if (!text.trim()) return { error: 'Paste a workflow file, or choose one.' };
  try {
    return { file: JSON.parse(text) as unknown };
  } catch (err) {
    return { error: `This is not JSON: ${(err as Error).message}` };
  }
}

/**
 * What to show after an import: the server's problems, then one per step naming a credential this
 * user does not have (`credentialNames` null: this deployment has no credential store — not checked).
 */
export function importProblems(result: Pick<WorkflowImportResult, 'problems' | 'credentials'>, credentialNames: string[] | null): WorkflowImportProblem[] {
  const have = new Set(credentialNames ?? []);
  const missing =
    credentialNames === null
      ? []
      : result.credentials
          .filter((c) => !have.has(c.name))
          .flatMap((c) =>
            c.nodeIds.map((nodeId): WorkflowImportProblem => ({
              nodeId,
              kind: 'needs_attention',
              message: `step "${nodeId}" uses the credential "${c.name}", which you do not have: add it under Settings → Credentials`,
            })),
          );
  return [...result.problems, ...missing];
}
