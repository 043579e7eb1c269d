import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { HttpError, TRIGGER_TOPIC } from '@flowdesk/contracts';
import type { EventBus } from '@flowdesk/bus';
import type { TriggerDirectory } from '../domain/trigger-directory.ts';
import { checkSecretHeader, checkStandardWebhook } from '../domain/signatures.ts';
import { triggerEventOf } from '../domain/trigger-event.ts';
import type { rateLimiter } from '../domain/rate-limit.ts';

export const WEBHOOK_PATH = '/functions/v1/webhook-trigger/:workflowId';

export interface WebhookRouteDeps {
  bus: EventBus;
  directory: TriggerDirectory;
  limiter: ReturnType<typeof rateLimiter>;
  now: () => Date;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** One answer for unknown, non-webhook and inactive workflows: a URL holder learns nothing more. */
const NOT_REGISTERED = () => new HttpError('not_found', 'No active webhook is registered at this URL');

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
  }
}

/** True when a key or string anywhere in a parsed JSON value holds U+0000. */
function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(containsNul);
  return Object.entries(value).some(([k, v]) => k.includes('\0') || containsNul(v));
}

/**
 * POST /functions/v1/webhook-trigger/<workflow_id>: checks, publishes a trigger event, answers 200
 * once the event is durably handed over (the bus's publish resolves after acks=all / commit), so a
 * 200 never loses an event. The workflow itself runs asynchronously in the engine.
 */
export function webhookTriggerRoutes(deps: WebhookRouteDeps): FastifyPluginAsync {
  return async (app) => {
    // JSON only (application/json or any +json type), kept as raw bytes for signature checks; the
    // default JSON parser is replaced in this route's scope so every body takes this path.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser(/^application\/([\w.+-]+\+)?json\s*(;.*)?$/i, { parseAs: 'buffer' }, (req: FastifyRequest, body: Buffer, done) => {
      req.rawBody = body;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return done(new HttpError('bad_request', 'Body is not valid JSON'), undefined);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        return done(new HttpError('bad_request', 'Body must be a JSON object'), undefined);
      }
      // Valid JSON, but no Postgres jsonb column (the bus, the run record) can hold a NUL, so the event
      // could never be stored or run: a 400 tells the sender now, instead of a 503 it would retry forever.
      if (body.includes('\\u0000') && containsNul(parsed)) {
        return done(new HttpError('bad_request', 'Body must not contain the NUL character (\\u0000) in a key or string'), undefined);
      }
      done(null, parsed);
    });

    app.post<{ Params: { workflowId: string }; Body: Record<string, unknown> }>(WEBHOOK_PATH, async (req, reply) => {
      const { workflowId } = req.params;
      if (!UUID.test(workflowId)) throw NOT_REGISTERED();
      if (req.body === undefined) throw new HttpError('bad_request', 'Body must be a JSON object');

      const decision = deps.limiter.take(workflowId);
      if (!decision.allowed) {
        throw new HttpError('rate_limited', 'Too many deliveries to this webhook; retry later', {
          'retry-after': String(decision.retryAfterSeconds),
        });
      }

      const trigger = await deps.directory.lookup(workflowId.toLowerCase());
      if (!trigger || !trigger.active) throw NOT_REGISTERED();

      const now = deps.now();
      if (trigger.requireSecret) {
        const v = checkSecretHeader(trigger.secret, single(req.headers['x-webhook-secret']));
        if (!v.ok) throw new HttpError('unauthorized', v.reason);
      }
      if (trigger.signature === 'standard-webhooks') {
        const v = checkStandardWebhook(trigger.secret, req.headers, req.rawBody ?? Buffer.alloc(0), now.getTime());
        if (!v.ok) throw new HttpError('unauthorized', v.reason);
      }

      const event = triggerEventOf(trigger, req.body, req.headers, now);
      try {
        await deps.bus.publish(TRIGGER_TOPIC, [{ key: trigger.workflowId, value: event }]);
      } catch (err) {
        req.log.error({ err, workflowId }, 'could not hand the trigger event over');
        throw new HttpError('unavailable', 'The delivery could not be stored; retry later', { 'retry-after': '5' });
      }
      req.log.info({ workflowId, eventId: event.eventId }, 'webhook accepted');
      return reply.code(200).send({ accepted: true, eventId: event.eventId });
    });
  };
}

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
