/**
 * Every write of a run goes through recordRun (docs/workflow-engine.md, "Never lost silently"): the
 * trigger consumer's claim and outcome (process-trigger.ts) and the dead-letter subscriber's failed
 * run (app.ts).
 */
import type { ClaimResult, RunRecorder, RunWrite } from './ports.ts';

/** The short reason of a failed write, for a run's error and its placeholder payload. */
export const writeErrorText = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 500);

/**
 * What a run keeps instead of a trigger payload the store refused (docs/workflow-engine.md,
 * "Never lost silently"): `{"_unstorable": "<reason>"}`.
 */
export const unstorablePayload = (err: unknown): Record<string, unknown> => ({ _unstorable: writeErrorText(err) });

/**
 * True for a payload recorded as the placeholder above, or as the older `{"unstorablePayload": true}`
 * that runs recorded before it still hold (such a run cannot be run again).
 */
export const isUnstorablePayload = (payload: Record<string, unknown>): boolean => payload.unstorablePayload === true || typeof payload._unstorable === 'string';

/**
 * What recordRun did: `claimed` as RunRecorder.claim answers it (for a claim: a new run, one claimed
 * before, or false when it had finished), `written` whether the row was written; `replaced` when the
 * fallback was written instead.
 */
export interface Recorded {
  claimed: ClaimResult;
  written: boolean;
  replaced: boolean;
  /** The store's error for the refused write, when `replaced`. */
  err?: unknown;
}

/**
 * Records one write of a run. A write the store refuses for the data it carries (runs.isUnstorable:
 * it can never succeed, so retrying would only delay the dead letter) is replaced by
 * `fallback(reason, err)` — the run recorded as failed, saying why — and written once; without a
 * fallback, or for any other error (the database unreachable), the error is thrown and the bus retries
 * the event.
 */
export async function recordRun(runs: RunRecorder, write: RunWrite, fallback?: (reason: string, err: unknown) => RunWrite): Promise<Recorded> {
  try {
    const claimed = await runs.claim(write);
    return { claimed, written: claimed !== false, replaced: false };
  } catch (err) {
    if (!fallback || !runs.isUnstorable(err)) throw err;
    const claimed = await runs.claim(fallback(writeErrorText(err), err));
    return { claimed, written: claimed !== false, replaced: true, err };
  }
}
