import type { FormTriggerLookup, WebhookTriggerLookup } from '@flowdesk/contracts';

/**
 * Where webhook-ingest learns about a workflow's webhook trigger (`WebhookTriggerLookup`, the contract of
 * workspace-api's internal lookup) and its hosted form (`FormTriggerLookup`). It never reads
 * workspace-api's tables: an adapter asks workspace-api (src/adapters), and tests use a fake.
 */
export interface TriggerDirectory {
  /** The workflow's webhook trigger, or null when there is no workflow with a webhook trigger by that id. */
  lookup(workflowId: string): Promise<WebhookTriggerLookup | null>;
  /** The workflow's hosted form, or null when there is no workflow with a form trigger by that id. Absent: no forms are served. */
  form?(workflowId: string): Promise<FormTriggerLookup | null>;
  /** Forgets what is cached for a workflow (a workflow.changed event arrived): the next lookup asks again. */
  invalidate?(workflowId: string): void;
}

/** One cache of lookups by workflow id (see cachedDirectory). */
function lookupCache<T>(inner: (id: string) => Promise<T>, ttl: number, now: () => number, max: number) {
  const entries = new Map<string, { at: number; value: Promise<T> }>();
  return {
    get(workflowId: string): Promise<T> {
      const hit = entries.get(workflowId);
      if (hit && now() - hit.at < ttl) return hit.value;
      if (entries.size >= max) entries.clear();
      const value = inner(workflowId);
      entries.set(workflowId, { at: now(), value });
      // A failed lookup is not remembered: the next delivery asks again.
      value.catch(() => entries.delete(workflowId));
      return value;
    },
    delete: (workflowId: string) => entries.delete(workflowId),
  };
}

/**
 * A short cache in front of the directory: a burst of deliveries to one workflow costs one lookup a
 * second, and an activation, deactivation or regenerated secret still takes effect within `ttlMs`
 * (one second by default). Concurrent misses for one id share one lookup. Forms are cached the same way.
 */
export function cachedDirectory(inner: TriggerDirectory, options: { ttlMs?: number; now?: () => number; maxEntries?: number } = {}): TriggerDirectory {
  const ttl = options.ttlMs ?? 1_000;
  const now = options.now ?? Date.now;
  const max = options.maxEntries ?? 10_000;
  const webhooks = lookupCache((id) => inner.lookup(id), ttl, now, max);
  const innerForm = inner.form?.bind(inner);
  const forms = innerForm ? lookupCache(innerForm, ttl, now, max) : undefined;
  return {
    lookup: (workflowId) => webhooks.get(workflowId),
    ...(forms ? { form: (workflowId: string) => forms.get(workflowId) } : {}),
    invalidate(workflowId) {
      webhooks.delete(workflowId);
      forms?.delete(workflowId);
    },
  };
}
