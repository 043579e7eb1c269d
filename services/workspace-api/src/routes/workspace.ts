import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Overview, SearchQuery, SearchResult, TagList } from '@flowdesk/contracts';
import { asUser } from '../adapters/db.ts';
import { overview, searchWorkspace, tagCounts } from '../domain/workspace.ts';
import { errorResponses } from './schemas.ts';

/** Cross-cutting reads: search, tags, and the overview an assistant starts a conversation with. */
export const workspaceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma, now } = app.ctx;
  const tags = ['workspace'];

  app.get(
    '/search',
    {
      preHandler: app.requireAccess('read'),
      schema: {
        tags,
        summary: 'Search projects, tasks, notes, calendar entries and workflows',
        querystring: SearchQuery,
        response: { 200: SearchResult, ...errorResponses },
      },
    },
    async (req) => ({ items: await asUser(prisma, req.identity.userId, (tx) => searchWorkspace(tx, req.query)) }),
  );

  app.get(
    '/tags',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'Every tag in use, with how many tasks and notes carry it', response: { 200: TagList, ...errorResponses } },
    },
    async (req) => ({ items: await asUser(prisma, req.identity.userId, (tx) => tagCounts(tx)) }),
  );

  app.get(
    '/overview',
    {
      preHandler: app.requireAccess('read'),
      schema: {
        tags,
        summary: 'Counts at a glance: open, overdue and due tasks, upcoming events, workflow health',
        response: { 200: Overview, ...errorResponses },
      },
    },
    async (req) => asUser(prisma, req.identity.userId, (tx) => overview(tx, now())),
  );
};
