import { randomBytes } from 'node:crypto';
import type { EventBus, Subscription } from '@flowdesk/bus';
import {
  OWNER_THROTTLE_TOPIC,
  TRIGGER_TOPIC,
  WEBHOOK_REPLY_TOPIC,
  WORKFLOW_CHANGED_TOPIC,
  type OwnerThrottle,
  type WebhookReply,
  type WorkflowChanged,
} from '@flowdesk/contracts';
import { ownerThrottles } from './domain/owner-throttle.ts';
import { DEFAULT_RESPOND_TIMEOUT_MS, MAX_RESPOND_TIMEOUT_MS, ReplyWaiter } from './domain/reply-waiter.ts';
import { createRateLimiter, createService, type Service } from '@flowdesk/service-kit';
import { cachedDirectory, type TriggerDirectory } from './domain/trigger-directory.ts';
import { rateLimiter } from './domain/rate-limit.ts';
import { backlogGate } from './domain/backlog-gate.ts';
import { webhookTriggerRoutes } from './routes/webhook-trigger.ts';
import { DEFAULT_FORM_SUBMISSIONS_PER_MINUTE, formTriggerRoutes } from './routes/form-trigger.ts';

/** Largest webhook body accepted, bytes (413 above). Documented in docs/webhooks.md. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/** 2,000 deliveries/s per workflow and replica, bursts of 4,000: above what one workflow can run (issue 11). */
export const DEFAULT_RATE_LIMIT = { perSecond: 2_000, burst: 4_000 } as const;

/**
 * A workflow with this many unprocessed trigger events gets 429 + Retry-After (WEBHOOK_MAX_BACKLOG):
 * 10 s of work at the 1,000 runs/s target, well above what a healthy engine keeps waiting.
 */
export const DEFAULT_MAX_BACKLOG = 10_000;
/** The consumer group whose backlog counts: the workflow engine's (its ENGINE_GROUP). */
export const ENGINE_GROUP = 'workflow-engine';

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
  /**
   * Per workflow and replica: sustained deliveries per second and burst, unless the workflow sets its
   * own rate (triggerConfig.rateLimitPerSecond). Default DEFAULT_RATE_LIMIT (sized to the throughput
   * targets, docs/webhooks.md).
   */
  rateLimit?: { perSecond: number; burst: number };
  /**
   * Back-pressure from the engine's real backlog: `maxBacklog` unprocessed events of one workflow
   * (default DEFAULT_MAX_BACKLOG; 0 turns it off), read from the bus at most every `refreshMs`. Only
   * on a bus that can count its backlog per key (the embedded bus); on Kafka admission is by rate.
   */
  backlog?: { maxBacklog?: number; refreshMs?: number; groupId?: string };
  /**
   * How long a lookup is trusted. Default 1000 ms (activation and secret changes apply within a
   * second); 60 s when `definitionEvents` is set, since each change then evicts its entry at once.
   */
  directoryTtlMs?: number;
  /**
   * Follow workflow.changed events (consumer group `groupId`, one per replica: every replica keeps its
   * own cache): each change drops that workflow's cached trigger, so the next delivery reads the new
   * one (secrets never travel on the bus, so the trigger itself is read again, once per change).
   */
  definitionEvents?: { groupId: string };
  /**
   * Follow the engine's owner-throttle events (consumer group `groupId`, one per replica): an owner
   * whose queue of runs passed its share gets 429 + Retry-After on its workflows' webhooks, others
   * are not affected (docs/workflow-engine.md, "Fairness across owners"). Absent: not followed.
   */
  ownerThrottle?: { groupId: string };
  /**
   * Answering the caller (docs/webhooks.md): this replica's id on the reply topic (also its consumer
   * group there, deleted on close) and how long a request waits for its run's answer
   * (RESPOND_TIMEOUT_MS, default 10 s, at most 30 s). Absent: every webhook answers at once.
   * `partition` (REPLY_PARTITION, default 0): the reply topic's partition this replica reads alone on
   * Kafka (docs/event-bus.md, "Reply topic"); a replica whose partition the topic lacks shares
   * partition `partition % count` with a warning.
   */
  replies?: { replica: string; timeoutMs?: number; partition?: number };
  /**
   * Hosted forms (docs/triggers.md, "Form"): `tokenKey` signs the pages' CSRF tokens — the same on
   * every replica (FORM_TOKEN_SECRET, else derived from the service's client secret; absent here: a
   * random key of this process, for one replica), and `submissionsPerMinute` per address and form
   * (FORM_SUBMISSIONS_PER_MINUTE, default 10).
   */
  forms?: { tokenKey?: Buffer; submissionsPerMinute?: number };
}

