import Type, { type Static } from 'typebox';
import { DateTime, SearchText, StringEnum, Uuid } from '../common.ts';

export const SearchKind = StringEnum(['project', 'task', 'note', 'calendar_entry', 'workflow']);
export type SearchKind = Static<typeof SearchKind>;

export const SearchQuery = Type.Object(
  {
    q: SearchText,
    types: Type.Optional(Type.Array(SearchKind, { maxItems: 5 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20 })),
  },
  { additionalProperties: false },
);
export type SearchQuery = Static<typeof SearchQuery>;

export const SearchHit = Type.Object({
  type: SearchKind,
  id: Uuid,
  title: Type.String(),
  /** A short excerpt around the match. */
  snippet: Type.String(),
  updatedAt: DateTime,
});
export type SearchHit = Static<typeof SearchHit>;
export const SearchResult = Type.Object({ items: Type.Array(SearchHit) });
export type SearchResult = Static<typeof SearchResult>;

export const TagCount = Type.Object({ tag: Type.String(), tasks: Type.Integer(), notes: Type.Integer() });
export type TagCount = Static<typeof TagCount>;
export const TagList = Type.Object({ items: Type.Array(TagCount) });

export const Overview = Type.Object(
  {
    projects: Type.Object({ active: Type.Integer(), archived: Type.Integer() }),
    tasks: Type.Object({
      open: Type.Integer(),
      done: Type.Integer(),
      overdue: Type.Integer(),
      dueToday: Type.Integer(),
      dueThisWeek: Type.Integer(),
    }),
    notes: Type.Integer(),
    calendar: Type.Object({ upcoming7Days: Type.Integer() }),
    workflows: Type.Object({ total: Type.Integer(), active: Type.Integer(), runsLast24h: Type.Integer(), failedLast24h: Type.Integer() }),
    /** The date "today" was computed for, in UTC. */
    asOf: DateTime,
  },
  { $id: 'Overview' },
);
export type Overview = Static<typeof Overview>;
