/**
 * What the console says about an owner's throttle (GET /api/v1/workflow-runs/usage, contracts
 * OwnerUsage; docs/workflow-engine.md, "Fairness across owners"): whether one workflow is throttled
 * now, why, and when it eases.
 */
import type { OwnerUsage, ThrottleReason } from '@flowdesk/contracts';

export interface WorkflowThrottleView {
  reason: ThrottleReason;
  /** Short: the badge's text after "Throttled". */
  label: string;
  /** A sentence: what is held back, and which limit. */
  detail: string;
  /** When it is expected to ease, as a phrase ("in about 12 s", "as your running runs end"). */
  eases: string;
}

const LABEL: Record<ThrottleReason, string> = {
  backlog: 'webhooks refused (429)',
  in_flight: 'runs queued',
  sandbox_budget: 'sandbox budget used',
};

/** "in about N s" (or min), or the fallback when the engine gives no estimate. */
export function easesIn(seconds: number | null, fallback = 'as your running runs end'): string {
  if (seconds === null) return fallback;
  if (seconds < 90) return `in about ${Math.max(1, seconds)} s`;
  return `in about ${Math.round(seconds / 60)} min`;
}

/**
 * The workflow's throttle, or null: its runs wait in the owner's queue (backlog past its bound, or
 * the owner at its in-flight cap), the owner's webhooks are refused (every webhook workflow of the
 * owner), or the owner's sandbox budget is used up (its Code steps wait).
 */
export function workflowThrottle(usage: OwnerUsage, workflowId: string): WorkflowThrottleView | null {
  const own = usage.workflows.find((w) => w.workflowId === workflowId);
  const byReason = new Map(usage.throttle.reasons.map((r) => [r.reason, r]));
  // The most severe first: webhooks refused, then runs queued, then the sandbox budget.
  const reason: ThrottleReason | undefined = byReason.has('backlog')
    ? 'backlog'
    : own
      ? own.reason
      : byReason.has('sandbox_budget')
        ? 'sandbox_budget'
        : undefined;
  if (!reason) return null;
  const state = byReason.get(reason);
  const retryAfter = state?.retryAfterSeconds ?? own?.retryAfterSeconds ?? null;
  const queued = own ? ` ${own.queued} of this workflow’s runs are waiting.` : '';
  const detail = state
    ? `${state.message} (${state.setting}).${queued}`
    : `Runs wait behind your cap of ${usage.ownerConcurrency} in flight (ENGINE_OWNER_CONCURRENCY).${queued}`;
  return { reason, label: LABEL[reason], detail, eases: easesIn(retryAfter) };
}

/** Sandbox time used this minute as a percentage of the budget (0–100, for a progress bar). */
export function budgetPercent(usage: OwnerUsage): number {
  const { usedMsPerMinute, budgetMsPerMinute } = usage.sandbox;
  return Math.min(100, Math.round((usedMsPerMinute / Math.max(1, budgetMsPerMinute)) * 100));
}