export async function buildApp(deps: WebhookIngestDeps): Promise<Service> {
  const now = deps.clock ?? (() => new Date());
  const app = createService({
    name: 'webhook-ingest',
    logLevel: deps.logLevel,
    logStream: deps.logStream,
    bodyLimit: deps.bodyLimit ?? WEBHOOK_BODY_LIMIT,
    // Not ready while the bus cannot take deliveries (Kafka unreachable): a load balancer sends
    // webhooks to a replica that can answer 200 rather than 503.
    readiness: deps.bus.ready ? () => deps.bus.ready!() : undefined,
  });
  const limit = deps.rateLimit ?? DEFAULT_RATE_LIMIT;
  const directory = cachedDirectory(deps.directory, { ttlMs: deps.directoryTtlMs ?? (deps.definitionEvents ? 60_000 : 1_000), now: () => now().getTime() });
  const follow = deps.definitionEvents;
  if (follow) {
    let changes: Subscription | undefined;
    app.addHook('onReady', async () => {
      changes = await deps.bus.subscribe<WorkflowChanged>({
        topic: WORKFLOW_CHANGED_TOPIC,
        groupId: follow.groupId,
        ephemeral: true,
        handler: (message) => directory.invalidate?.(message.value.workflowId),
      });
    });
    app.addHook('onClose', async () => {
      await changes?.close();
    });
  }
  const throttles = deps.ownerThrottle ? ownerThrottles(() => now().getTime()) : undefined;
  if (throttles && deps.ownerThrottle) {
    const groupId = deps.ownerThrottle.groupId;
    let events: Subscription | undefined;
    app.addHook('onReady', async () => {
      // Not followed (a Kafka without the topic): the service still takes webhooks, refusing no owner.
      events = await deps.bus
        .subscribe<OwnerThrottle>({
          topic: OWNER_THROTTLE_TOPIC,
          groupId,
          ephemeral: true,
          retry: { maxAttempts: 1 },
          handler: (message) => throttles.apply(message.value),
        })
        .catch((err: unknown) => {
          app.log.warn({ err, topic: OWNER_THROTTLE_TOPIC }, 'owner throttles not followed: no owner is refused for its share');
          return undefined;
        });
    });
    app.addHook('onClose', async () => {
      await events?.close();
    });
  }
  const maxBacklog = deps.backlog?.maxBacklog ?? DEFAULT_MAX_BACKLOG;
  const countBacklog = deps.bus.backlog?.bind(deps.bus);
  const group = deps.backlog?.groupId ?? ENGINE_GROUP;
  const backlog =
    countBacklog && maxBacklog > 0
      ? backlogGate({
          limit: maxBacklog,
          refreshMs: deps.backlog?.refreshMs,
          read: (keys, atMost) => countBacklog(TRIGGER_TOPIC, group, keys, atMost),
          onError: (err) => app.log.warn({ err }, 'backlog not read; admitting on the last count'),
        })
      : undefined;
  const replies = deps.replies
    ? new ReplyWaiter(deps.replies.replica, Math.min(deps.replies.timeoutMs ?? DEFAULT_RESPOND_TIMEOUT_MS, MAX_RESPOND_TIMEOUT_MS))
    : undefined;
  if (replies) {
    let answers: Subscription | undefined;
    const wanted = deps.replies?.partition ?? 0;
    app.addHook('onReady', async () => {
      // Kafka: pinned to one partition, which the engine produces this replica's answers to. The
      // embedded bus has no partitions: the replica reads the whole topic.
      const count = deps.bus.partitionCount ? await deps.bus.partitionCount(WEBHOOK_REPLY_TOPIC) : undefined;
      if (count !== undefined) {
        replies.partition = wanted % count;
        if (wanted >= count)
          app.log.warn(
            { topic: WEBHOOK_REPLY_TOPIC, partitions: count, wanted, partition: replies.partition },
            `replicas outnumber the partitions of ${WEBHOOK_REPLY_TOPIC}: REPLY_PARTITION ${wanted} but the topic has ${count}; sharing partition ${replies.partition} (each replica still gets only its own answers, but reads another's); raise the topic's partitions to the replica count`,
          );
      }
      answers = await deps.bus.subscribe<WebhookReply>({
        topic: WEBHOOK_REPLY_TOPIC,
        groupId: replies.replica,
        ephemeral: true,
        ...(replies.partition === undefined ? {} : { partitions: [replies.partition] }),
        concurrency: 64,
        keyConcurrency: 64,
        retry: { maxAttempts: 1 },
        handler: (message) => replies.deliver(message.value),
      });
    });
    // Held requests answer at once (with their poll link) when the service stops.
    app.addHook('preClose', (done) => {
      replies.close();
      done();
    });
    app.addHook('onClose', async () => {
      await answers?.close();
    });
  }
  // One budget per workflow for its webhook deliveries and its form's submissions.
  const limiter = rateLimiter({ ...limit, now: () => now().getTime() });
  await app.register(webhookTriggerRoutes({ replies, bus: deps.bus, directory, limiter, backlog, throttles, now }));
  await app.register(
    formTriggerRoutes({
      bus: deps.bus,
      directory,
      limiter,
      addressLimiter: createRateLimiter({ max: deps.forms?.submissionsPerMinute ?? DEFAULT_FORM_SUBMISSIONS_PER_MINUTE, windowMs: 60_000 }, now),
      backlog,
      throttles,
      tokenKey: deps.forms?.tokenKey ?? randomBytes(32),
      now,
    }),
  );
  return app;
}
