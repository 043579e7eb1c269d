import { counter, histogram } from '@flowdesk/telemetry';
import type { RunMetrics } from '../domain/ports.ts';
import type { SandboxMetrics } from './sandbox-pool.ts';

/**
 * The engine's metrics (docs/observability.md). Labels are statuses and node types: a few values
 * each, never a workflow, user or event id.
 */
const owner = 'workflow-engine';
const runsStarted = counter({ name: 'flowdesk_engine_runs_started_total', help: 'Workflow runs started (claimed and executed)', owner });
const runsFinished = counter<'status'>({
  name: 'flowdesk_engine_runs_finished_total',
  help: 'Workflow runs finished, by final status (succeeded, failed, skipped)',
  labelNames: ['status'],
  owner,
});
const runDuration = histogram<'status'>({
  name: 'flowdesk_engine_run_duration_seconds',
  help: 'Wall time of a workflow run, by final status',
  labelNames: ['status'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  owner,
});
const nodeDuration = histogram<'type' | 'status'>({
  name: 'flowdesk_engine_node_duration_seconds',
  help: 'Execution time of a workflow node, by node type and outcome (succeeded, failed)',
  labelNames: ['type', 'status'],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  owner,
});
const ssrfRefusals = counter({
  name: 'flowdesk_engine_ssrf_refusals_total',
  help: 'HTTP Request node destinations refused by the SSRF guard (private, loopback, metadata addresses)',
  owner,
});

const startQuotaRefusals = counter<'quota'>({
  name: 'flowdesk_engine_start_quota_refusals_total',
  help: 'Runs a workflow tried to start and a quota refused (depth, child_runs_per_run, starts_per_minute); per owner: GET /api/v1/usage',
  labelNames: ['quota'],
  owner,
});

const runsThrottled = counter({
  name: 'flowdesk_engine_runs_throttled_total',
  help: 'Trigger events that found their owner at its in-flight cap (ENGINE_OWNER_CONCURRENCY) and were queued; per owner: GET /api/v1/workflow-runs/usage',
  owner,
});

/** An event queued behind its owner's cap (domain/fairness.ts). */
export const countThrottled = (): void => runsThrottled.inc();

/** A start refused by a quota (domain/quotas.ts), by which. */
export const countStartRefused = (quota: string): void => startQuotaRefusals.inc({ quota });

/** The domain's RunMetrics port over the metrics above (wired in app.ts). */
export const runMetrics: RunMetrics = {
  runStarted: () => runsStarted.inc(),
  runFinished: (status, seconds) => {
    runsFinished.inc({ status });
    runDuration.observe({ status }, seconds);
  },
  nodeFinished: (type, status, seconds) => nodeDuration.observe({ type, status }, seconds),
  ssrfRefused: () => ssrfRefusals.inc(),
};

const sandboxJobs = counter<'kind' | 'outcome'>({
  name: 'flowdesk_engine_sandbox_jobs_total',
  help: 'Sandbox jobs (Code steps, a step’s sandboxed expressions) finished, by kind and outcome (ok, error, timeout, memory)',
  labelNames: ['kind', 'outcome'],
  owner,
});
const sandboxSeconds = counter<'kind'>({
  name: 'flowdesk_engine_sandbox_seconds_total',
  help: 'Time sandbox jobs held a worker, by kind (per owner: SandboxPool.ownerStats)',
  labelNames: ['kind'],
  owner,
});
const sandboxThrottled = counter({
  name: 'flowdesk_engine_sandbox_throttled_total',
  help: 'Sandbox jobs that waited because their owner was past its budget of sandbox time per minute',
  owner,
});

/** The sandbox pool's counters (adapters/sandbox-pool.ts). */
export const sandboxMetrics: SandboxMetrics = {
  jobFinished: (kind, outcome, seconds) => {
    sandboxJobs.inc({ kind, outcome });
    sandboxSeconds.inc({ kind }, seconds);
  },
  throttled: () => sandboxThrottled.inc(),
};
