import Type, { type Static } from 'typebox';
import { TriggerOrigin } from '../triggers.ts';
import { DateOnly, DateTime, PageQuery, SearchText, StringEnum, Tags, Uuid } from '../common.ts';

export const TaskStatus = StringEnum(['todo', 'in_progress', 'done', 'cancelled']);
export type TaskStatus = Static<typeof TaskStatus>;
export const TaskPriority = StringEnum(['none', 'low', 'medium', 'high', 'urgent']);
export type TaskPriority = Static<typeof TaskPriority>;

export const Task = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    projectId: Type.Union([Uuid, Type.Null()]),
    dueDate: Type.Union([DateOnly, Type.Null()]),
    notes: Type.String(),
    status: TaskStatus,
    priority: TaskPriority,
    tags: Type.Array(Type.String()),
    completedAt: Type.Union([DateTime, Type.Null()]),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Task' },
);
export type Task = Static<typeof Task>;

export const CreateTask = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 500 }),
    projectId: Type.Optional(Type.Union([Uuid, Type.Null()])),
    dueDate: Type.Optional(Type.Union([DateOnly, Type.Null()])),
    notes: Type.Optional(Type.String({ maxLength: 20_000 })),
    status: Type.Optional(TaskStatus),
    priority: Type.Optional(TaskPriority),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false },
);
export type CreateTask = Static<typeof CreateTask>;

/**
 * The workflow engine's batched Create Task (POST /internal/v1/tasks/batch, as the workflows' owner):
 * many runs' tasks in one call. Items are checked one by one against CreateTask, so one bad item fails
 * only its own run; the answers are in the order of the items.
 */
export const CREATE_TASK_BATCH_MAX = 500;
export const CreateTaskBatch = Type.Object(
  {
    tasks: Type.Array(Type.Unknown(), { minItems: 1, maxItems: CREATE_TASK_BATCH_MAX }),
    /** Per item, the run that creates it (the loop guard, triggers.ts); kept with the task, not shown. */
    origins: Type.Optional(Type.Array(Type.Union([TriggerOrigin, Type.Null()]), { maxItems: CREATE_TASK_BATCH_MAX })),
    /**
     * Per item, the run step's idempotency key (docs/workflow-engine.md, "Durable runs"): an item whose
     * key the owner already used creates nothing and answers the task created with it.
     */
    idempotencyKeys: Type.Optional(Type.Array(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]), { maxItems: CREATE_TASK_BATCH_MAX })),
  },
  { additionalProperties: false },
);
export type CreateTaskBatch = Static<typeof CreateTaskBatch>;
export const CreateTaskBatchResult = Type.Object({
  results: Type.Array(
    Type.Union([
      Type.Object({ status: Type.Literal(201), task: Task }),
      Type.Object({ status: Type.Integer({ minimum: 400, maximum: 599 }), error: Type.String(), message: Type.String() }),
    ]),
  ),
});
export type CreateTaskBatchResult = Static<typeof CreateTaskBatchResult>;

export const UpdateTask = Type.Partial(CreateTask, { additionalProperties: false, minProperties: 1 });
export type UpdateTask = Static<typeof UpdateTask>;

export const TaskSort = StringEnum(['created_desc', 'due_asc', 'priority_desc', 'updated_desc']);

export const ListTasksQuery = Type.Object(
  {
    ...PageQuery,
    projectId: Type.Optional(Uuid),
    /** `none` lists tasks without a project (the inbox). */
    inbox: Type.Optional(Type.Boolean()),
    status: Type.Optional(Type.Array(TaskStatus, { maxItems: 4 })),
    priority: Type.Optional(Type.Array(TaskPriority, { maxItems: 5 })),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    dueBefore: Type.Optional(DateOnly),
    dueAfter: Type.Optional(DateOnly),
    overdue: Type.Optional(Type.Boolean()),
    q: Type.Optional(SearchText),
    sort: Type.Optional(TaskSort),
  },
  { additionalProperties: false },
);
export type ListTasksQuery = Static<typeof ListTasksQuery>;

/** Apply the same change to many tasks at once (bulk complete, move, tag). */
export const BulkUpdateTasks = Type.Object(
  {
    ids: Type.Array(Uuid, { minItems: 1, maxItems: 100, uniqueItems: true }),
    set: Type.Partial(
      Type.Object({ status: TaskStatus, priority: TaskPriority, projectId: Type.Union([Uuid, Type.Null()]), dueDate: Type.Union([DateOnly, Type.Null()]) }),
      { additionalProperties: false, minProperties: 1 },
    ),
  },
  { additionalProperties: false },
);
export type BulkUpdateTasks = Static<typeof BulkUpdateTasks>;
export const BulkResult = Type.Object({ updated: Type.Array(Uuid), notFound: Type.Array(Uuid) });
export type BulkResult = Static<typeof BulkResult>;
