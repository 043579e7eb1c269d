import { FORM_TRIGGER_LIMITS, type FormTriggerField, type FormPayload, type FormTriggerConfig } from '@flowdesk/contracts';

/**
 * A hosted form's submission checked against its definition (docs/triggers.md, "Form"), on the
 * server whatever the browser checked: required fields, an email address, a number, a calendar date,
 * one of a select's options, and the lengths. Valid: the run's trigger data. Not valid: a message per
 * field, and the values as typed, so the page is shown again with them.
 */

/** The WHATWG definition of a valid email address (what a browser's type=email accepts). */
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export type SubmissionCheck = { ok: true; data: FormPayload } | { ok: false; errors: Record<string, string>; values: Record<string, string> };

/** A posted value as one string: the first of a repeated name, "" when absent or not text. */
const textOf = (v: unknown): string => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '');

function isCalendarDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** The message for a value of this field, or null when it is fine (`value` already trimmed, but for a textarea). */
function problemOf(field: FormTriggerField, value: string): string | null {
  if (value.trim() === '') return field.required ? 'Fill in this field.' : null;
  const max = field.type === 'textarea' ? FORM_TRIGGER_LIMITS.textareaChars : FORM_TRIGGER_LIMITS.valueChars;
  if (value.length > max) return `At most ${max.toLocaleString('en')} characters (this has ${value.length.toLocaleString('en')}).`;
  switch (field.type) {
    case 'email':
      return EMAIL.test(value) ? null : 'Enter an email address, like name@example.com.';
    case 'number':
      return NUMBER.test(value) && Number.isFinite(Number(value)) ? null : 'Enter a number, like 42 or 3.5.';
    case 'date':
      return isCalendarDate(value) ? null : 'Enter a date as YYYY-MM-DD, like 2026-12-24.';
    case 'select':
      return field.options?.includes(value) ? null : 'Choose one of the options.';
    default:
      return null;
  }
}

/** Checks the posted fields (only the form's own are read: anything else posted is ignored). */
export function checkSubmission(form: FormTriggerConfig, posted: Record<string, unknown>, submittedAt: Date): SubmissionCheck {
  const values: Record<string, string> = {};
  const errors: Record<string, string> = {};
  const data: Record<string, unknown> = {};
  for (const field of form.fields) {
    const raw = textOf(posted[field.name]);
    // A textarea keeps its text as typed (line breaks, indentation); one-line fields lose stray spaces.
    const value = field.type === 'textarea' ? raw : raw.trim();
    values[field.name] = value;
    const problem = problemOf(field, value);
    if (problem) {
      errors[field.name] = problem;
      continue;
    }
    data[field.name] = field.type === 'number' ? (value.trim() === '' ? null : Number(value)) : value;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors, values };
  return { ok: true, data: { ...data, submittedAt: submittedAt.toISOString() } };
}
