import Type, { type Static, type TSchema } from 'typebox';

export const Uuid = Type.String({ format: 'uuid' });
export const IdParams = Type.Object({ id: Uuid });
export type IdParams = Static<typeof IdParams>;

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/** Cursor pagination: pass back `nextCursor` as `cursor` until it is null. */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'Opaque; from nextCursor of the previous page.' })),
};

export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  });
export interface PageOf<T> {
  items: T[];
  nextCursor: string | null;
}

export const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 50, pattern: '^[^\\s,]+$' }), {
  maxItems: 20,
  uniqueItems: true,
  description: 'Labels without spaces or commas.',
});

/** A calendar date, YYYY-MM-DD (no time zone: a due date is a day, wherever the user is). */
export const DateOnly = Type.String({ format: 'date', description: 'YYYY-MM-DD' });
export const DateTime = Type.String({ format: 'date-time' });
export const SearchText = Type.String({ minLength: 1, maxLength: 200 });

/** A string enum: JSON Schema `enum`, static type the union of the values. */
export const StringEnum = <const T extends string[]>(values: readonly [...T], options?: { description?: string }) => Type.Enum(values, options);
