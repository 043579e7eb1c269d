import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CreateProject, IdParams, ListProjectsQuery, Page, Project, ProjectWithCounts, UpdateProject, notFound } from '@flowdesk/contracts';
import { keysetPage } from '../domain/pagination.ts';
import { toProject } from '../domain/mappers.ts';
import { errorResponses } from './schemas.ts';

export const projectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { projects } = app.ctx;

  app.get(
    '/projects',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags: ['projects'], summary: 'List projects', querystring: ListProjectsQuery, response: { 200: Page(Project), ...errorResponses } },
    },
    async (req) => {
      const { limit, cursor, status, q } = req.query;
      const page = keysetPage('projects', cursor, limit);
      const rows = await projects.list(req.identity.userId, { status, q }, { take: page.take, after: page.after });
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
      const row = await projects.create(req.identity.userId, req.body, new Date());
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
      const result = await projects.getWithCounts(req.identity.userId, req.params.id);
      if (!result) throw notFound('Project');
      return { ...toProject(result.row), taskCounts: result.counts };
    },
  );

  app.patch(
    '/projects/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags: ['projects'],
        summary: 'Update a project (archive with status: archived)',
        params: IdParams,
        body: UpdateProject,
        response: { 200: Project, ...errorResponses },
      },
    },
    async (req) => {
      const row = await projects.update(req.identity.userId, req.params.id, req.body, new Date());
      if (!row) throw notFound('Project');
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
      if (!(await projects.delete(req.identity.userId, req.params.id))) throw notFound('Project');
      return reply.code(204).send(null);
    },
  );
};
