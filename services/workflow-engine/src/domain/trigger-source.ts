import type { TriggerType, WorkflowChanged, WorkflowDefinition } from '@flowdesk/contracts';

/**
 * What starts runs of some trigger types inside the engine (docs/triggers.md): the scheduler
 * (schedule) and the change triggers (note, entity) implement it, and app.ts drives every source the
 * same way. A source publishes trigger events (TRIGGER_TOPIC) whose payload is its types' payload
 * schema (libs/contracts trigger-types.ts); the engine's consumer runs them. Webhook runs come from
 * webhook-ingest and manual ones from the runs API, which publish the same events.
 */
export interface TriggerSource {
  /** The trigger types whose runs this source starts. */
  readonly types: readonly TriggerType[];
  /** A definition of one of its types as read at start (after the cold load, before start()). */
  sync?(def: WorkflowDefinition): Promise<void>;
  /** Every workflow.changed event, in order per workflow. */
  apply?(event: WorkflowChanged): Promise<void>;
  /** Starts publishing trigger events (subscriptions, timers). */
  start(): Promise<void>;
  /** Stops; resolves when nothing it started is still under way. */
  stop(): Promise<void>;
}
