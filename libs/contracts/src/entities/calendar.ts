import Type, { type Static } from 'typebox';
import { DateTime, PageQuery, SearchText, Uuid } from '../common.ts';

export const CalendarEntry = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    description: Type.String(),
    location: Type.Union([Type.String(), Type.Null()]),
    startsAt: DateTime,
    endsAt: DateTime,
    allDay: Type.Boolean(),
    projectId: Type.Union([Uuid, Type.Null()]),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'CalendarEntry' },
);
export type CalendarEntry = Static<typeof CalendarEntry>;

export const CreateCalendarEntry = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 500 }),
    description: Type.Optional(Type.String({ maxLength: 20_000 })),
    location: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    startsAt: DateTime,
    /** Defaults to startsAt + 1 hour (or the end of the day for all-day entries). */
    endsAt: Type.Optional(DateTime),
    allDay: Type.Optional(Type.Boolean()),
    projectId: Type.Optional(Type.Union([Uuid, Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateCalendarEntry = Static<typeof CreateCalendarEntry>;

export const UpdateCalendarEntry = Type.Partial(CreateCalendarEntry, { additionalProperties: false, minProperties: 1 });
export type UpdateCalendarEntry = Static<typeof UpdateCalendarEntry>;

export const ListCalendarQuery = Type.Object(
  {
    ...PageQuery,
    /** Entries that end after `from` and start before `to` (overlap). */
    from: Type.Optional(DateTime),
    to: Type.Optional(DateTime),
    projectId: Type.Optional(Uuid),
    q: Type.Optional(SearchText),
  },
  { additionalProperties: false },
);
export type ListCalendarQuery = Static<typeof ListCalendarQuery>;
