import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBody, OwnerUsage } from '@flowdesk/contracts';
import type { OwnerFairness } from '../domain/fairness.ts';

const errorResponses = { 401: ErrorBody, 403: ErrorBody } as const;

/**
 * GET /api/v1/workflow-runs/usage: the caller's share of the engine (docs/workflow-engine.md,
 * "Fairness across owners") — runs, throttled and refused starts, in flight against the cap, the
 * queue, and whether intake refuses its webhooks — for the console's "throttled" badge.
 */
export function usageRoutes(fairness: OwnerFairness): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/workflow-runs/usage',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags: ['workflow runs'],
          summary:
            'Your share of the engine: runs, throttled (queued behind your in-flight cap) and refused starts, your queue, and whether webhooks are refused (429)',
          description:
            'Counters are the answering engine replica’s since it started; queued is your whole queue. intakeThrottled: your workflows’ webhooks are answered 429 with Retry-After (docs/workflow-engine.md, "Fairness across owners").',
          response: { 200: OwnerUsage, ...errorResponses },
        },
      },
      async (req) => fairness.usage(req.identity.userId),
    );
  };
}
