import Type, { type Static } from 'typebox';
import { DateTime, PageQuery, SearchText, Tags, Uuid } from '../common.ts';

export const Note = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    content: Type.String(),
    projectId: Type.Union([Uuid, Type.Null()]),
    tags: Type.Array(Type.String()),
    pinned: Type.Boolean(),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Note' },
);
export type Note = Static<typeof Note>;

export const CreateNote = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 500 }),
    content: Type.Optional(Type.String({ maxLength: 100_000 })),
    projectId: Type.Optional(Type.Union([Uuid, Type.Null()])),
    tags: Type.Optional(Tags),
    pinned: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateNote = Static<typeof CreateNote>;

export const UpdateNote = Type.Partial(CreateNote, { additionalProperties: false, minProperties: 1 });
export type UpdateNote = Static<typeof UpdateNote>;

export const ListNotesQuery = Type.Object(
  {
    ...PageQuery,
    projectId: Type.Optional(Uuid),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    pinned: Type.Optional(Type.Boolean()),
    q: Type.Optional(SearchText),
  },
  { additionalProperties: false },
);
export type ListNotesQuery = Static<typeof ListNotesQuery>;
