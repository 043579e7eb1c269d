import type { RetryPolicy } from './bus.ts';

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, initialBackoffMs: 200, maxBackoffMs: 30_000 };

export function resolveRetry(...layers: (Partial<RetryPolicy> | undefined)[]): RetryPolicy {
  const r: RetryPolicy = { ...DEFAULT_RETRY };
  for (const layer of layers) {
    for (const [k, v] of Object.entries(layer ?? {})) if (v !== undefined) r[k as keyof RetryPolicy] = v;
  }
  if (!Number.isInteger(r.maxAttempts) || r.maxAttempts < 1) throw new RangeError('retry.maxAttempts must be an integer >= 1');
  return r;
}

/** Delay before attempt `failedAttempt + 1`: exponential, capped. No jitter: the retry is per key, not a thundering herd. */
export function backoffMs(policy: RetryPolicy, failedAttempt: number): number {
  return Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** Math.max(0, failedAttempt - 1));
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}

/** First line only, for a header (Kafka headers are small; the full stack stays in the embedded row). */
export function errorSummary(err: unknown): string {
  const s = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return s.slice(0, 1000);
}
