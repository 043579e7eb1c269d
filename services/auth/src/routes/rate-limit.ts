/**
 * A fixed-window counter per key (the caller's address), in memory. Enough for dynamic client
 * registration, which is anonymous by design (RFC 7591 §3) and must not let anyone fill the client
 * table; one process holds it, so each replica counts on its own (documented in docs/auth.md).
 */
export interface RateLimit {
  max: number;
  windowMs: number;
}

export function createRateLimiter(limit: RateLimit, now: () => Date) {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    /** Counts a hit; returns the seconds to wait when over the limit, else 0. */
    hit(key: string): number {
      const t = now().getTime();
      if (windows.size > 10_000) for (const [k, w] of windows) if (t - w.start >= limit.windowMs) windows.delete(k);
      const w = windows.get(key);
      if (!w || t - w.start >= limit.windowMs) {
        windows.set(key, { start: t, count: 1 });
        return 0;
      }
      w.count += 1;
      return w.count > limit.max ? Math.ceil((w.start + limit.windowMs - t) / 1000) : 0;
    },
  };
}
