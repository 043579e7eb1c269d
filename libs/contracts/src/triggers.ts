import Type, { type Static } from 'typebox';
import { Check, Errors } from 'typebox/value';
import { Cron } from 'croner';
import { StringEnum } from './common.ts';
import type { TriggerType } from './trigger-types.ts';
import { RESPONSE_MODES } from './webhook-reply.ts';
import { formConfigProblem } from './forms.ts';

/**
 * The four trigger types besides the webhook (docs/triggers.md): their settings (a workflow's
 * `triggerConfig`), the entity events workspace-api publishes for the note and entity triggers, and
 * the loop guard. One definition here, read by workspace-api (validation on save), the engine (what
 * runs when) and the console (the editor's settings and previews).
 */

/**
 * Topic of workspace changes (tasks, projects, calendar entries, notes), written by workspace-api's
 * database into its outbox in the same transaction as the change (a row trigger), so an event exists
 * iff its change committed. Keyed by the entity's id: one entity's events keep their order. Only
 * written while the owner has an active note or entity workflow (nothing to trigger otherwise).
 */
export const ENTITY_CHANGED_TOPIC = 'workspace.entity.changed.v1';

export const EntityKind = StringEnum(['task', 'project', 'calendar_entry', 'note'], { description: 'What changed.' });
export type EntityKind = Static<typeof EntityKind>;
/** `completed`: a task whose status became done (for other entities a change is `updated`). */
export const EntityAction = StringEnum(['created', 'updated', 'completed', 'deleted'], { description: 'What happened to it.' });
export type EntityAction = Static<typeof EntityAction>;

/**
 * A run that started from a change a workflow made: the workflow and how many workflow-made changes
 * led to it. A Create Task node's task carries its run's origin, so the change event it causes never
 * starts the same workflow again and a chain across workflows stops at MAX_TRIGGER_DEPTH.
 */
export const TriggerOrigin = Type.Object(
  {
    workflowId: Type.String({ format: 'uuid', description: 'The workflow whose run made the change.' }),
    depth: Type.Integer({ minimum: 1, description: 'Workflow-made changes in the chain so far (1: made by a run started by a person or an outside event).' }),
  },
  { additionalProperties: false },
);
export type TriggerOrigin = Static<typeof TriggerOrigin>;
/** A change made at this depth starts no further workflow (docs/triggers.md, "Loops"). */
export const MAX_TRIGGER_DEPTH = 5;

export const EntityChanged = Type.Object(
  {
    eventId: Type.String({ format: 'uuid' }),
    ownerId: Type.String({ format: 'uuid' }),
    entity: EntityKind,
    entityId: Type.String({ format: 'uuid' }),
    action: EntityAction,
    changedAt: Type.String({ format: 'date-time' }),
    /** The entity as the REST API shows it, before and after the change (null when created / deleted). */
    before: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    after: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    /** Set when a workflow's run made the change (a Create Task node). */
    origin: Type.Union([TriggerOrigin, Type.Null()]),
  },
  { $id: 'EntityChanged' },
);
export type EntityChanged = Static<typeof EntityChanged>;

// ---- Settings per trigger type (Workflow.triggerConfig) ----

export const MissedTicks = StringEnum(['run_once', 'skip'], { description: 'Ticks missed while the engine was down: run once on start, or skip them.' });
export type MissedTicks = Static<typeof MissedTicks>;

export const ScheduleTriggerConfig = Type.Object(
  {
    /** Five fields: minute hour day-of-month month day-of-week (standard cron, no seconds). */
    cron: Type.String({ minLength: 9, maxLength: 200, description: 'Cron expression, five fields: minute hour day-of-month month day-of-week.' }),
    /** IANA time zone the expression is read in (default UTC): "0 9 * * *" is 09:00 there, DST included. */
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'IANA time zone, e.g. Europe/Berlin (default UTC).' })),
    missed: Type.Optional(MissedTicks),
  },
  { additionalProperties: true },
);
export type ScheduleTriggerConfig = Static<typeof ScheduleTriggerConfig>;

export const NoteTriggerConfig = Type.Object(
  {
    events: Type.Optional(
      Type.Array(StringEnum(['created', 'updated']), { minItems: 1, uniqueItems: true, description: 'Which note events start a run (default both).' }),
    ),
    projectId: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Only notes in this project.' })),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Only notes with this tag.' })),
    titleContains: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only notes whose title contains this text (case-insensitive).' })),
  },
  { additionalProperties: true },
);
export type NoteTriggerConfig = Static<typeof NoteTriggerConfig>;

