import type { OwnerThrottle } from '@flowdesk/contracts';

/**
 * Owners the engine throttles (docs/workflow-engine.md, "Fairness across owners"): their queue of runs
 * passed its share, so their workflows' webhooks are answered 429 with a Retry-After from the engine's
 * drain rate, counted down since the engine said it; other owners' are not touched. Fed by the
 * engine's owner-throttle events (the latest per owner wins); a throttle not refreshed lapses at its
 * `until`, so a stopped engine or a lost "lifted" event never refuses an owner for long.
 */
export function ownerThrottles(now: () => number = Date.now) {
  const owners = new Map<string, { backlog: number; retryAfterSeconds: number; at: number; until: number }>();
  return {
    apply(state: OwnerThrottle): void {
      if (!state.throttled) {
        owners.delete(state.ownerId);
        return;
      }
      if (owners.size > 100_000) owners.clear();
      owners.set(state.ownerId, { backlog: state.backlog, retryAfterSeconds: state.retryAfterSeconds, at: now(), until: Date.parse(state.until) });
    },
    /** The refusal for the owner's next delivery, or undefined (admitted). */
    check(ownerId: string): { backlog: number; retryAfterSeconds: number } | undefined {
      const s = owners.get(ownerId);
      if (!s) return undefined;
      const t = now();
      if (!(t < s.until)) {
        owners.delete(ownerId);
        return undefined;
      }
      return { backlog: s.backlog, retryAfterSeconds: Math.max(1, s.retryAfterSeconds - Math.floor((t - s.at) / 1000)) };
    },
  };
}
