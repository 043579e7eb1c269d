/**
 * A node's retry policy (docs/workflow-engine.md, "Retries"; the schema is libs/contracts
 * nodes/define.ts RetryPolicySchema): which failures are repeated and how long to wait before each
 * repeat. The executor applies it around a step's execution; every delay goes through one sleeper
 * (EnginePorts.sleep), so tests use a fake one and a parking primitive can later take long delays
 * out of memory.
 */
import { RETRY_DEFAULTS, type RetryOn, type RetryPolicy } from '@flowdesk/contracts';
import { findCause, NetworkError, RequestTimeoutError } from './errors.ts';

export interface ResolvedRetry {
  attempts: number;
  backoff: 'fixed' | 'exponential';
  delayMs: number;
  maxDelayMs: number;
  jitter: boolean;
  on: ReadonlySet<RetryOn>;
}

export const NO_RETRY: ResolvedRetry = resolveRetry(undefined);

/** The policy with its defaults filled in; absent: one attempt (no retry). */
export function resolveRetry(policy: RetryPolicy | undefined): ResolvedRetry {
  return {
    attempts: policy?.attempts ?? RETRY_DEFAULTS.attempts,
    backoff: policy?.backoff ?? RETRY_DEFAULTS.backoff,
    delayMs: policy?.delayMs ?? RETRY_DEFAULTS.delayMs,
    maxDelayMs: policy?.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs,
    jitter: policy?.jitter ?? RETRY_DEFAULTS.jitter,
    on: new Set(policy?.on ?? RETRY_DEFAULTS.on),
  };
}

/** What a failure was, for `on`: a network error, a timeout, an HTTP status class, or something else. */
export type FailureKind = Exclude<RetryOn, 'any'> | 'other';

/** Classifies a step's failure by its error: the guarded client's NetworkError and RequestTimeoutError, or an error carrying an HTTP `status`. */
export function failureKind(err: unknown): FailureKind {
  if (findCause(err, RequestTimeoutError)) return 'timeout';
  if (findCause(err, NetworkError)) return 'network';
  const status = statusOf(err);
  if (status === 429) return '429';
  if (status !== undefined && status >= 500 && status <= 599) return '5xx';
  return 'other';
}

/** The policy repeats this kind of failure. */
export function retries(policy: ResolvedRetry, kind: FailureKind): boolean {
  return policy.on.has('any') || (kind !== 'other' && policy.on.has(kind));
}

/**
 * The delay before retry number `n` (1 = the second attempt): fixed `delayMs`; exponential
 * `delayMs·2^(n-1)` capped at `maxDelayMs`, with full jitter (uniform in [0, that]) when `jitter`.
 */
export function backoffDelay(policy: ResolvedRetry, n: number, random: () => number): number {
  if (policy.backoff === 'fixed') return Math.min(policy.delayMs, policy.maxDelayMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.delayMs * 2 ** Math.min(n - 1, 30));
  return policy.jitter ? Math.floor(random() * ceiling) : ceiling;
}

/**
 * The delay before retrying `err`: a 429 (or 503) answer's Retry-After (delta-seconds or an HTTP
 * date) capped at `maxDelayMs`, else the backoff.
 */
export function retryDelay(policy: ResolvedRetry, n: number, err: unknown, random: () => number, now: number): number {
  const status = statusOf(err);
  if (status === 429 || status === 503) {
    const after = retryAfterMs((err as { retryAfter?: unknown }).retryAfter, now);
    if (after !== null) return Math.min(after, policy.maxDelayMs);
  }
  return backoffDelay(policy, n, random);
}

/** Retry-After as delta-seconds or an HTTP date, in ms from `now` (never negative); null when absent or unreadable. */
export function retryAfterMs(value: unknown, now: number): number | null {
  if (typeof value !== 'string' || !value.trim()) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(at - now, 0);
}

function statusOf(err: unknown): number | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    const status = (e as { status?: unknown }).status;
    if (typeof status === 'number') return status;
  }
  return undefined;
}

/** The default sleeper: a timer, rejected with the signal's reason when it aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
