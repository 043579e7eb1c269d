import Type, { type Static } from 'typebox';
import { StringEnum } from './common.ts';

/** Kafka topic (and embedded bus channel) of workflow trigger events, keyed by workflow id. */
export const TRIGGER_TOPIC = 'workflow.trigger.v1';
export const TRIGGER_DLQ_TOPIC = 'workflow.trigger.v1.dlq';

export const TriggerEvent = Type.Object(
  {
    /** Unique per delivery attempt group: the sender's idempotency key when given, else generated. */
    eventId: Type.String({ minLength: 1, maxLength: 200 }),
    workflowId: Type.String({ format: 'uuid' }),
    ownerId: Type.String({ format: 'uuid' }),
    source: StringEnum(['webhook', 'manual', 'schedule']),
    receivedAt: Type.String({ format: 'date-time' }),
    /** The request body: any JSON object, available to nodes as {{trigger.<path>}}. */
    payload: Type.Record(Type.String(), Type.Unknown()),
    /** Request headers, lower-cased, secrets removed; {{trigger.headers.<name>}}. */
    headers: Type.Record(Type.String(), Type.String()),
  },
  { $id: 'TriggerEvent' },
);
export type TriggerEvent = Static<typeof TriggerEvent>;
