import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CalendarEntry, CreateCalendarEntry, HttpError, IdParams, ListCalendarQuery, Page, UpdateCalendarEntry, notFound } from '@flowdesk/contracts';
import type { Prisma } from '../generated/prisma/client.ts';
import { asUser } from '../adapters/db.ts';
import { offsetPage } from '../domain/pagination.ts';
import { containsText } from '../domain/text-search.ts';
import { mapPrismaError } from '../domain/errors.ts';
import { toCalendarEntry } from '../domain/mappers.ts';
import { calendarEntryData } from '../domain/engine-creates.ts';
import { errorResponses } from './schemas.ts';

function checkOrder(startsAt: Date, endsAt: Date) {
  if (endsAt < startsAt) throw new HttpError('validation_failed', 'body.endsAt must not be before startsAt');
}

export const calendarRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { prisma } = app.ctx;
  const tags = ['calendar'];

  app.get(
    '/calendar-entries',
    {
      preHandler: app.requireAccess('read'),
      schema: {
        tags,
        summary: 'List calendar entries in time order (those overlapping from..to when given)',
        querystring: ListCalendarQuery,
        response: { 200: Page(CalendarEntry), ...errorResponses },
      },
    },
    async (req) => {
      const { limit, cursor, from, to, projectId, q } = req.query;
      const and: Prisma.CalendarEntryWhereInput[] = [];
      if (from) and.push({ endsAt: { gt: new Date(from) } });
      if (to) and.push({ startsAt: { lt: new Date(to) } });
      if (projectId) and.push({ projectId });
      if (q) and.push({ OR: [{ title: containsText(q) }, { description: containsText(q) }, { location: containsText(q) }] });
      const page = offsetPage('calendar-entries', cursor, limit);
      const rows = await asUser(prisma, req.identity.userId, (tx) =>
        tx.calendarEntry.findMany({ where: { AND: and }, orderBy: [{ startsAt: 'asc' }, { id: 'asc' }], skip: page.skip, take: page.take }),
      );
      return page.toPage(rows, toCalendarEntry);
    },
  );

  app.post(
    '/calendar-entries',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Create a calendar entry', body: CreateCalendarEntry, response: { 201: CalendarEntry, ...errorResponses } },
    },
    async (req, reply) => {
      const { userId } = req.identity;
      const data = calendarEntryData(userId, req.body);
      const row = await asUser(prisma, userId, (tx) => tx.calendarEntry.create({ data })).catch((e: unknown) => mapPrismaError(e, 'Calendar entry'));
      return reply.code(201).send(toCalendarEntry(row));
    },
  );

  app.get(
    '/calendar-entries/:id',
    {
      preHandler: app.requireAccess('read'),
      schema: { tags, summary: 'Get a calendar entry', params: IdParams, response: { 200: CalendarEntry, ...errorResponses } },
    },
    async (req) => {
      const row = await asUser(prisma, req.identity.userId, (tx) => tx.calendarEntry.findUnique({ where: { id: req.params.id } }));
      if (!row) throw notFound('Calendar entry');
      return toCalendarEntry(row);
    },
  );

  app.patch(
    '/calendar-entries/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: {
        tags,
        summary: 'Update or reschedule a calendar entry',
        params: IdParams,
        body: UpdateCalendarEntry,
        response: { 200: CalendarEntry, ...errorResponses },
      },
    },
    async (req) => {
      const b = req.body;
      const row = await asUser(prisma, req.identity.userId, async (tx) => {
        const current = await tx.calendarEntry.findUnique({ where: { id: req.params.id } });
        if (!current) throw notFound('Calendar entry');
        const startsAt = b.startsAt ? new Date(b.startsAt) : current.startsAt;
        // Moving the start without naming an end keeps the entry's length.
        const endsAt = b.endsAt
          ? new Date(b.endsAt)
          : b.startsAt
            ? new Date(startsAt.getTime() + (current.endsAt.getTime() - current.startsAt.getTime()))
            : current.endsAt;
        checkOrder(startsAt, endsAt);
        return tx.calendarEntry.update({
          where: { id: current.id },
          data: {
            title: b.title,
            description: b.description,
            location: b.location,
            allDay: b.allDay,
            projectId: b.projectId,
            startsAt,
            endsAt,
          },
        });
      }).catch((e: unknown) => mapPrismaError(e, 'Calendar entry'));
      return toCalendarEntry(row);
    },
  );

  app.delete(
    '/calendar-entries/:id',
    {
      preHandler: app.requireAccess('write'),
      schema: { tags, summary: 'Delete a calendar entry', params: IdParams, response: { 204: Type.Null(), ...errorResponses } },
    },
    async (req, reply) => {
      const { count } = await asUser(prisma, req.identity.userId, (tx) => tx.calendarEntry.deleteMany({ where: { id: req.params.id } }));
      if (count === 0) throw notFound('Calendar entry');
      return reply.code(204).send(null);
    },
  );
};
