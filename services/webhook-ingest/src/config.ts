import { DEFAULT_MAX_BACKLOG, DEFAULT_RATE_LIMIT, type WebhookIngestDeps } from './app.ts';

/**
 * Admission from the environment (docs/configuration.md): WEBHOOK_RATE_LIMIT_PER_SECOND,
 * WEBHOOK_RATE_LIMIT_BURST and WEBHOOK_MAX_BACKLOG. Read by the service's main and by the embedded
 * start alike, so both ways of running honour them.
 */
export function admissionFromEnv(env: NodeJS.ProcessEnv): Required<Pick<WebhookIngestDeps, 'rateLimit'>> & { backlog: { maxBacklog: number } } {
  const rate = (name: string, fallback: number) => {
    const v = Number(env[name] || fallback);
    if (!(v > 0)) throw new Error(`${name} must be a positive number`);
    return v;
  };
  const raw = env.WEBHOOK_MAX_BACKLOG;
  const maxBacklog = raw ? Number(raw) : DEFAULT_MAX_BACKLOG;
  if (!Number.isSafeInteger(maxBacklog) || maxBacklog < 0) throw new Error('WEBHOOK_MAX_BACKLOG must be a whole number ≥ 0 (0 turns it off)');
  return {
    rateLimit: {
      perSecond: rate('WEBHOOK_RATE_LIMIT_PER_SECOND', DEFAULT_RATE_LIMIT.perSecond),
      burst: rate('WEBHOOK_RATE_LIMIT_BURST', DEFAULT_RATE_LIMIT.burst),
    },
    backlog: { maxBacklog },
  };
}
