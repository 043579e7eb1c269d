import Type, { type Static, type TSchema } from 'typebox';
import { DateTime, StringEnum, Uuid } from './common.ts';
import { EntityAction, EntityTriggerConfig, NoteTriggerConfig, ScheduleTriggerConfig } from './triggers.ts';
import { exampleFormValue, FormTriggerConfig, type FormTriggerField } from './forms.ts';

/**
 * The trigger registry (docs/triggers.md): every trigger type defined once — its name, label and
 * description, the schema of its settings (a workflow's `triggerConfig`) and of its payload (what a
 * run's `{{trigger.*}}` holds), and one example payload. The workflow and run schemas, the trigger
 * event, the engine's payload builders (typed by the payload schemas, tested against the examples)
 * and the console (labels, picker, example payloads) all read it from here.
 */
export const TRIGGER_TYPE_NAMES = ['webhook', 'manual', 'schedule', 'note', 'entity', 'error', 'form'] as const;
export const TriggerType = StringEnum(TRIGGER_TYPE_NAMES);
export type TriggerType = Static<typeof TriggerType>;

const Fields = Type.Record(Type.String(), Type.Unknown());
const FieldsOrNull = Type.Union([Fields, Type.Null()]);

/** A webhook run: the request body, any JSON object. */
const WebhookPayload = Fields;
/** A manual run (Run now, run again, MCP's runNow): the payload given, any JSON object ({} without one). */
const ManualPayload = Fields;
export const SchedulePayload = Type.Object({
  /** The tick this run is for. */
  scheduledFor: DateTime,
  firedAt: DateTime,
  cron: Type.String(),
  timezone: Type.String(),
  /** Due ticks that got no run of their own (the engine was down, or behind). */
  missedTicks: Type.Integer({ minimum: 0 }),
});
export type SchedulePayload = Static<typeof SchedulePayload>;
export const NotePayload = Type.Object({
  event: StringEnum(['created', 'updated']),
  /** The note as the REST API shows it, after and before the change (previous: null when created). */
  note: FieldsOrNull,
  previous: FieldsOrNull,
  changedAt: DateTime,
});
export type NotePayload = Static<typeof NotePayload>;
export const EntityPayload = Type.Object({
  entity: EntityTriggerConfig.properties.entity,
  event: EntityAction,
  entityId: Uuid,
  /** The entity as the REST API shows it, before and after the change (null when created / deleted). */
  before: FieldsOrNull,
  after: FieldsOrNull,
  changedAt: DateTime,
});
export type EntityPayload = Static<typeof EntityPayload>;

/**
 * An error workflow's run (docs/workflow-engine.md, "Error workflow"): another workflow of the owner
 * failed, and names this one as its `errorWorkflowId`.
 */
export const ErrorPayload = Type.Object({
  /** The workflow whose run failed. */
  workflow: Type.Object({ id: Uuid }),
  run: Type.Object({
    id: Type.Union([Uuid, Type.Null()]),
    eventId: Type.String(),
    triggerType: Type.String(),
    startedAt: Type.Union([DateTime, Type.Null()]),
    finishedAt: Type.Union([DateTime, Type.Null()]),
  }),
  /** The node that failed the run; null when the run failed outside a node (its graph, its credentials). */
  failedNode: Type.Union([Type.Object({ id: Type.String(), type: Type.String(), error: Type.Union([Type.String(), Type.Null()]) }), Type.Null()]),
  /** The run's error. */
  error: Type.String(),
});
export type ErrorPayload = Static<typeof ErrorPayload>;

/**
 * A hosted form's submission (docs/triggers.md, "Form"): each field by its name — text, email, date
 * (YYYY-MM-DD) and select as text ("" when an optional one is left empty), number as a number (null
 * when left empty) — and when it was submitted.
 */
export const FormPayload = Type.Object({ submittedAt: DateTime }, { additionalProperties: true });
export type FormPayload = Static<typeof FormPayload> & Record<string, unknown>;

/** The fields of a form trigger's settings that look like fields (the example is shown for drafts too). */
const formFieldsOf = (config: Record<string, unknown>): FormTriggerField[] =>
  Array.isArray(config.fields)
    ? (config.fields as unknown[]).filter(
        (f): f is FormTriggerField =>
          typeof f === 'object' && f !== null && typeof (f as FormTriggerField).name === 'string' && (f as FormTriggerField).name !== '',
      )
    : [];

export interface TriggerTypeDefinition<T extends TriggerType = TriggerType, C extends TSchema = TSchema, P extends TSchema = TSchema> {
  type: T;
  label: string;
  /** One line for the trigger picker. */
  description: string;
  /** The settings (`triggerConfig`); workspace-api checks them on save (triggerConfigProblem). */
  config: C;
  /** What `{{trigger.*}}` holds in a run of this type. */
  payload: P;
  /** An example payload for these settings, as the engine builds it: shown until a real run gives one. */
  example(config: Record<string, unknown>, now: Date): Static<P>;
}

