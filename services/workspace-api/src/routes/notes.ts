import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CreateNote, IdParams, ListNotesQuery, Note, Page, UpdateNote, notFound } from '@flowdesk/contracts';
import type { Prisma } from '../generated/prisma/client.ts';
import { asUser } from '../adapters/db.ts';
import { keysetPage } from '../domain/pagination.ts';
import { containsText } from '../domain/text-search.ts';
import { mapPrismaError } from '../domain/errors.ts';
import { toNote } from '../domain/mappers.ts';
import { errorResponses } from './schemas.ts';

export const noteRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma } = app.ctx;
  const tags = ['notes'];

  app.get(
    '/notes',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'List notes, newest first', querystring: ListNotesQuery, response: { 200: Page(Note), ...errorResponses } },
    },
    async (req) => {
      const { limit, cursor, projectId, tag, pinned, q } = req.query;
      const page = keysetPage('notes', cursor, limit);
      const and: Prisma.NoteWhereInput[] = [page.where];
      if (projectId) and.push({ projectId });
      if (tag) and.push({ tags: { has: tag } });
      if (pinned !== undefined) and.push({ pinned });
      if (q) and.push({ OR: [{ title: containsText(q) }, { content: containsText(q) }] });
      const rows = await asUser(prisma, req.identity.userId, (tx) =>
        tx.note.findMany({ where: { AND: and }, orderBy: page.orderBy, take: page.take }),
      );
      return page.toPage(rows, toNote);
    },
  );

  app.post(
    '/notes',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Create a note', body: CreateNote, response: { 201: Note, ...errorResponses } },
    },
    async (req, reply) => {
      const { userId } = req.identity;
      const row = await asUser(prisma, userId, (tx) => tx.note.create({ data: { ...req.body, ownerId: userId } })).catch((e: unknown) =>
        mapPrismaError(e, 'Note'),
      );
      return reply.code(201).send(toNote(row));
    },
  );

  app.get(
    '/notes/:id',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'Get a note', params: IdParams, response: { 200: Note, ...errorResponses } },
    },
    async (req) => {
      const row = await asUser(prisma, req.identity.userId, (tx) => tx.note.findUnique({ where: { id: req.params.id } }));
      if (!row) throw notFound('Note');
      return toNote(row);
    },
  );

  app.patch(
    '/notes/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Update a note', params: IdParams, body: UpdateNote, response: { 200: Note, ...errorResponses } },
    },
    async (req) => {
      const row = await asUser(prisma, req.identity.userId, (tx) => tx.note.update({ where: { id: req.params.id }, data: req.body })).catch(
        (e: unknown) => mapPrismaError(e, 'Note'),
      );
      return toNote(row);
    },
  );

  app.delete(
    '/notes/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Delete a note', params: IdParams, response: { 204: Type.Null(), ...errorResponses } },
    },
    async (req, reply) => {
      const { count } = await asUser(prisma, req.identity.userId, (tx) => tx.note.deleteMany({ where: { id: req.params.id } }));
      if (count === 0) throw notFound('Note');
      return reply.code(204).send(null);
    },
  );
};
