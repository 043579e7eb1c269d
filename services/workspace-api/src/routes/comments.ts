import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ActivityFeed, ActivityQuery, Comment, CreateComment, IdParams, ListCommentsQuery, Page, notFound } from '@flowdesk/contracts';
import { asUser } from '../adapters/db.ts';
import { keysetPage } from '../domain/pagination.ts';
import { assertTargetVisible, recentActivity, targetColumn, toComment } from '../domain/comments.ts';
import { errorResponses } from './schemas.ts';

/** Comments on tasks, projects and notes, and the recent-activity feed. */
export const commentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma } = app.ctx;
  const tags = ['comments and activity'];

  app.get(
    '/comments',
    {
      preHandler: app.requireAccess('read'),
      schema: {
        tags,
        summary: 'List the comments on a task, project or note, newest first',
        querystring: ListCommentsQuery,
        response: { 200: Page(Comment), ...errorResponses },
      },
    },
    async (req) => {
      const { limit, cursor, targetType, targetId } = req.query;
      const page = keysetPage(`comments:${targetType}:${targetId}`, cursor, limit);
      const rows = await asUser(prisma, req.identity.userId, async (tx) => {
        await assertTargetVisible(tx, targetType, targetId);
        return tx.comment.findMany({ where: { AND: [page.where, { [targetColumn[targetType]]: targetId }] }, orderBy: page.orderBy, take: page.take });
      });
      return page.toPage(rows, toComment);
    },
  );

  app.post(
    '/comments',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Comment on a task, project or note', body: CreateComment, response: { 201: Comment, ...errorResponses } },
    },
    async (req, reply) => {
      const { userId } = req.identity;
      const { targetType, targetId, body } = req.body;
      const row = await asUser(prisma, userId, async (tx) => {
        await assertTargetVisible(tx, targetType, targetId);
        return tx.comment.create({ data: { ownerId: userId, targetType, body, [targetColumn[targetType]]: targetId } });
      });
      return reply.code(201).send(toComment(row));
    },
  );

  app.delete(
    '/comments/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Delete a comment', params: IdParams, response: { 204: Type.Null(), ...errorResponses } },
    },
    async (req, reply) => {
      const { count } = await asUser(prisma, req.identity.userId, (tx) => tx.comment.deleteMany({ where: { id: req.params.id } }));
      if (count === 0) throw notFound('Comment');
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/activity',
    {
      preHandler: app.requireAccess('read'),
      schema: {
        tags,
        summary: 'What changed lately across projects, tasks, notes, events, workflows and comments',
        querystring: ActivityQuery,
        response: { 200: ActivityFeed, ...errorResponses },
      },
    },
    async (req) => {
      const { limit = 25, since } = req.query;
      return { items: await asUser(prisma, req.identity.userId, (tx) => recentActivity(tx, limit, since ? new Date(since) : undefined)) };
    },
  );
};