const defineTrigger = <T extends TriggerType, C extends TSchema, P extends TSchema>(d: TriggerTypeDefinition<T, C, P>) => d;

const AnySettings = Type.Record(Type.String(), Type.Unknown());
const str = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback);

/** Example entities as the REST API shows them (ids fixed, times `now`). */
function exampleEntity(kind: EntityPayload['entity'], now: string): Record<string, unknown> & { id: string } {
  switch (kind) {
    case 'project':
      return { id: '00000000-0000-4000-8000-000000000002', name: 'Website', description: '', color: null, status: 'active' };
    case 'calendar_entry':
      return {
        id: '00000000-0000-4000-8000-000000000003',
        title: 'Review',
        description: '',
        location: null,
        startsAt: now,
        endsAt: null,
        allDay: false,
        projectId: null,
      };
    case 'task':
      return {
        id: '00000000-0000-4000-8000-000000000004',
        title: 'Write report',
        status: 'todo',
        priority: 'none',
        projectId: null,
        dueDate: null,
        notes: '',
        tags: [],
      };
  }
}

/** Every trigger type, keyed by its name: a type added to TRIGGER_TYPE_NAMES without an entry here does not compile. */
export const TRIGGER_TYPES = {
  webhook: defineTrigger({
    type: 'webhook',
    label: 'Webhook',
    description: 'An HTTP request to the workflow’s URL.',
    // Checked by webhook-ingest (signature, rateLimitPerSecond), any other key is kept.
    config: AnySettings,
    payload: WebhookPayload,
    example: () => ({}),
  }),
  manual: defineTrigger({
    type: 'manual',
    label: 'Manual',
    description: 'Run now, by hand (the console, the API or an MCP client).',
    config: AnySettings,
    payload: ManualPayload,
    example: () => ({ message: 'Hello' }),
  }),
  schedule: defineTrigger({
    type: 'schedule',
    label: 'Schedule',
    description: 'A cron schedule in a time zone.',
    config: ScheduleTriggerConfig,
    payload: SchedulePayload,
    example: (config, now) => ({
      scheduledFor: now.toISOString(),
      firedAt: new Date(now.getTime() + 1_000).toISOString(),
      cron: str(config.cron, '0 9 * * *'),
      timezone: str(config.timezone, 'UTC'),
      missedTicks: 0,
    }),
  }),
  note: defineTrigger({
    type: 'note',
    label: 'Note',
    description: 'A note created or updated.',
    config: NoteTriggerConfig,
    payload: NotePayload,
    example: (_config, now): NotePayload => {
      const at = now.toISOString();
      const note = {
        id: '00000000-0000-4000-8000-000000000001',
        title: 'Meeting notes',
        content: 'Agenda…',
        projectId: null,
        tags: ['meeting'],
        pinned: false,
        createdAt: at,
        updatedAt: at,
      };
      return { event: 'updated', note, previous: { ...note, title: 'Meeting' }, changedAt: at };
    },
  }),
  entity: defineTrigger({
    type: 'entity',
    label: 'Entity change',
    description: 'A task, project or calendar entry created, updated, completed or deleted.',
    config: EntityTriggerConfig,
    payload: EntityPayload,
    example: (config, now): EntityPayload => {
      const kind: EntityPayload['entity'] = config.entity === 'project' || config.entity === 'calendar_entry' ? config.entity : 'task';
      const at = now.toISOString();
      const entity = exampleEntity(kind, at);
      const after = kind === 'task' ? { ...entity, status: 'done' } : entity;
      return { entity: kind, event: 'updated', entityId: entity.id, before: entity, after, changedAt: at };
    },
  }),
  error: defineTrigger({
    type: 'error',
    label: 'Error',
    description: 'Another workflow’s run failed (it names this one as its error workflow).',
    config: AnySettings,
    payload: ErrorPayload,
    example: (_config, now): ErrorPayload => ({
      workflow: { id: '00000000-0000-4000-8000-000000000005' },
      run: {
        id: '00000000-0000-4000-8000-000000000006',
        eventId: 'evt_1',
        triggerType: 'webhook',
        startedAt: new Date(now.getTime() - 1_000).toISOString(),
        finishedAt: now.toISOString(),
      },
      failedNode: { id: 'http_1', type: 'http_request', error: 'POST https://api.example.com/orders answered HTTP 500' },
      error: 'node "http_1" failed: POST https://api.example.com/orders answered HTTP 500',
    }),
  }),
  form: defineTrigger({
    type: 'form',
    label: 'Form',
    description: 'A form Flowdesk hosts at a public URL is submitted.',
    config: FormTriggerConfig,
    payload: FormPayload,
    example: (config, now): FormPayload => ({
      ...Object.fromEntries(formFieldsOf(config).map((f) => [f.name, exampleFormValue(f, now)])),
      submittedAt: now.toISOString(),
    }),
  }),
} as const satisfies { readonly [T in TriggerType]: TriggerTypeDefinition<T> };
