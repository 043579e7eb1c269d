import Type, { type Static } from 'typebox';
import { DateTime, PageQuery, StringEnum, Uuid } from '../common.ts';

/** What a comment can be attached to. */
export const CommentTarget = StringEnum(['task', 'project', 'note']);
export type CommentTarget = Static<typeof CommentTarget>;

export const Comment = Type.Object(
  {
    id: Uuid,
    targetType: CommentTarget,
    targetId: Uuid,
    body: Type.String(),
    createdAt: DateTime,
  },
  { $id: 'Comment' },
);
export type Comment = Static<typeof Comment>;

export const CreateComment = Type.Object(
  {
    targetType: CommentTarget,
    targetId: Uuid,
    body: Type.String({ minLength: 1, maxLength: 10_000, pattern: '\\S' }),
  },
  { additionalProperties: false },
);
export type CreateComment = Static<typeof CreateComment>;

export const ListCommentsQuery = Type.Object({ ...PageQuery, targetType: CommentTarget, targetId: Uuid }, { additionalProperties: false });
export type ListCommentsQuery = Static<typeof ListCommentsQuery>;

export const ActivityKind = StringEnum(['project', 'task', 'note', 'calendar_entry', 'workflow', 'comment']);
export const ActivityAction = StringEnum(['created', 'updated', 'completed', 'commented']);

/** One line of "what happened lately", derived from the rows' own timestamps. */
export const ActivityItem = Type.Object({
  type: ActivityKind,
  id: Uuid,
  title: Type.String(),
  action: ActivityAction,
  at: DateTime,
  /** For comments: what the comment is on. */
  target: Type.Union([Type.Object({ type: CommentTarget, id: Uuid }), Type.Null()]),
});
export type ActivityItem = Static<typeof ActivityItem>;

export const ActivityQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    since: Type.Optional(DateTime),
  },
  { additionalProperties: false },
);
export type ActivityQuery = Static<typeof ActivityQuery>;
export const ActivityFeed = Type.Object({ items: Type.Array(ActivityItem) });
export type ActivityFeed = Static<typeof ActivityFeed>;
