import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { HttpError, responseHeaderProblem, TRIGGER_TOPIC } from '@flowdesk/contracts';
import type { ReplyWaiter } from '../domain/reply-waiter.ts';
import type { EventBus } from '@flowdesk/bus';
import type { TriggerDirectory } from '../domain/trigger-directory.ts';
import { checkSecretHeader, checkStandardWebhook } from '../domain/signatures.ts';
import { triggerEventOf } from '../domain/trigger-event.ts';
import { payloadProblem } from '../domain/payload-rules.ts';
import { multipartFields, urlencodedFields } from '../domain/form-body.ts';
import type { rateLimiter } from '../domain/rate-limit.ts';
import type { backlogGate } from '../domain/backlog-gate.ts';
import type { ownerThrottles } from '../domain/owner-throttle.ts';
import { countDelivery } from '../adapters/telemetry.ts';

export const WEBHOOK_PATH = '/functions/v1/webhook-trigger/:workflowId';

export interface WebhookRouteDeps {
  bus: EventBus;
  directory: TriggerDirectory;
  limiter: ReturnType<typeof rateLimiter>;
  /** Back-pressure from the engine's backlog (absent: admission by rate only). */
  backlog?: ReturnType<typeof backlogGate>;
  /** Owners the engine throttles (their queue of runs passed its share); absent: not followed. */
  throttles?: ReturnType<typeof ownerThrottles>;
  now: () => Date;
  /** The requests held for the engine's answer (docs/webhooks.md, "Answering the caller"); absent: every webhook answers at once. */
  replies?: ReplyWaiter;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** One answer for unknown, non-webhook and inactive workflows: a URL holder learns nothing more. */
const NOT_REGISTERED = () => new HttpError('not_found', 'No active webhook is registered at this URL');

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
  }
}

/**
 * POST /functions/v1/webhook-trigger/<workflow_id>: checks, publishes a trigger event, answers 200
 * once the event is durably handed over (the bus's publish resolves after acks=all / commit), so a
 * 200 never loses an event. The workflow itself runs asynchronously in the engine.
 */
