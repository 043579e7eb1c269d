import type { FormTriggerLookup, WebhookTriggerLookup } from '@flowdesk/contracts';
import type { ServiceTokenSource } from '@flowdesk/service-kit';
import type { TriggerDirectory } from '../domain/trigger-directory.ts';

/**
 * The trigger directory backed by workspace-api's internal lookups (GET /internal/v1/webhook-triggers/:id
 * and /internal/v1/form-triggers/:id), called as the webhook-ingest service itself. 404 means "no such
 * trigger there"; anything else unexpected is an error, so the delivery is answered 5xx and the sender
 * retries, rather than a 404 that would make it give up.
 */
export function workspaceApiDirectory(options: { workspaceApiUrl: string; token: ServiceTokenSource; timeoutMs?: number }): TriggerDirectory {
  const get = async <T>(path: string, workflowId: string): Promise<T | null> => {
    const res = await fetch(new URL(`/internal/v1/${path}/${encodeURIComponent(workflowId)}`, options.workspaceApiUrl), {
      headers: { authorization: `Bearer ${await options.token()}` },
      signal: AbortSignal.timeout(options.timeoutMs ?? 3_000),
    });
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`workspace-api answered ${res.status} to a trigger lookup`);
    return (await res.json()) as T;
  };
  return {
    lookup: (workflowId) => get<WebhookTriggerLookup>('webhook-triggers', workflowId),
    form: (workflowId) => get<FormTriggerLookup>('form-triggers', workflowId),
  };
}
