import type { EventBus, Subscription } from '@flowdesk/bus';
import {
  ENTITY_CHANGED_TOPIC,
  MAX_TRIGGER_DEPTH,
  TRIGGER_TOPIC,
  entityEventMatches,
  type EntityChanged,
  type EntityPayload,
  type EventPublisher,
  type NotePayload,
  type TriggerEvent,
} from '@flowdesk/contracts';
import type { DefinitionCache } from './definitions.ts';
import type { LogPort } from './ports.ts';
import type { TriggerSource } from './trigger-source.ts';

/**
 * A note trigger's `{{trigger.*}}` for a change it matched (a note created or updated, so the action
 * is one of those; entityEventMatches checked it).
 */
export const notePayload = (change: EntityChanged): NotePayload => ({
  event: change.action as NotePayload['event'],
  note: change.after,
  previous: change.before,
  changedAt: change.changedAt,
});

/** An entity trigger's `{{trigger.*}}` for a change it matched (a task, project or calendar entry). */
export const entityPayload = (change: EntityChanged): EntityPayload => ({
  entity: change.entity as EntityPayload['entity'],
  event: change.action,
  entityId: change.entityId,
  before: change.before,
  after: change.after,
  changedAt: change.changedAt,
});

/**
 * Note and entity triggers (docs/triggers.md): one workspace.entity.changed event starts a run of each
 * of the owner's active note/entity workflows whose settings select it, by publishing one trigger
 * event each. The event id is derived from the change's (`change_<eventId>`, per workflow by the run
 * key), so a redelivered change event gives the same runs, not new ones.
 *
 * The loop guard: a change a workflow made (a Create Task node's task carries its run's origin) never
 * starts that same workflow, and a change made at depth MAX_TRIGGER_DEPTH starts nothing: a chain of
 * workflows that trigger each other stops there, with a warning in the log.
 */
export async function triggerOnChange(
  change: EntityChanged,
  deps: { definitions: DefinitionCache; bus: EventPublisher; clock: () => Date; log: LogPort },
): Promise<number> {
  const candidates = deps.definitions.changeTriggeredOf(change.ownerId);
  if (candidates.length === 0) return 0;
  const depth = change.origin?.depth ?? 0;
  const events: { key: string; value: TriggerEvent; ordered?: boolean }[] = [];
  for (const wf of candidates) {
    if (wf.triggerType !== 'note' && wf.triggerType !== 'entity') continue;
    if (!entityEventMatches(wf.triggerType, wf.triggerConfig, change)) continue;
    if (change.origin?.workflowId === wf.id) continue; // its own change: never re-trigger itself
    if (depth >= MAX_TRIGGER_DEPTH) {
      deps.log.warn(
        { workflowId: wf.id, originWorkflowId: change.origin?.workflowId, depth },
        'workflow chain too deep: this change starts no run (loop guard)',
      );
      continue;
    }
    const payload = wf.triggerType === 'note' ? notePayload(change) : entityPayload(change);
    events.push({
      key: wf.id,
      value: {
        eventId: `change_${change.eventId}`,
        workflowId: wf.id,
        ownerId: change.ownerId,
        source: wf.triggerType,
        receivedAt: deps.clock().toISOString(),
        payload,
        headers: {},
        ...(change.origin ? { origin: change.origin } : {}),
      },
      ...(wf.executionOrder === 'ordered' ? { ordered: true } : {}),
    });
  }
  if (events.length > 0) await deps.bus.publish(TRIGGER_TOPIC, events);
  return events.length;
}

/**
 * The note and entity triggers as a TriggerSource: workspace-api's change events (outbox) → trigger
 * events, one per matching workflow. Light work (no run here), keyed by entity, so one entity's
 * changes stay in order. It reads the definitions from the engine's cache when a change arrives.
 */
export class ChangeTriggers implements TriggerSource {
  readonly types = ['note', 'entity'] as const;
  private subscription: Subscription | undefined;

  constructor(private readonly o: { bus: EventBus; groupId: string; definitions: DefinitionCache; clock: () => Date; log: LogPort }) {}

  async start(): Promise<void> {
    this.subscription = await this.o.bus.subscribe<EntityChanged>({
      topic: ENTITY_CHANGED_TOPIC,
      groupId: this.o.groupId,
      concurrency: 16,
      handler: async (message) => {
        await triggerOnChange(message.value, this.o);
      },
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    this.subscription = undefined;
  }
}
