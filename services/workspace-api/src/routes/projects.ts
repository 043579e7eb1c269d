import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreateProject,
  IdParams,
  ListProjectsQuery,
  Page,
  Project,
  ProjectWithCounts,
  UpdateProject,
  notFound,
} from '@flowdesk/contracts';
import { asUser } from '../adapters/db.ts';
import { keysetPage } from '../domain/pagination.ts';
import { containsText } from '../domain/text-search.ts';
import { mapPrismaError } from '../domain/errors.ts';
import { toProject } from '../domain/mappers.ts';
import { errorResponses } from './schemas.ts';

export const projectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma } = app.ctx;

  app.get(
    '/projects',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags: ['projects'], summary: 'List projects', querystring: ListProjectsQuery, response: { 200: Page(Project), ...errorResponses } },
    },
    async (req) => {
      const { limit, cursor, status, q } = req.query;
      const page = keysetPage('projects', cursor, limit);
      const rows = await asUser(prisma, req.identity.userId, (tx) =>
        tx.project.findMany({
          where: {
            AND: [
              page.where,
              status ? { status } : {},
              q ? { OR: [{ name: containsText(q) }, { description: containsText(q) }] } : {},
            ],
          },
          orderBy: page.orderBy,
          take: page.take,
        }),
      );
      return page.toPage(rows, toProject);
    },
  );

  app.post(
    '/projects',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags: ['projects'], summary: 'Create a project', body: CreateProject, response: { 201: Project, ...errorResponses } },
    },
    async (req, reply) => {
      const { userId } = req.identity;
      const row = await asUser(prisma, userId, (tx) => tx.project.create({ data: { ...req.body, ownerId: userId } }));
      return reply.code(201).send(toProject(row));
    },
  );

  app.get(
    '/projects/:id',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags: ['projects'], summary: 'Get a project with task counts', params: IdParams, response: { 200: ProjectWithCounts, ...errorResponses } },
    },
    async (req) => {
      const result = await asUser(prisma, req.identity.userId, async (tx) => {
        const row = await tx.project.findUnique({ where: { id: req.params.id } });
        if (!row) return null;
        const counts = await tx.task.groupBy({ by: ['status'], where: { projectId: row.id }, _count: { _all: true } });
        return { row, counts };
      });
      if (!result) throw notFound('Project');
      const n = (s: string) => result.counts.find((c) => c.status === s)?._count._all ?? 0;
      const total = result.counts.reduce((a, c) => a + c._count._all, 0);
      return { ...toProject(result.row), taskCounts: { open: n('todo') + n('in_progress'), done: n('done'), total } };
    },
  );

  app.patch(
    '/projects/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags: ['projects'], summary: 'Update a project (archive with status: archived)', params: IdParams, body: UpdateProject, response: { 200: Project, ...errorResponses } },
    },
    async (req) => {
      const row = await asUser(prisma, req.identity.userId, (tx) =>
        tx.project.update({ where: { id: req.params.id }, data: req.body }),
      ).catch((e: unknown) => mapPrismaError(e, 'Project'));
      return toProject(row);
    },
  );

  app.delete(
    '/projects/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags: ['projects'],
        summary: 'Delete a project and its tasks (notes and calendar entries are kept, unlinked)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      const { count } = await asUser(prisma, req.identity.userId, (tx) => tx.project.deleteMany({ where: { id: req.params.id } }));
      if (count === 0) throw notFound('Project');
      return reply.code(204).send(null);
    },
  );

};
