import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BulkResult, BulkUpdateTasks, CreateTask, IdParams, ListTasksQuery, Page, Task, UpdateTask, notFound } from '@flowdesk/contracts';
import { asUser } from '../adapters/db.ts';
import { keysetPage, offsetPage } from '../domain/pagination.ts';
import { mapPrismaError } from '../domain/errors.ts';
import { toTask } from '../domain/mappers.ts';
import { taskChanges } from '../domain/tasks.ts';
import { errorResponses } from './schemas.ts';

export const taskRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma, tasks, now } = app.ctx;
  const tags = ['tasks'];

  app.get(
    '/tasks',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'List and filter tasks', querystring: ListTasksQuery, response: { 200: Page(Task), ...errorResponses } },
    },
    async (req) => {
      const { limit, cursor, sort = 'created_desc' } = req.query;
      if (sort === 'created_desc') {
        const page = keysetPage('tasks', cursor, limit);
        const rows = await tasks.list(req.identity.userId, req.query, now(), { sort, take: page.take, after: page.after });
        return page.toPage(rows, toTask);
      }
      // Each order has its own listing name: an offset means nothing under another order.
      const page = offsetPage(`tasks:${sort}`, cursor, limit);
      const rows = await tasks.list(req.identity.userId, req.query, now(), { sort, take: page.take, skip: page.skip });
      return page.toPage(rows, toTask);
    },
  );

  app.post(
    '/tasks',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Create a task', body: CreateTask, response: { 201: Task, ...errorResponses } },
    },
    async (req, reply) => {
      const row = await tasks.create(req.identity.userId, { ...taskChanges(req.body, undefined, now()), title: req.body.title }, new Date());
      return reply.code(201).send(toTask(row));
    },
  );

  app.get(
    '/tasks/:id',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'Get a task', params: IdParams, response: { 200: Task, ...errorResponses } },
    },
    async (req) => {
      const row = await tasks.get(req.identity.userId, req.params.id);
      if (!row) throw notFound('Task');
      return toTask(row);
    },
  );

  app.patch(
    '/tasks/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags,
        summary: 'Update a task (status done completes it; projectId moves it)',
        params: IdParams,
        body: UpdateTask,
        response: { 200: Task, ...errorResponses },
      },
    },
    async (req) => {
      // completedAt is decided in the statement, against the row's status at that moment.
      const { completedAt: _decidedInSql, ...changes } = taskChanges(req.body, undefined, now());
      const row = await tasks.update(req.identity.userId, req.params.id, changes, now(), new Date());
      if (!row) throw notFound('Task');
      return toTask(row);
    },
  );

  app.delete(
    '/tasks/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Delete a task', params: IdParams, response: { 204: Type.Null(), ...errorResponses } },
    },
    async (req, reply) => {
      if (!(await tasks.delete(req.identity.userId, req.params.id))) throw notFound('Task');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/tasks/bulk-update',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags,
        summary: 'Apply one change to up to 100 tasks (complete, move, reprioritise, reschedule)',
        body: BulkUpdateTasks,
        response: { 200: BulkResult, ...errorResponses },
      },
    },
    async (req) => {
      const { ids, set } = req.body;
      return asUser(prisma, req.identity.userId, async (tx) => {
        const found = await tx.task.findMany({ where: { id: { in: ids } }, select: { id: true, status: true } });
        // One update per distinct current status keeps completedAt right for every task in one round.
        const byStatus = new Map<string, string[]>();
        for (const t of found) byStatus.set(t.status, [...(byStatus.get(t.status) ?? []), t.id]);
        for (const [status, group] of byStatus) {
          await tx.task.updateMany({ where: { id: { in: group } }, data: taskChanges(set, status as never, now()) });
        }
        const updated = new Set(found.map((t) => t.id));
        return { updated: ids.filter((id) => updated.has(id)), notFound: ids.filter((id) => !updated.has(id)) };
      }).catch((e: unknown) => mapPrismaError(e, 'Task'));
    },
  );
};
