import type { EventBus } from '@flowdesk/bus';
import { createService, type Service } from '@flowdesk/service-kit';
import { cachedDirectory, type TriggerDirectory } from './domain/trigger-directory.ts';
import { rateLimiter } from './domain/rate-limit.ts';
import { webhookTriggerRoutes } from './routes/webhook-trigger.ts';

/** Largest webhook body accepted, bytes (413 above). Documented in docs/webhooks.md. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

export interface WebhookIngestDeps {
  /** Where trigger events go (Kafka in production, the embedded bus for npm start). */
  bus: EventBus;
  /** Which workflows have an active webhook trigger, and their secrets. Cached here for `directoryTtlMs`. */
  directory: TriggerDirectory;
  /** pino level, or 'silent' (tests). Default LOG_LEVEL or info. */
  logLevel?: string;
  logStream?: { write(line: string): void };
  /** Clock port: signature timestamps, rate limits, receivedAt. */
  clock?: () => Date;
  bodyLimit?: number;
  /** Per workflow and replica: sustained deliveries per second and burst. Default 10/s, burst 50. */
  rateLimit?: { perSecond: number; burst: number };
  /** How long a lookup is trusted. Default 1000 ms: activation and secret changes apply within a second. */
  directoryTtlMs?: number;
}

export async function buildApp(deps: WebhookIngestDeps): Promise<Service> {
  const now = deps.clock ?? (() => new Date());
  const app = createService({ name: 'webhook-ingest', logLevel: deps.logLevel, logStream: deps.logStream, bodyLimit: deps.bodyLimit ?? WEBHOOK_BODY_LIMIT });
  const limit = deps.rateLimit ?? { perSecond: 10, burst: 50 };
  await app.register(
    webhookTriggerRoutes({
      bus: deps.bus,
      directory: cachedDirectory(deps.directory, { ttlMs: deps.directoryTtlMs, now: () => now().getTime() }),
      limiter: rateLimiter({ ...limit, now: () => now().getTime() }),
      now,
    }),
  );
  return app;
}
