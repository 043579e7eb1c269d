import { createHash } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { FORM_PATH_PREFIX, formConfigProblem, formPath, TRIGGER_TOPIC, type FormTriggerLookup, type TriggerEvent } from '@flowdesk/contracts';
import type { createRateLimiter } from '@flowdesk/service-kit';
import type { EventBus } from '@flowdesk/bus';
import type { TriggerDirectory } from '../domain/trigger-directory.ts';
import { urlencodedFields } from '../domain/form-body.ts';
import { payloadProblem } from '../domain/payload-rules.ts';
import { checkSubmission } from '../domain/form-submission.ts';
import { formPageCsp, renderForm, renderMessage, renderThankYou } from '../domain/form-page.ts';
import { cookieValue, FORM_COOKIE, FORM_TOKEN_TTL_MS, formTokens, HONEYPOT_FIELD, TOKEN_FIELD } from '../domain/form-token.ts';
import type { rateLimiter } from '../domain/rate-limit.ts';
import type { backlogGate } from '../domain/backlog-gate.ts';
import type { ownerThrottles } from '../domain/owner-throttle.ts';

export const FORM_ROUTE = `${FORM_PATH_PREFIX}:workflowId`;
/** Largest form submission accepted, bytes (a page answering 413 above). Documented in docs/triggers.md. */
export const FORM_BODY_LIMIT = 256 * 1024;
/** Submissions per address and form per minute (FORM_SUBMISSIONS_PER_MINUTE). */
export const DEFAULT_FORM_SUBMISSIONS_PER_MINUTE = 10;

