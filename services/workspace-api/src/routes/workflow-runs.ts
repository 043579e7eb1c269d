import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParams, ListRunsQuery, Page, WorkflowRun, notFound } from '@flowdesk/contracts';
import { asUser } from '../adapters/db.ts';
import { keysetPage } from '../domain/pagination.ts';
import { toRun } from '../domain/mappers.ts';
import { errorResponses } from './schemas.ts';

/** The read side of workflow runs (the "Workflow runs panel"); runs are written by the workflow engine. */
export const workflowRunRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma } = app.ctx;
  const tags = ['workflow runs'];

  app.get(
    '/workflows/:id/runs',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: "List a workflow's runs, newest first", params: IdParams, querystring: ListRunsQuery, response: { 200: Page(WorkflowRun), ...errorResponses } },
    },
    async (req) => {
      const { limit, cursor, status } = req.query;
      const page = keysetPage(`workflow-runs:${req.params.id}`, cursor, limit);
      const rows = await asUser(prisma, req.identity.userId, async (tx) => {
        const wf = await tx.workflow.findUnique({ where: { id: req.params.id }, select: { id: true } });
        if (!wf) throw notFound('Workflow');
        return tx.workflowRun.findMany({
          where: { AND: [page.where, { workflowId: wf.id }, status ? { status } : {}] },
          orderBy: page.orderBy,
          take: page.take,
        });
      });
      return page.toPage(rows, toRun);
    },
  );

  app.get(
    '/workflow-runs',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'List runs of all workflows, newest first', querystring: ListRunsQuery, response: { 200: Page(WorkflowRun), ...errorResponses } },
    },
    async (req) => {
      const { limit, cursor, status } = req.query;
      const page = keysetPage('workflow-runs', cursor, limit);
      const rows = await asUser(prisma, req.identity.userId, (tx) =>
        tx.workflowRun.findMany({ where: { AND: [page.where, status ? { status } : {}] }, orderBy: page.orderBy, take: page.take }),
      );
      return page.toPage(rows, toRun);
    },
  );

  app.get(
    '/workflow-runs/:id',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'Get one run with its per-node steps', params: IdParams, response: { 200: WorkflowRun, ...errorResponses } },
    },
    async (req) => {
      const row = await asUser(prisma, req.identity.userId, (tx) => tx.workflowRun.findUnique({ where: { id: req.params.id } }));
      if (!row) throw notFound('Workflow run');
      return toRun(row);
    },
  );
};
