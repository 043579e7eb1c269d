/**
 * Admission from the real backlog: a workflow whose unprocessed trigger events (accepted, not yet run
 * to the end by the engine) reach `limit` gets 429 + Retry-After instead of another 200, so a stalled
 * or slow engine makes senders back off instead of piling up work nobody runs.
 *
 * The count comes from the bus (`read`: one query for the workflows seen lately whose estimate reached
 * half the bound, at most every `refreshMs`), plus the deliveries this replica accepted since that read, so a burst is counted at
 * once and not only at the next read. Reads are in the background: a delivery never waits for one.
 * Other replicas' acceptances show up at the next read, so with R replicas the bound can be passed by
 * at most what they accept in `refreshMs`.
 */
export interface BacklogGateOptions {
  limit: number;
  read(keys: string[], atMost: number): Promise<Map<string, number>>;
  /** How stale the bus's count may be (default 250 ms). */
  refreshMs?: number;
  now?: () => number;
  onError?: (err: unknown) => void;
  /** A workflow not seen for this long is no longer read (default 10 s). */
  idleMs?: number;
}

export type BacklogDecision = { allowed: true } | { allowed: false; backlog: number; retryAfterSeconds: number };

/** Retry-After when the backlog is not draining at all (a stalled engine), or no drain was seen yet. */
export const STALLED_RETRY_AFTER_SECONDS = 10;
const MAX_RETRY_AFTER_SECONDS = 60;
/**
 * The drain rate is measured over the reads of the last 10 s, not from one read to the next: a slow
 * workflow (a run every 1.5 s) drains nothing in most 250 ms intervals and one run in some, which a
 * per-interval estimate turns into "stalled" most of the time and 4 runs/s now and then.
 */
const DRAIN_WINDOW_MS = 10_000;

interface KeyState {
  /** The bus's count at the last read. */
  counted: number;
  /** Accepted by this replica since that read was started. */
  acceptedSince: number;
  /** Runs finished since the first read, by read: [when, cumulative drained], the last DRAIN_WINDOW_MS. */
  drained: [number, number][];
  readAt: number | undefined;
  seenAt: number;
}

export function backlogGate(options: BacklogGateOptions) {
  const now = options.now ?? Date.now;
  const refreshMs = options.refreshMs ?? 250;
  const idleMs = options.idleMs ?? 10_000;
  const keys = new Map<string, KeyState>();
  let reading = false;
  let lastRead = -Infinity;

  const refresh = async () => {
    reading = true;
    const t = now();
    lastRead = t;
    // Forget idle workflows, but not one whose backlog is still high: its sender may come back.
    for (const [k, s] of keys) if (t - s.seenAt > idleMs && s.counted + s.acceptedSince < options.limit / 2) keys.delete(k);
    // Only workflows whose estimate reached half the bound are read: below it the estimate (the last
    // count plus every acceptance since, never lowered without a read) is admitted without asking,
    // so a read costs O(busy workflows × bound), not O(all workflows × bound).
    const asked = [...keys.entries()]
      .filter(([, s]) => s.counted + s.acceptedSince >= options.limit / 2)
      .map(([k, s]) => ({ k, s, accepted: s.acceptedSince }));
    if (asked.length === 0) {
      reading = false;
      return;
    }
    try {
      const counts = await options.read(
        asked.map((a) => a.k),
        options.limit + 1,
      );
      const at = now();
      for (const { k, s, accepted } of asked) {
        const counted = counts.get(k) ?? 0;
        // What went in (the last count plus what was accepted meanwhile) minus what is left.
        const drained = s.readAt === undefined ? 0 : Math.max(0, s.counted + accepted - counted);
        s.drained.push([at, (s.drained.at(-1)?.[1] ?? 0) + drained]);
        // Keep the newest sample older than the window as the window's start.
        while (s.drained.length > 2 && at - s.drained[1]![0] >= DRAIN_WINDOW_MS) s.drained.shift();
        s.counted = counted;
        s.acceptedSince -= accepted; // those are in the count now
        s.readAt = at;
      }
    } catch (err) {
      options.onError?.(err);
    } finally {
      reading = false;
    }
  };

  return {
    /** Whether one more delivery to `key` may be accepted now. */
    admit(key: string): BacklogDecision {
      const t = now();
      let s = keys.get(key);
      if (!s) keys.set(key, (s = { counted: 0, acceptedSince: 0, drained: [], readAt: undefined, seenAt: t }));
      s.seenAt = t;
      if (!reading && t - lastRead >= refreshMs) void refresh();
      const backlog = s.counted + s.acceptedSince;
      if (backlog < options.limit) return { allowed: true };
      const excess = backlog - options.limit + 1;
      const rate = drainPerSecond(s);
      // The time the backlog needs to fall under the bound at the measured rate, 1–60 s.
      const retryAfterSeconds = rate <= 0 ? STALLED_RETRY_AFTER_SECONDS : Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(excess / rate)));
      return { allowed: false, backlog, retryAfterSeconds };
    },
    /** A delivery to `key` was handed over to the bus (counted until the next read sees it). */
    accepted(key: string): void {
      const s = keys.get(key);
      if (s) s.acceptedSince++;
    },
    /** Resolves once the read in progress (if any) has finished: tests. */
    async settle(): Promise<void> {
      while (reading) await new Promise((r) => setTimeout(r, 5));
    },
  };
}

/** Runs finished per second over the reads of the window; 0 when none finished or fewer than two reads. */
function drainPerSecond(s: KeyState): number {
  const first = s.drained[0];
  const last = s.drained.at(-1);
  if (!first || !last || last[0] <= first[0]) return 0;
  return ((last[1] - first[1]) * 1000) / (last[0] - first[0]);
}
