/**
 * Per-workflow token buckets: `burst` deliveries at once, refilled at `perSecond`. In memory, per
 * replica: the limit protects the engine and the database from one runaway sender, it is not a quota.
 */
export interface RateLimitOptions {
  perSecond: number;
  burst: number;
  now?: () => number;
  /** Buckets kept at most; idle full buckets are dropped first. */
  maxKeys?: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export function rateLimiter(options: RateLimitOptions) {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 50_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    /** `perSecond`: this key's own rate (its burst scales with it), else the default. */
    take(key: string, perSecond?: number): RateDecision {
      const t = now();
      const rate = perSecond ?? options.perSecond;
      const burst = perSecond === undefined ? options.burst : Math.max(1, Math.round((options.burst / options.perSecond) * perSecond));
      const b = buckets.get(key) ?? { tokens: burst, at: t };
      b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * rate);
      b.at = t;
      if (buckets.size >= maxKeys && !buckets.has(key)) {
        for (const [k, v] of buckets) if (v.tokens >= burst) buckets.delete(k);
      }
      buckets.set(key, b);
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return { allowed: true };
      }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / rate)) };
    },
  };
}
