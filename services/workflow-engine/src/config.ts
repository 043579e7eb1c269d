/**
 * How many runs a replica handles and how often it looks for schedule ticks (docs/configuration.md):
 * ENGINE_CONCURRENCY, ENGINE_WORKFLOW_CONCURRENCY, SCHEDULER_POLL_MS (0: this replica fires no
 * schedules). Read by the service's main and by the embedded start alike.
 */
export interface EngineTuning {
  concurrency: number;
  workflowConcurrency: number;
  scheduler: { pollMs: number };
}

export const positiveInteger = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => {
  const v = Number(env[name] || fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
};

export function engineTuningFromEnv(env: NodeJS.ProcessEnv): EngineTuning {
  return {
    concurrency: positiveInteger(env, 'ENGINE_CONCURRENCY', 256),
    workflowConcurrency: positiveInteger(env, 'ENGINE_WORKFLOW_CONCURRENCY', 128),
    scheduler: { pollMs: env.SCHEDULER_POLL_MS === '0' ? 0 : positiveInteger(env, 'SCHEDULER_POLL_MS', 1_000) },
  };
}