export function webhookTriggerRoutes(deps: WebhookRouteDeps): FastifyPluginAsync {
  return async (app) => {
    // Every answer of this route, refusals by the parser included, counted by outcome.
    app.addHook('onResponse', (_req, reply, done) => {
      countDelivery(reply.statusCode);
      done();
    });
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
      // Valid JSON that could never be stored or run (NUL, lone surrogates, prototype keys, deep
      // nesting): a 400 tells the sender now, instead of a 200 with no run or a 503 retried forever.
      const problem = payloadProblem(parsed);
      if (problem) return done(new HttpError('bad_request', problem), undefined);
      done(null, parsed);
    });

    // HTML forms (docs/webhooks.md, "Form posts"): their fields become the trigger data; the bytes are kept as for JSON.
    const formParsed = (req: FastifyRequest, body: Buffer, fields: Record<string, unknown>, done: (err: Error | null, body?: unknown) => void) => {
      req.rawBody = body;
      const problem = payloadProblem(fields);
      return problem ? done(new HttpError('bad_request', problem.replace(/^Body/, 'The form')), undefined) : done(null, fields);
    };
    app.addContentTypeParser(/^application\/x-www-form-urlencoded\s*(;.*)?$/i, { parseAs: 'buffer' }, (req: FastifyRequest, body: Buffer, done) => {
      let fields: Record<string, unknown>;
      try {
        fields = urlencodedFields(body);
      } catch (err) {
        return done(err as Error, undefined);
      }
      formParsed(req, body, fields, done);
    });
    app.addContentTypeParser(/^multipart\/form-data\s*(;.*)?$/i, { parseAs: 'buffer' }, (req: FastifyRequest, body: Buffer, done) => {
      multipartFields(body, req.headers['content-type'] ?? '').then(
        (fields) => formParsed(req, body, fields, done),
        (err: Error) => done(err, undefined),
      );
    });

    app.post<{ Params: { workflowId: string }; Body: Record<string, unknown> }>(WEBHOOK_PATH, async (req, reply) => {
      const { workflowId } = req.params;
      if (!UUID.test(workflowId)) throw NOT_REGISTERED();
      if (req.body === undefined) throw new HttpError('bad_request', 'Body must be a JSON object');

      // One budget per workflow whatever the case of its id in the URL (UUIDs are case-insensitive).
      const id = workflowId.toLowerCase();
      const trigger = await deps.directory.lookup(id);
      if (!trigger || !trigger.active) throw NOT_REGISTERED();

      // Admission: the workflow's own rate (triggerConfig.rateLimitPerSecond) or the global default.
      const decision = deps.limiter.take(id, trigger.rateLimitPerSecond);
      if (!decision.allowed) {
        throw new HttpError('rate_limited', 'Too many deliveries to this webhook; retry later', {
          'retry-after': String(decision.retryAfterSeconds),
        });
      }

      // Fairness: this workflow's owner has more runs waiting than its share; only its workflows are refused.
      const throttled = deps.throttles?.check(trigger.ownerId);
      if (throttled) {
        throw new HttpError('rate_limited', `This workflow's owner has ${throttled.backlog} runs waiting for their share of the engine; retry later`, {
          'retry-after': String(throttled.retryAfterSeconds),
        });
      }

      // Back-pressure: the engine is behind on this workflow; refuse now rather than queue what it
      // cannot run soon. Nothing is published, so nothing acknowledged can be lost.
      const pressure = deps.backlog?.admit(id);
      if (pressure && !pressure.allowed) {
        throw new HttpError('rate_limited', `This workflow has ${pressure.backlog} deliveries waiting to run; retry later`, {
          'retry-after': String(pressure.retryAfterSeconds),
        });
      }

      const now = deps.now();
      // A signed workflow is authenticated by its signature (keyed with the same secret, over the body):
      // the sender needs no x-webhook-secret header beside it, whatever requireSecret says.
      if (trigger.requireSecret && trigger.signature !== 'standard-webhooks') {
        const v = checkSecretHeader(trigger.secret, single(req.headers['x-webhook-secret']));
        if (!v.ok) throw new HttpError('unauthorized', v.reason);
      }
      if (trigger.signature === 'standard-webhooks') {
        const v = checkStandardWebhook(trigger.secret, req.headers, req.rawBody ?? Buffer.alloc(0), now.getTime());
        if (!v.ok) throw new HttpError('unauthorized', v.reason);
      }

      const event = triggerEventOf(trigger, req.body, req.headers, now, req.rawBody);
      // A workflow that answers later (responseMode): the wait is registered before the event is
      // published, so its answer cannot arrive unheard; immediate mode costs one comparison.
      const mode = trigger.responseMode;
      const waiter = mode && mode !== 'immediately' && deps.replies?.canWait() ? deps.replies : undefined;
      const wait = waiter?.register(event.eventId);
      if (waiter && mode !== undefined && mode !== 'immediately')
        event.replyTo = { replica: waiter.replica, mode, ...(waiter.partition === undefined ? {} : { partition: waiter.partition }) };
      try {
        // A workflow set to "one at a time, in order" (its definition's executionOrder) has its events
        // marked ordered: the engine then runs them one after the other, in this order.
        await deps.bus.publish(TRIGGER_TOPIC, [{ key: trigger.workflowId, value: event, ...(trigger.executionOrder === 'ordered' ? { ordered: true } : {}) }]);
      } catch (err) {
        wait?.cancel();
        req.log.error({ err, workflowId }, 'could not hand the trigger event over');
        throw new HttpError('unavailable', 'The delivery could not be stored; retry later', { 'retry-after': '5' });
      }
      deps.backlog?.accepted(id);
      req.log.info({ workflowId, eventId: event.eventId }, 'webhook accepted');
      if (!wait) return reply.code(200).send({ accepted: true, eventId: event.eventId });
      // The event is on the bus: whatever happens to the wait, it runs.
      const answer = await wait.wait();
      if (!answer) {
        // The run did not answer in time (RESPOND_TIMEOUT_MS): 202 and where to read its result later.
        return reply.code(202).send({ accepted: true, eventId: event.eventId, status: 'running', poll: pollPath(trigger.workflowId, event.eventId) });
      }
      // The engine checked the headers already (Respond node); checked again here, where they are sent.
      for (const [name, value] of Object.entries(answer.headers)) if (!responseHeaderProblem(name, value)) reply.header(name, value);
      reply.code(answer.status);
      if (answer.status === 204 || answer.status === 304) return reply.send();
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(answer.body ?? null));
    });
  };
}

/**
 * The poll link of a delivery answered before its run: the runs API (authenticated with an API key
 * of the workflow's owner, read scope), by the event id. Not a public URL: a run's record can hold
 * workspace data, and a bearer secret in a URL would end up in logs.
 */
export const pollPath = (workflowId: string, eventId: string): string => `/api/v1/workflows/${workflowId}/runs/by-event/${encodeURIComponent(eventId)}`;

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
