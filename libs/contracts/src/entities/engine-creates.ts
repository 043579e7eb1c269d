import Type, { type Static } from 'typebox';
import { StringEnum } from '../common.ts';
import { TriggerOrigin } from '../triggers.ts';

/**
 * The workflow engine's batched creates of notes, calendar entries and comments (POST
 * /internal/v1/creates/batch, as the workflows' owner): many runs' Create Note / Create Calendar
 * Entry / Add Comment steps in one call. Each item is checked against the public create body of its
 * kind (CreateNote, CreateCalendarEntry, CreateComment) and answered on its own, in order; an item
 * whose idempotency key the owner already used for that kind creates nothing and answers the row
 * created with it (docs/workflow-engine.md, "Durable runs").
 */
export const ENGINE_CREATE_BATCH_MAX = 100;
export const EngineCreateKind = StringEnum(['note', 'calendar_entry', 'comment']);
export type EngineCreateKind = Static<typeof EngineCreateKind>;
export const EngineCreateBatch = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          kind: EngineCreateKind,
          body: Type.Unknown(),
          idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          /** The run's workflow and chain depth: kept on a note or calendar entry (the loop guard, docs/triggers.md). */
          origin: Type.Optional(TriggerOrigin),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: ENGINE_CREATE_BATCH_MAX },
    ),
  },
  { additionalProperties: false },
);
export type EngineCreateBatch = Static<typeof EngineCreateBatch>;
export const EngineCreateBatchResult = Type.Object({
  results: Type.Array(
    Type.Union([
      Type.Object({ status: Type.Literal(201), item: Type.Record(Type.String(), Type.Unknown()) }),
      Type.Object({ status: Type.Integer({ minimum: 400, maximum: 599 }), error: Type.String(), message: Type.String() }),
    ]),
  ),
});
export type EngineCreateBatchResult = Static<typeof EngineCreateBatchResult>;
