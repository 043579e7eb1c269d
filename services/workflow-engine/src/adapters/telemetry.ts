import { counter, gauge, histogram } from '@flowdesk/telemetry';
import type { RunMetrics } from '../domain/ports.ts';
import type { SandboxMetrics } from './sandbox-pool.ts';

/**
 * The engine's metrics (docs/observability.md). Labels are statuses and node types: a few values
 * each, never a workflow or event id. The per-owner series below (flowdesk_engine_owner_*) are the
 * one exception: an `owner_id` label for at most ENGINE_METRICS_TOP_OWNERS owners (the busiest
 * on this replica), the rest summed under owner_id="other".
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

/** What the per-owner series are read from, at each scrape (wired in app.ts). */
export interface OwnerMetricsSource {
  /** Owners' counters on this replica (domain/fairness.ts). */
  owners(): ReadonlyMap<string, { runs: number; finished: number; throttled: number; refused: Record<string, number> }>;
  /** Whether intake refuses the owner's webhooks now (backlog, 429). */
  intakeThrottled(ownerId: string): boolean;
  /** The owner's sandbox counters (adapters/sandbox-pool.ts). */
  sandbox(): ReadonlyMap<string, { sandboxMs: number; timeouts: number; memoryFailures: number; throttled: number }>;
}

/** Owners with an owner_id label (ENGINE_METRICS_TOP_OWNERS): opt-in, 0 (none) by default, as no id is a label otherwise. */
export const DEFAULT_METRICS_TOP_OWNERS = 0;
/** The most ENGINE_METRICS_TOP_OWNERS may be: each owner is ~10 series. */
export const MAX_METRICS_TOP_OWNERS = 100;
export const OTHER_OWNERS = 'other';

let source: OwnerMetricsSource | undefined;
let topOwners = DEFAULT_METRICS_TOP_OWNERS;

/** Sets where the per-owner series come from and how many owners get a label (the latest engine started in the process). */
export function setOwnerMetricsSource(s: OwnerMetricsSource | undefined, top = DEFAULT_METRICS_TOP_OWNERS): void {
  source = s;
  topOwners = Math.max(0, Math.min(MAX_METRICS_TOP_OWNERS, top));
}

interface OwnerRow {
  runs: number;
  finished: number;
  queued: number;
  intake: number;
  refused: Record<string, number>;
  sandboxSeconds: number;
  timeouts: number;
  memory: number;
  sandboxWaits: number;
}

/** One scrape's rows: the top owners by runs + sandbox seconds, the rest summed as "other". Read once per scrape. */
let snapshot: { at: number; rows: Map<string, OwnerRow> } | undefined;
function ownerRows(): Map<string, OwnerRow> {
  const now = Date.now();
  if (snapshot && now - snapshot.at < 250) return snapshot.rows;
  const rows = new Map<string, OwnerRow>();
  if (source && topOwners > 0) {
    const all = new Map<string, OwnerRow>();
    const row = (id: string): OwnerRow => {
      let r = all.get(id);
      if (!r) all.set(id, (r = { runs: 0, finished: 0, queued: 0, intake: 0, refused: {}, sandboxSeconds: 0, timeouts: 0, memory: 0, sandboxWaits: 0 }));
      return r;
    };
    for (const [id, c] of source.owners()) {
      const r = row(id);
      r.runs = c.runs;
      r.finished = c.finished;
      r.queued = c.throttled;
      r.intake = source.intakeThrottled(id) ? 1 : 0;
      r.refused = { ...c.refused };
    }
    for (const [id, st] of source.sandbox()) {
      const r = row(id);
      r.sandboxSeconds = st.sandboxMs / 1000;
      r.timeouts = st.timeouts;
      r.memory = st.memoryFailures;
      r.sandboxWaits = st.throttled;
    }
    const weight = (r: OwnerRow) => r.runs + r.sandboxSeconds + r.queued + r.intake * 1e9;
    const ranked = [...all].sort((a, b) => weight(b[1]) - weight(a[1]) || (a[0] < b[0] ? -1 : 1));
    for (const [id, r] of ranked.slice(0, topOwners)) rows.set(id, r);
    if (ranked.length > topOwners) {
      const other: OwnerRow = { runs: 0, finished: 0, queued: 0, intake: 0, refused: {}, sandboxSeconds: 0, timeouts: 0, memory: 0, sandboxWaits: 0 };
      for (const [, r] of ranked.slice(topOwners)) {
        other.runs += r.runs;
        other.finished += r.finished;
        other.queued += r.queued;
        other.intake += r.intake;
        other.sandboxSeconds += r.sandboxSeconds;
        other.timeouts += r.timeouts;
        other.memory += r.memory;
        other.sandboxWaits += r.sandboxWaits;
        for (const [q, n] of Object.entries(r.refused)) other.refused[q] = (other.refused[q] ?? 0) + n;
      }
      rows.set(OTHER_OWNERS, other);
    }
  }
  snapshot = { at: now, rows };
  return rows;
}

