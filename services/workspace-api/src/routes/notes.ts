import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CreateNote, IdParams, ListNotesQuery, Note, Page, UpdateNote, notFound } from '@flowdesk/contracts';
import { keysetPage } from '../domain/pagination.ts';
import { toNote } from '../domain/mappers.ts';
import { errorResponses } from './schemas.ts';

export const noteRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { notes } = app.ctx;
  const tags = ['notes'];

  app.get(
    '/notes',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'List notes, newest first', querystring: ListNotesQuery, response: { 200: Page(Note), ...errorResponses } },
    },
    async (req) => {
      const { limit, cursor } = req.query;
      const page = keysetPage('notes', cursor, limit);
      const rows = await notes.list(req.identity.userId, req.query, { take: page.take, after: page.after });
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
      const row = await notes.create(req.identity.userId, req.body, new Date());
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
      const row = await notes.get(req.identity.userId, req.params.id);
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
      const row = await notes.update(req.identity.userId, req.params.id, req.body, new Date());
      if (!row) throw notFound('Note');
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
      if (!(await notes.delete(req.identity.userId, req.params.id))) throw notFound('Note');
      return reply.code(204).send(null);
    },
  );
};
