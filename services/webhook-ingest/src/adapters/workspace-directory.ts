import type { WebhookTriggerLookup } from '@flowdesk/contracts';
import type { ServiceTokenSource } from '@flowdesk/service-kit';
import type { TriggerDirectory } from '../domain/trigger-directory.ts';

/**
 * The trigger directory backed by workspace-api's internal lookup (GET /internal/v1/webhook-triggers/:id),
 * called as the webhook-ingest service itself. 404 means "no webhook trigger there"; anything else
 * unexpected is an error, so the delivery is answered 5xx and the sender retries, rather than a 404
 * that would make it give up.
 */
export function workspaceApiDirectory(options: { workspaceApiUrl: string; token: ServiceTokenSource; timeoutMs?: number }): TriggerDirectory {
  return {
    async lookup(workflowId) {
      const res = await fetch(new URL(`/internal/v1/webhook-triggers/${encodeURIComponent(workflowId)}`, options.workspaceApiUrl), {
        headers: { authorization: `Bearer ${await options.token()}` },
        signal: AbortSignal.timeout(options.timeoutMs ?? 3_000),
      });
      if (res.status === 404) return null;
      if (!res.ok) throw new Error(`workspace-api answered ${res.status} to a trigger lookup`);
      return (await res.json()) as WebhookTriggerLookup;
    },
  };
}
