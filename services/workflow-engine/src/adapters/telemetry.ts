import { counter, histogram } from '@flowdesk/telemetry';

/**
 * The engine's metrics (docs/observability.md). Labels are statuses and node types: a few values
 * each, never a workflow, user or event id.
 */
const owner = 'workflow-engine';
export const runsStarted = counter({ name: 'flowdesk_engine_runs_started_total', help: 'Workflow runs started (claimed and executed)', owner });
export const runsFinished = counter<'status'>({
  name: 'flowdesk_engine_runs_finished_total',
  help: 'Workflow runs finished, by final status (succeeded, failed, skipped)',
  labelNames: ['status'],
  owner,
});
export const runDuration = histogram<'status'>({
  name: 'flowdesk_engine_run_duration_seconds',
  help: 'Wall time of a workflow run, by final status',
  labelNames: ['status'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  owner,
});
export const nodeDuration = histogram<'type' | 'status'>({
  name: 'flowdesk_engine_node_duration_seconds',
  help: 'Execution time of a workflow node, by node type and outcome (succeeded, failed)',
  labelNames: ['type', 'status'],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  owner,
});
export const ssrfRefusals = counter({
  name: 'flowdesk_engine_ssrf_refusals_total',
  help: 'HTTP Request node destinations refused by the SSRF guard (private, loopback, metadata addresses)',
  owner,
});