export const EntityTriggerConfig = Type.Object(
  {
    entity: StringEnum(['task', 'project', 'calendar_entry'], { description: 'Which kind of entity.' }),
    events: Type.Optional(Type.Array(EntityAction, { minItems: 1, uniqueItems: true, description: 'Which events start a run (default all).' })),
  },
  { additionalProperties: true },
);
export type EntityTriggerConfig = Static<typeof EntityTriggerConfig>;

export interface Schedule {
  cron: string;
  timezone: string;
  missed: MissedTicks;
}

/** The cron expression as croner reads it (five fields; croner's own parser, never a hand-written one). */
function cronOf(expr: string, timezone: string): Cron {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) throw new Error(`cron must have five fields (minute hour day-of-month month day-of-week), got ${fields.length}`);
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new Error(`unknown time zone "${timezone}" (an IANA name such as Europe/Berlin)`);
  }
  return new Cron(fields.join(' '), { timezone, paused: true, mode: '5-part' });
}

/** The schedule of a schedule trigger's settings; throws with the reason when they are not valid. */
export function scheduleOf(config: Record<string, unknown>): Schedule {
  if (!Check(ScheduleTriggerConfig, config)) {
    const first = [...Errors(ScheduleTriggerConfig, config)][0];
    throw new Error(`triggerConfig${first?.instancePath.replaceAll('/', '.') ?? ''} ${first?.message ?? 'is invalid'}`);
  }
  const timezone = config.timezone ?? 'UTC';
  try {
    cronOf(config.cron, timezone);
  } catch (err) {
    throw new Error(`triggerConfig.cron: ${(err as Error).message}`, { cause: err });
  }
  return { cron: config.cron.trim().split(/\s+/).join(' '), timezone, missed: config.missed ?? 'run_once' };
}

/**
 * Why a workflow's trigger settings cannot be saved, or null when they can. Webhook and manual
 * triggers take any settings (webhook's are checked by ingest; only responseMode is checked here); the others must match their schema
 * (a form's: forms.ts, formConfigProblem).
 */
export function triggerConfigProblem(type: TriggerType, config: Record<string, unknown>): string | null {
  const check = (schema: typeof NoteTriggerConfig | typeof EntityTriggerConfig) => {
    if (Check(schema, config)) return null;
    const first = [...Errors(schema, config)][0];
    return `triggerConfig${first?.instancePath.replaceAll('/', '.') ?? ''} ${first?.message ?? 'is invalid'}`;
  };
  switch (type) {
    case 'schedule':
      try {
        scheduleOf(config);
        return null;
      } catch (err) {
        return (err as Error).message;
      }
    case 'note':
      return check(NoteTriggerConfig);
    case 'entity':
      return check(EntityTriggerConfig);
    case 'form':
      return formConfigProblem(config);
    case 'webhook':
      return config.responseMode === undefined || RESPONSE_MODES.includes(config.responseMode as never)
        ? null
        : `triggerConfig.responseMode must be one of ${RESPONSE_MODES.join(', ')}`;
    default:
      return null;
  }
}

/** Whether a note or entity trigger's settings select this change. */
export function entityEventMatches(
  type: 'note' | 'entity',
  config: Record<string, unknown>,
  event: Pick<EntityChanged, 'entity' | 'action' | 'before' | 'after'>,
): boolean {
  if (type === 'note') {
    if (event.entity !== 'note' || (event.action !== 'created' && event.action !== 'updated')) return false;
    const c = config as NoteTriggerConfig;
    if (c.events && !c.events.includes(event.action)) return false;
    const note = event.after ?? {};
    if (c.projectId && note.projectId !== c.projectId) return false;
    if (c.tag && !(Array.isArray(note.tags) && note.tags.includes(c.tag))) return false;
    if (c.titleContains && !(typeof note.title === 'string' ? note.title : '').toLowerCase().includes(c.titleContains.toLowerCase())) return false;
    return true;
  }
  const c = config as Partial<EntityTriggerConfig>;
  if (event.entity === 'note' || c.entity !== event.entity) return false;
  return !c.events || c.events.includes(event.action);
}

/** The schedule's ticks one by one: next(after) is the first tick strictly after `after` (null: none). */
export function tickerOf(schedule: Pick<Schedule, 'cron' | 'timezone'>): { next(after: Date): Date | null } {
  const cron = cronOf(schedule.cron, schedule.timezone);
  return { next: (after) => cron.nextRun(after) };
}
