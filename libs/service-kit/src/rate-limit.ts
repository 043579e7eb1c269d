/** How many hits a key may make per window. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/** Keys kept at most by default (see `createRateLimiter`). */
export const RATE_LIMIT_MAX_KEYS = 10_000;

/**
 * A fixed-window counter per key (the caller's address), in this process's memory: each replica
 * counts on its own. Used by auth's dynamic client registration and the gateway's anonymous
 * `initialize`. At most `maxKeys` keys are kept (default 10,000), so a caller rotating addresses cannot
 * grow the map without bound: past the cap, finished windows are dropped first, then the oldest key.
 */
export function createRateLimiter(limit: RateLimit, now: () => Date, options: { maxKeys?: number } = {}) {
  const maxKeys = options.maxKeys ?? RATE_LIMIT_MAX_KEYS;
  const windows = new Map<string, { start: number; count: number }>();
  return {
    /** Counts a hit; returns the seconds to wait when over the limit (at least 1), else 0. */
    hit(key: string): number {
      const t = now().getTime();
      if (windows.size >= maxKeys && !windows.has(key)) {
        for (const [k, w] of windows) if (t - w.start >= limit.windowMs) windows.delete(k);
        if (windows.size >= maxKeys) windows.delete(windows.keys().next().value!);
      }
      const w = windows.get(key);
      if (!w || t - w.start >= limit.windowMs) {
        windows.set(key, { start: t, count: 1 });
        return 0;
      }
      w.count += 1;
      return w.count > limit.max ? Math.max(1, Math.ceil((w.start + limit.windowMs - t) / 1000)) : 0;
    },
    /** Keys currently counted. */
    get size(): number {
      return windows.size;
    },
  };
}
