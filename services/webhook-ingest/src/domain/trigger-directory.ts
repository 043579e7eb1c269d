import type { WebhookTriggerLookup } from '@flowdesk/contracts';

/**
 * Where webhook-ingest learns about a workflow's webhook trigger (`WebhookTriggerLookup`, the contract of
 * workspace-api's internal lookup). It never reads workspace-api's tables: an adapter asks
 * workspace-api (src/adapters), and tests use a fake.
 */
export interface TriggerDirectory {
  /** The workflow's webhook trigger, or null when there is no workflow with a webhook trigger by that id. */
  lookup(workflowId: string): Promise<WebhookTriggerLookup | null>;
  /** Forgets what is cached for a workflow (a workflow.changed event arrived): the next lookup asks again. */
  invalidate?(workflowId: string): void;
}

/**
 * A short cache in front of the directory: a burst of deliveries to one workflow costs one lookup a
 * second, and an activation, deactivation or regenerated secret still takes effect within `ttlMs`
 * (one second by default). Concurrent misses for one id share one lookup.
 */
export function cachedDirectory(inner: TriggerDirectory, options: { ttlMs?: number; now?: () => number; maxEntries?: number } = {}): TriggerDirectory {
  const ttl = options.ttlMs ?? 1_000;
  const now = options.now ?? Date.now;
  const max = options.maxEntries ?? 10_000;
  const entries = new Map<string, { at: number; value: Promise<WebhookTriggerLookup | null> }>();
  return {
    lookup(workflowId) {
      const hit = entries.get(workflowId);
      if (hit && now() - hit.at < ttl) return hit.value;
      if (entries.size >= max) entries.clear();
      const value = inner.lookup(workflowId);
      entries.set(workflowId, { at: now(), value });
      // A failed lookup is not remembered: the next delivery asks again.
      value.catch(() => entries.delete(workflowId));
      return value;
    },
    invalidate(workflowId) {
      entries.delete(workflowId);
    },
  };
}
