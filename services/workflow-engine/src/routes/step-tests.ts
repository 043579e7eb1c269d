import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBody, IdParams, StepTestResult, TestStep, notFound } from '@flowdesk/contracts';
import type { DefinitionCache } from '../domain/definitions.ts';
import { testStep, type StepTestDeps } from '../domain/step-test.ts';

const errorResponses = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody } as const;

/**
 * Run this step (docs/workflow-engine.md, "Testing one step"): POST /workflows/:id/test-step runs one
 * node of the caller's workflow once against the sample it is given and answers the step (input,
 * output or error). Write access: an HTTP Request or Create Task node acts for real. Records nothing.
 */
export function stepTestRoutes(definitions: DefinitionCache, deps: StepTestDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/workflows/:id/test-step',
      {
        preHandler: app.requireAccess('write'),
        schema: {
          tags: ['workflow runs'],
          summary:
            'Run this step: execute one node (as sent, saved or not) once against a sample payload and earlier outputs, without activating the workflow or recording a run; HTTP Request and Create Task act for real',
          params: IdParams,
          body: TestStep,
          response: { 200: StepTestResult, ...errorResponses },
        },
      },
      async (req) => {
        const wf = await definitions.get(req.params.id);
        if (!wf || wf.ownerId !== req.identity.userId) throw notFound('Workflow');
        return testStep(
          {
            workflowId: wf.id,
            ownerId: req.identity.userId,
            node: req.body.node,
            payload: req.body.payload ?? {},
            nodes: req.body.nodes ?? {},
            ...(req.body.item !== undefined || req.body.index !== undefined ? { loop: { item: req.body.item ?? null, index: req.body.index ?? 0 } } : {}),
          },
          { ...deps, log: req.log },
        );
      },
    );
  };
}
