import Type, { type Static } from 'typebox';
import { Check, Errors } from 'typebox/value';
import { StringEnum } from './common.ts';

/**
 * The form trigger's settings (docs/triggers.md, "Form"): the page Flowdesk hosts at
 * `/form/<workflow_id>` (webhook-ingest renders it, checks a submission and publishes it as the run's
 * trigger data). Defined once here: workspace-api checks a workflow's settings with
 * `formConfigProblem` on save, webhook-ingest renders and validates with them, the console edits them.
 */

/** The public path of a workflow's hosted form (served by webhook-ingest, routed by the front and the ingress). */
export const FORM_PATH_PREFIX = '/form/';
export const formPath = (workflowId: string): string => `${FORM_PATH_PREFIX}${workflowId}`;

export const FORM_FIELD_TYPES = ['text', 'email', 'number', 'date', 'select', 'textarea'] as const;
export type FormFieldType = (typeof FORM_FIELD_TYPES)[number];

/** What a form definition may hold (checked on save) and what one submitted value may hold (checked by ingest). */
export const FORM_TRIGGER_LIMITS = {
  fields: 30,
  options: 50,
  titleChars: 200,
  labelChars: 200,
  helpChars: 500,
  descriptionChars: 2_000,
  thankYouChars: 2_000,
  /** A submitted value: single-line fields (text, email, number, date, select). */
  valueChars: 1_000,
  /** A submitted value of a textarea. */
  textareaChars: 10_000,
} as const;

/** A field's key in the trigger data (`{{trigger.<name>}}`): a letter, then letters, digits or _. */
export const FORM_FIELD_NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_]{0,63}$';
/** Keys the submission itself sets. */
export const RESERVED_FORM_FIELD_NAMES = ['submittedAt'] as const;

export const FormTriggerField = Type.Object(
  {
    name: Type.String({ pattern: FORM_FIELD_NAME_PATTERN, description: 'Its key in the trigger data: {{trigger.<name>}}.' }),
    label: Type.String({ minLength: 1, maxLength: FORM_TRIGGER_LIMITS.labelChars }),
    type: StringEnum(FORM_FIELD_TYPES),
    required: Type.Optional(Type.Boolean()),
    /** The choices of a select field (its value is the chosen one); only for select. */
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: FORM_TRIGGER_LIMITS.labelChars }), { minItems: 1, maxItems: FORM_TRIGGER_LIMITS.options }),
    ),
    /** One line under the field. */
    help: Type.Optional(Type.String({ maxLength: FORM_TRIGGER_LIMITS.helpChars })),
  },
  { additionalProperties: false },
);
export type FormTriggerField = Static<typeof FormTriggerField>;

export const FormTriggerConfig = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: FORM_TRIGGER_LIMITS.titleChars }),
    description: Type.Optional(Type.String({ maxLength: FORM_TRIGGER_LIMITS.descriptionChars })),
    fields: Type.Array(FormTriggerField, { minItems: 1, maxItems: FORM_TRIGGER_LIMITS.fields }),
    /** The submit button's text (default "Submit"). */
    submitLabel: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    /** Shown after a submission (default "Thank you! Your answer was sent."). */
    thankYou: Type.Optional(Type.String({ maxLength: FORM_TRIGGER_LIMITS.thankYouChars })),
    /** Instead of the thank-you text: where the browser goes after a submission (http or https). */
    redirectUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2_000 })),
  },
  { additionalProperties: true },
);
export type FormTriggerConfig = Static<typeof FormTriggerConfig>;

export const DEFAULT_FORM_THANK_YOU = 'Thank you! Your answer was sent.';

/** Why a form trigger's settings cannot be saved (naming the field), or null when they can. */
export function formConfigProblem(config: Record<string, unknown>): string | null {
  if (!Check(FormTriggerConfig, config)) {
    const first = [...Errors(FormTriggerConfig, config)][0];
    return `triggerConfig${first?.instancePath.replaceAll('/', '.') ?? ''} ${first?.message ?? 'is invalid'}`;
  }
  const seen = new Set<string>();
  for (const [i, f] of config.fields.entries()) {
    const at = `triggerConfig.fields.${i}`;
    if ((RESERVED_FORM_FIELD_NAMES as readonly string[]).includes(f.name)) return `${at}.name "${f.name}" is set by the submission itself; choose another`;
    if (seen.has(f.name)) return `${at}.name "${f.name}" is used by another field; each field needs its own name`;
    seen.add(f.name);
    if (f.type === 'select' && !f.options) return `${at}.options: a select field needs at least one option`;
    if (f.type !== 'select' && f.options) return `${at}.options: only a select field has options`;
    if (f.options && new Set(f.options).size !== f.options.length) return `${at}.options: each option once`;
  }
  if (config.redirectUrl !== undefined) {
    if (config.thankYou !== undefined) return 'triggerConfig: give a thank-you text or a redirect URL, not both';
    let url: URL | undefined;
    try {
      url = new URL(config.redirectUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return 'triggerConfig.redirectUrl must be an http or https URL';
  }
  return null;
}

/** An example value per field type, as a submission gives it (the console's sample until a real one arrives). */
export function exampleFormValue(field: Pick<FormTriggerField, 'type' | 'options' | 'name'>, now: Date): string | number {
  switch (field.type) {
    case 'email':
      return 'ada@example.com';
    case 'number':
      return 3;
    case 'date':
      return now.toISOString().slice(0, 10);
    case 'select':
      return field.options?.[0] ?? 'Option';
    case 'textarea':
      return 'Please call me back about the quote.';
    case 'text':
      return field.name.toLowerCase().includes('name') ? 'Ada Lovelace' : 'Example';
  }
}
