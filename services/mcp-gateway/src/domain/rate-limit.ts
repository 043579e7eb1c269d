/** How many hits a key may make per window. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/**
 * A fixed-window counter per key (the caller's address), in this process's memory: each replica
 * counts on its own. At most 10,000 keys are kept; past that, finished windows are dropped first.
 */
export function createRateLimiter(limit: RateLimit, now: () => Date) {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    /** Counts a hit; returns the seconds to wait when over the limit, else 0. */
    hit(key: string): number {
      const t = now().getTime();
      if (windows.size >= 10_000) {
        for (const [k, w] of windows) if (t - w.start >= limit.windowMs) windows.delete(k);
        if (windows.size >= 10_000) windows.delete(windows.keys().next().value!);
      }
      const w = windows.get(key);
      if (!w || t - w.start >= limit.windowMs) {
        windows.set(key, { start: t, count: 1 });
        return 0;
      }
      w.count += 1;
      return w.count > limit.max ? Math.max(1, Math.ceil((w.start + limit.windowMs - t) / 1000)) : 0;
    },
  };
}