/**
 * Per-owner series, as gauges set at each scrape from the counters the engine keeps anyway (fairness
 * and the sandbox pool): since this replica started, so they behave as counters except when an owner
 * moves in or out of the top N (its series then moves to or from "other").
 */
const ownerGauge = (name: string, help: string, value: (r: OwnerRow) => number) =>
  gauge<'owner_id'>({
    name,
    help,
    labelNames: ['owner_id'],
    owner,
    collect() {
      this.reset();
      for (const [id, r] of ownerRows()) this.set({ owner_id: id }, value(r));
    },
  });
ownerGauge(
  'flowdesk_engine_owner_runs_started',
  'Runs started on this replica since it started, per owner (top ENGINE_METRICS_TOP_OWNERS; the rest as owner_id="other")',
  (r) => r.runs,
);
ownerGauge('flowdesk_engine_owner_runs_finished', 'Runs that ended on this replica since it started, per owner', (r) => r.finished);
ownerGauge(
  'flowdesk_engine_owner_sandbox_seconds',
  'Sandbox time (Code steps, sandboxed expressions) used on this replica since it started, per owner',
  (r) => r.sandboxSeconds,
);
ownerGauge(
  'flowdesk_engine_owner_runs_queued',
  'Trigger events queued behind the owner’s in-flight cap (ENGINE_OWNER_CONCURRENCY) since this replica started, per owner',
  (r) => r.queued,
);
ownerGauge(
  'flowdesk_engine_owner_intake_throttled',
  '1 while intake answers the owner’s webhooks 429 (backlog past ENGINE_OWNER_MAX_BACKLOG); for "other": how many owners',
  (r) => r.intake,
);
ownerGauge(
  'flowdesk_engine_owner_sandbox_budget_waits',
  'Sandbox jobs that waited for the owner’s budget (ENGINE_SANDBOX_BUDGET_MS_PER_MINUTE) since this replica started, per owner',
  (r) => r.sandboxWaits,
);
gauge<'owner_id' | 'reason'>({
  name: 'flowdesk_engine_owner_sandbox_kills',
  help: 'Sandbox jobs stopped at their time limit (reason="timeout") or whose worker ran out of memory (reason="memory"), per owner',
  labelNames: ['owner_id', 'reason'],
  owner,
  collect() {
    this.reset();
    for (const [id, r] of ownerRows()) {
      this.set({ owner_id: id, reason: 'timeout' }, r.timeouts);
      this.set({ owner_id: id, reason: 'memory' }, r.memory);
    }
  },
});
gauge<'owner_id' | 'quota'>({
  name: 'flowdesk_engine_owner_start_refusals',
  help: 'Starts of runs by runs refused by a quota (depth, child_runs_per_run, starts_per_minute) since this replica started, per owner',
  labelNames: ['owner_id', 'quota'],
  owner,
  collect() {
    this.reset();
    for (const [id, r] of ownerRows()) for (const [quota, n] of Object.entries(r.refused)) this.set({ owner_id: id, quota }, n);
  },
});
