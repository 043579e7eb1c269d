import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DRY_RUN_RATE_LIMIT, DRY_RUN_RATE_WINDOW_MS, DryRun, DryRunResult, ErrorBody, HttpError, IdParams, notFound } from '@flowdesk/contracts';
import { createRateLimiter, type RateLimit } from '@flowdesk/service-kit';
import type { DefinitionCache } from '../domain/definitions.ts';
import { dryRun, type DryRunDeps } from '../domain/dry-run.ts';
import { planGraph } from '../domain/executor.ts';

const errorResponses = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody } as const;

export interface DryRunRouteDeps extends DryRunDeps {
  /** Dry runs per owner (default DRY_RUN_RATE_LIMIT per DRY_RUN_RATE_WINDOW_MS). */
  rateLimit?: RateLimit;
  /** The answer's time limit (default DRY_RUN_TIMEOUT_MS). */
  timeoutMs?: number;
}

/**
 * Dry run (docs/workflow-engine.md, "Dry run"): POST /workflows/:id/dry-run walks the graph the editor
 * sends on a sample and answers each step's output; actions are not executed. Read access: nothing is
 * sent, written or recorded. Limited per owner (429 with Retry-After), apart from step tests.
 */
export function dryRunRoutes(definitions: DefinitionCache, deps: DryRunRouteDeps): FastifyPluginAsyncTypebox {
  const rate = deps.rateLimit ?? { max: DRY_RUN_RATE_LIMIT, windowMs: DRY_RUN_RATE_WINDOW_MS };
  const limiter = createRateLimiter(rate, deps.clock);
  const { rateLimit: _rate, timeoutMs, ...runDeps } = deps;
  return async (app) => {
    app.post(
      '/workflows/:id/dry-run',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags: ['workflow runs'],
          summary:
            "Dry run: walk the graph as sent (saved or not) on a sample and answer each step's output, for the editor's previews; actions (HTTP Request, Send Email, Create Task, …), Wait and Verify signature are not executed. Nothing is recorded. Limited per owner",
          params: IdParams,
          body: DryRun,
          response: { 200: DryRunResult, ...errorResponses },
        },
      },
      async (req) => {
        const wf = await definitions.get(req.params.id);
        if (!wf || wf.ownerId !== req.identity.userId) throw notFound('Workflow');
        const problem = planGraph(req.body.graph).problem;
        if (problem) throw new HttpError('validation_failed', `body.graph: ${problem}`);
        const wait = limiter.hit(req.identity.userId);
        if (wait > 0)
          throw new HttpError('rate_limited', `Too many dry runs: at most ${rate.max} per ${rate.windowMs / 1000} s; retry in ${wait} s`, {
            'retry-after': String(wait),
          });
        return dryRun(
          { workflowId: wf.id, ownerId: req.identity.userId, graph: req.body.graph, payload: req.body.payload ?? {}, assumed: req.body.assumed ?? {} },
          { ...runDeps, log: req.log },
          timeoutMs,
        );
      },
    );
  };
}
