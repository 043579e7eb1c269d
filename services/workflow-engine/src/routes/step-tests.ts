import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  ErrorBody,
  HttpError,
  IdParams,
  notFound,
  Page,
  PageQuery,
  STEP_TEST_RATE_LIMIT,
  STEP_TEST_RATE_WINDOW_MS,
  StepTestEntry,
  StepTestResult,
  TestStep,
  type PageOf,
} from '@flowdesk/contracts';
import { createRateLimiter, type RateLimit } from '@flowdesk/service-kit';
import type { DefinitionCache } from '../domain/definitions.ts';
import { stepTestRecordOf, testStep, type StepTestDeps, type StepTestLog } from '../domain/step-test.ts';

const errorResponses = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody } as const;

export interface StepTestRouteDeps extends StepTestDeps {
  /** Where each step test is recorded for its owner, and read back. */
  store: StepTestLog & {
    list(ownerId: string, workflowId: string, page: { limit?: number; cursor?: string }): Promise<PageOf<StepTestEntry>>;
  };
  /** Step tests per owner (default STEP_TEST_RATE_LIMIT per STEP_TEST_RATE_WINDOW_MS). */
  rateLimit?: RateLimit;
}

/**
 * Run this step (docs/workflow-engine.md, "Testing one step"): POST /workflows/:id/test-step runs one
 * node of the caller's workflow once against the sample it is given and answers the step (input,
 * output or error). Write access: an HTTP Request or Create Task node acts for real. Limited per owner
 * (429 with Retry-After) and recorded in the owner's list, GET /workflows/:id/step-tests.
 */
export function stepTestRoutes(definitions: DefinitionCache, deps: StepTestRouteDeps): FastifyPluginAsyncTypebox {
  const rate = deps.rateLimit ?? { max: STEP_TEST_RATE_LIMIT, windowMs: STEP_TEST_RATE_WINDOW_MS };
  const limiter = createRateLimiter(rate, deps.clock);
  const { store, rateLimit: _rate, ...testDeps } = deps;
  return async (app) => {
    app.post(
      '/workflows/:id/test-step',
      {
        preHandler: app.requireAccess('write'),
        schema: {
          tags: ['workflow runs'],
          summary:
            'Run this step: execute one node (as sent, saved or not) once against a sample payload and earlier outputs, without activating the workflow or recording a run; HTTP Request and Create Task act for real. Limited per owner; each test is listed under step-tests',
          params: IdParams,
          body: TestStep,
          response: { 200: StepTestResult, ...errorResponses },
        },
      },
      async (req) => {
        const wf = await definitions.get(req.params.id);
        if (!wf || wf.ownerId !== req.identity.userId) throw notFound('Workflow');
        const wait = limiter.hit(req.identity.userId);
        if (wait > 0)
          throw new HttpError('rate_limited', `Too many step tests: at most ${rate.max} per ${rate.windowMs / 1000} s; retry in ${wait} s`, {
            'retry-after': String(wait),
          });
        const result = await testStep(
          {
            workflowId: wf.id,
            ownerId: req.identity.userId,
            node: req.body.node,
            payload: req.body.payload ?? {},
            nodes: req.body.nodes ?? {},
            ...(req.body.item !== undefined || req.body.index !== undefined ? { loop: { item: req.body.item ?? null, index: req.body.index ?? 0 } } : {}),
          },
          { ...testDeps, log: req.log },
        );
        // The step ran (its effects happened): a failed write of its record is logged, not the caller's error.
        await store
          .record(req.identity.userId, stepTestRecordOf(wf.id, result))
          .catch((err: unknown) => req.log.error({ err }, 'a step test could not be recorded'));
        return result;
      },
    );

    app.get(
      '/workflows/:id/step-tests',
      {
        preHandler: app.requireAccess('read'),
        schema: {
          tags: ['workflow runs'],
          summary: "The workflow's step tests (Run this step), newest first: node, status, error, the HTTP request sent; kept 30 days",
          params: IdParams,
          querystring: Type.Object(PageQuery),
          response: { 200: Page(StepTestEntry), ...errorResponses },
        },
      },
      async (req) => {
        const wf = await definitions.get(req.params.id);
        if (!wf || wf.ownerId !== req.identity.userId) throw notFound('Workflow');
        return store.list(req.identity.userId, wf.id, req.query);
      },
    );
  };
}