export interface FormRouteDeps {
  bus: EventBus;
  directory: TriggerDirectory;
  /** The workflow's own admission (the webhook's limiter: one budget per workflow). */
  limiter: ReturnType<typeof rateLimiter>;
  /** Per address and form: FORM_SUBMISSIONS_PER_MINUTE. */
  addressLimiter: ReturnType<typeof createRateLimiter>;
  backlog?: ReturnType<typeof backlogGate>;
  throttles?: ReturnType<typeof ownerThrottles>;
  /** Signs the pages' CSRF tokens (form-token.ts). */
  tokenKey: Buffer;
  now: () => Date;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Every page: HTML, never cached (each carries its own token), never framed, no script allowed. */
function html(reply: FastifyReply, status: number, body: string, redirectUrl?: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', formPageCsp(redirectUrl))
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .send(body);
}

const notFoundPage = (reply: FastifyReply) =>
  html(reply, 404, renderMessage('Form not found', 'There is no form at this address, or it is not taking answers right now.'));

/**
 * The hosted form of a workflow with a form trigger (docs/triggers.md, "Form"): GET /form/<id> renders
 * it, POST /form/<id> checks a submission and publishes it as a trigger event (source `form`, payload
 * `{ <field>: <value>, …, submittedAt }`), GET /form/<id>/thanks is the page after it. Unknown,
 * inactive and deleted workflows, and workflows with another trigger, answer the same 404 page.
 */
export function formTriggerRoutes(deps: FormRouteDeps): FastifyPluginAsync {
  const tokens = formTokens(deps.tokenKey, () => deps.now().getTime());
  return async (app) => {
    // A browser's form post only (urlencoded): anything else is a 415 page, as the parser refuses it.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      /^application\/x-www-form-urlencoded\s*(;.*)?$/i,
      { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT },
      (_req, body: Buffer, done) => {
        try {
          done(null, urlencodedFields(body));
        } catch (err) {
          done(err as Error, undefined);
        }
      },
    );
    // Pages, not JSON, for what a person sees: a body too large, a type not a form's.
    app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
      const status = err.statusCode ?? 500;
      if (status >= 500) req.log.error({ err }, 'form request failed');
      if (status === 413)
        return html(reply, 413, renderMessage('Too much to send', `The answers are larger than ${FORM_BODY_LIMIT / 1024} KiB. Shorten them and send again.`));
      if (status === 415) return html(reply, 415, renderMessage('Not a form submission', 'Send the answers from the form page.'));
      if (status < 500) return html(reply, status, renderMessage('Not sent', err.message));
      return html(reply, 500, renderMessage('Not sent', 'Something went wrong on our side. Try again in a minute.'));
    });

    /** The workflow's form, or null when it is not served (unknown, inactive, another trigger, settings not valid). */
    const formOf = async (req: FastifyRequest, workflowId: string): Promise<FormTriggerLookup | null> => {
      if (!UUID.test(workflowId) || !deps.directory.form) return null;
      const found = await deps.directory.form(workflowId.toLowerCase());
      if (!found || !found.active) return null;
      const problem = formConfigProblem(found.form);
      if (problem) {
        req.log.warn({ workflowId, problem }, 'form trigger settings are not valid; the form is not served');
        return null;
      }
      return found;
    };

    /** The visitor's nonce (the cookie), set when absent; a token bound to it for the page. */
    const tokenFor = (req: FastifyRequest<{ Params: { workflowId: string } }>, reply: FastifyReply, workflowId: string): string => {
      // The visitor's nonce is kept (two tabs both submit), and set again with each page: the cookie
      // lives as long as the newest page's token.
      const given = cookieValue(req.headers.cookie, FORM_COOKIE);
      const nonce = tokens.isNonce(given) ? given : tokens.nonce();
      const secure = req.protocol === 'https' ? '; Secure' : '';
      // The path as the browser asked for it (a cookie's Path is case-sensitive; a UUID in a URL is not).
      reply.header(
        'set-cookie',
        `${FORM_COOKIE}=${nonce}; Path=${formPath(req.params.workflowId)}; Max-Age=${FORM_TOKEN_TTL_MS / 1000}; HttpOnly; SameSite=Strict${secure}`,
      );
      return tokens.issue(workflowId, nonce);
    };

    app.get<{ Params: { workflowId: string } }>(FORM_ROUTE, async (req, reply) => {
      const found = await formOf(req, req.params.workflowId);
      if (!found) return notFoundPage(reply);
      const id = found.workflowId;
      return html(reply, 200, renderForm(found.form, { token: tokenFor(req, reply, id) }), found.form.redirectUrl);
    });

    app.get<{ Params: { workflowId: string } }>(`${FORM_ROUTE}/thanks`, async (req, reply) => {
      const found = await formOf(req, req.params.workflowId);
      if (!found) return notFoundPage(reply);
      return html(reply, 200, renderThankYou(found.form));
    });

    app.post<{ Params: { workflowId: string }; Body: Record<string, unknown> | undefined }>(FORM_ROUTE, { bodyLimit: FORM_BODY_LIMIT }, async (req, reply) => {
      const found = await formOf(req, req.params.workflowId);
      if (!found) return notFoundPage(reply);
      const id = found.workflowId;
      const form = found.form;
      const posted = req.body ?? {};

      // Per address and form, before anything else is looked at: a flood of forged or invalid posts counts too.
      const wait = deps.addressLimiter.hit(`${id}|${req.ip}`);
      if (wait > 0) {
        reply.header('retry-after', String(wait));
        return html(
          reply,
          429,
          renderMessage('Too many submissions', `This form was sent too often from your address. Wait ${wait} seconds, then send it again.`, {
            href: formPath(id),
            text: 'Back to the form',
          }),
        );
      }

      const token = tokens.check(id, cookieValue(req.headers.cookie, FORM_COOKIE), posted[TOKEN_FIELD]);
      if (!token.ok) {
        req.log.info({ workflowId: id, reason: token.reason }, 'form submission refused: its token is not valid');
        const message =
          token.reason === 'expired'
            ? 'This page was open too long. Open the form again and send your answers.'
            : 'This submission did not come from the form page (or your browser did not keep its cookie). Open the form and send your answers from there.';
        return html(reply, 403, renderMessage('Not sent', message, { href: formPath(id), text: 'Open the form' }));
      }

      // Answered as a person's submission is, so a bot learns nothing; but no run starts.
      const trap = posted[HONEYPOT_FIELD];
      const success = () =>
        reply
          .code(303)
          .header('location', form.redirectUrl ?? `${formPath(id)}/thanks`)
          .header('cache-control', 'no-store')
          .send();
      if (trap !== undefined && trap !== '') {
        req.log.info({ workflowId: id }, 'form submission dropped: the honeypot field was filled');
        return success();
      }

      const checked = checkSubmission(form, posted, deps.now());
      if (!checked.ok) {
        return html(reply, 422, renderForm(form, { token: tokenFor(req, reply, id), values: checked.values, errors: checked.errors }), form.redirectUrl);
      }
      const problem = payloadProblem(checked.data);
      if (problem)
        return html(reply, 400, renderMessage('Not sent', problem.replace(/^Body/, 'The answers'), { href: formPath(id), text: 'Back to the form' }));

      // The workflow's own rate, its owner's share of the engine and its backlog, as for a webhook:
      // the form is shown again with the answers kept, to be sent a moment later.
      const again = (seconds: number, why: string, status = 429) => {
        reply.header('retry-after', String(seconds));
        const values = Object.fromEntries(
          form.fields.map((f) => {
            const v = checked.data[f.name];
            return [f.name, typeof v === 'number' ? String(v) : typeof v === 'string' ? v : ''];
          }),
        );
        return html(
          reply,
          status,
          renderForm(form, { token: tokenFor(req, reply, id), values, notice: `${why} Your answers are kept: send them again in ${seconds} seconds.` }),
          form.redirectUrl,
        );
      };
      const decision = deps.limiter.take(id);
      if (!decision.allowed) return again(decision.retryAfterSeconds, 'This form is getting many answers right now.');
      const throttled = deps.throttles?.check(found.ownerId);
      if (throttled) return again(throttled.retryAfterSeconds, 'This form is getting many answers right now.');
      const pressure = deps.backlog?.admit(id);
      if (pressure && !pressure.allowed) return again(pressure.retryAfterSeconds, 'This form is getting many answers right now.');

      const receivedAt = deps.now();
      const event: TriggerEvent = {
        // The rendered page's token: the same page sent twice (a double click, a resend) is one run.
        eventId: `form_${createHash('sha256')
          .update(`${id}\n${String(posted[TOKEN_FIELD])}`)
          .digest('hex')
          .slice(0, 40)}`,
        workflowId: id,
        ownerId: found.ownerId,
        source: 'form',
        receivedAt: receivedAt.toISOString(),
        payload: checked.data,
        // No headers, no address: the answers are what the workflow gets.
        headers: {},
      };
      try {
        await deps.bus.publish(TRIGGER_TOPIC, [{ key: id, value: event, ...(found.executionOrder === 'ordered' ? { ordered: true } : {}) }]);
      } catch (err) {
        req.log.error({ err, workflowId: id }, 'could not hand the form submission over');
        return again(5, 'Your answers could not be stored just now.', 503);
      }
      deps.backlog?.accepted(id);
      req.log.info({ workflowId: id, eventId: event.eventId }, 'form submission accepted');
      return success();
    });
  };
}
