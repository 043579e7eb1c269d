/**
 * The pure parts of the trigger settings (docs/triggers.md): schedule presets ↔ cron, a cron
 * expression checked, described (cronstrue) and its next ticks (croner, the engine's library, in
 * the schedule's time zone), a Run now payload checked, the `{{trigger.*}}` each trigger type
 * provides, and how a run's trigger is named in the runs panel.
 */
import { Cron } from 'croner';
import cronstrue from 'cronstrue';
import { TRIGGER_TYPES, TRIGGER_TYPE_NAMES, type TriggerType } from '@flowdesk/contracts';
import type { WorkflowRun } from '../workspace.ts';

export type { TriggerType };

/** The trigger types' labels and descriptions, from the registry (libs/contracts trigger-types.ts). */
const byType = <V>(of: (type: TriggerType) => V) => Object.fromEntries(TRIGGER_TYPE_NAMES.map((t) => [t, of(t)])) as Record<TriggerType, V>;
export const TRIGGER_LABEL = byType((t) => TRIGGER_TYPES[t].label);
export const TRIGGER_DESCRIPTION = byType((t) => TRIGGER_TYPES[t].description);

// ---- schedule ----

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

export type SchedulePreset =
  | { kind: 'minutes'; every: number }
  | { kind: 'hourly'; minute: number }
  | { kind: 'daily'; hour: number; minute: number }
  | { kind: 'weekly'; day: number; hour: number; minute: number }
  | { kind: 'custom'; cron: string };

/** Minute steps that divide the hour evenly (so "every N minutes" keeps its rhythm across hours). */
export const MINUTE_STEPS = [1, 2, 5, 10, 15, 20, 30] as const;

/** The five-field cron expression of a preset. */
export function presetToCron(p: SchedulePreset): string {
  switch (p.kind) {
    case 'minutes':
      return p.every === 1 ? '* * * * *' : `*/${p.every} * * * *`;
    case 'hourly':
      return `${p.minute} * * * *`;
    case 'daily':
      return `${p.minute} ${p.hour} * * *`;
    case 'weekly':
      return `${p.minute} ${p.hour} * * ${p.day}`;
    case 'custom':
      return p.cron.trim().split(/\s+/).join(' ');
  }
}

const int = (s: string, min: number, max: number): number | null => (/^\d{1,2}$/.test(s) && Number(s) >= min && Number(s) <= max ? Number(s) : null);

/** The preset an expression is (so a saved schedule opens on its preset), else custom. */
export function cronToPreset(cron: string): SchedulePreset {
  const f = cron.trim().split(/\s+/);
  const custom: SchedulePreset = { kind: 'custom', cron: f.join(' ') };
  if (f.length !== 5) return custom;
  const [mi, h, dom, mon, dow] = f as [string, string, string, string, string];
  if (dom !== '*' || mon !== '*') return custom;
  if (h === '*' && dow === '*') {
    if (mi === '*') return { kind: 'minutes', every: 1 };
    const step = /^\*\/(\d+)$/.exec(mi);
    if (step && (MINUTE_STEPS as readonly number[]).includes(Number(step[1]))) return { kind: 'minutes', every: Number(step[1]) };
    const m = int(mi, 0, 59);
    return m === null ? custom : { kind: 'hourly', minute: m };
  }
  const m = int(mi, 0, 59);
  const hour = int(h, 0, 23);
  if (m === null || hour === null) return custom;
  if (dow === '*') return { kind: 'daily', hour, minute: m };
  const day = int(dow, 0, 6);
  return day === null ? custom : { kind: 'weekly', day, hour, minute: m };
}

/** "09:30" ↔ hour and minute (an `<input type="time">` value). */
export const timeOf = (hour: number, minute: number) => `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`;
export function parseTime(value: string): { hour: number; minute: number } | null {
  const m = /^(\d{2}):(\d{2})$/.exec(value);
  if (!m) return null;
  const hour = int(m[1]!, 0, 23);
  const minute = int(m[2]!, 0, 59);
  return hour === null || minute === null ? null : { hour, minute };
}

export type ScheduleCheck = { ok: true; cron: string; description: string; next: Date[] } | { ok: false; error: string };

/**
 * A schedule as the server will judge it (libs/contracts triggers.ts): five fields read by croner in
 * the time zone; with its description and the next `count` ticks after `from`.
 */
export function checkSchedule(cron: string, timezone: string, from = new Date(), count = 5): ScheduleCheck {
  const fields = cron.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5)
    return { ok: false, error: `A cron expression has five fields (minute hour day-of-month month day-of-week); this one has ${fields.length}.` };
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    return { ok: false, error: `Unknown time zone “${timezone}”.` };
  }
  const expr = fields.join(' ');
  let next: Date[];
  try {
    next = new Cron(expr, { timezone, paused: true, mode: '5-part' }).nextRuns(count, from);
  } catch (err) {
    return { ok: false, error: (err as Error).message.replace(/^CronPattern: /, '') };
  }
  let description: string;
  try {
    description = cronstrue.toString(expr, { use24HourTimeFormat: true, throwExceptionOnParseError: true });
  } catch (err) {
    description = String(err);
  }
  if (next.length === 0) return { ok: false, error: 'This expression never runs.' };
  return { ok: true, cron: expr, description, next };
}

/** A tick as a person in that zone reads it: "Thu, 26 Nov 2026, 09:00". */
export function formatTick(at: Date, timezone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(at);
}

/** The browser's time zone, UTC when it cannot tell. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** Every IANA zone the browser knows, UTC first (and `current`, should the list lack it). */
export function timeZones(current?: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const all = new Set(['UTC', ...known]);
  if (current) all.add(current);
  return [...all];
}

// ---- Run now ----

export type PayloadCheck = { ok: true; payload: Record<string, unknown> } | { ok: false; error: string };

/** A Run now payload: empty means `{}`; otherwise a JSON object (the API takes nothing else). */
export function parsePayload(text: string): PayloadCheck {
  if (!text.trim()) return { ok: true, payload: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `Not valid JSON: ${(err as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, error: 'The payload must be a JSON object, e.g. {"customer": "Ada"}.' };
  return { ok: true, payload: value as Record<string, unknown> };
}

// ---- variables per trigger type ----

/**
 * What `{{trigger.*}}` holds for each type: the registry's example (libs/contracts trigger-types.ts,
 * the payload schema's shape, which the engine's payload builders are tested against), shown until a
 * run of that type gives the real thing.
 */
export function exampleTrigger(type: TriggerType, config: Record<string, unknown>): Record<string, unknown> {
  const now = new Date();
  now.setSeconds(0, 0);
  return TRIGGER_TYPES[type].example(config, now);
}

/** A run whose payload the engine could not store keeps a placeholder (docs/workflow-engine.md), not a sample. */
const isPlaceholderPayload = (payload: Record<string, unknown>): boolean => typeof payload._unstorable === 'string' || payload.unstorablePayload === true;

/**
 * The sample of `{{trigger.*}}` the picker shows: the payload of the last run when it was of this
 * type; for a manual trigger else the workflow's last trigger payload; else the documented example.
 */
export function triggerSample(
  type: TriggerType,
  config: Record<string, unknown>,
  lastRun: Pick<WorkflowRun, 'triggerPayload' | 'triggerType'> | null,
  samplePayload: Record<string, unknown> | null = null,
): { value: Record<string, unknown>; fromRun: boolean } {
  if (lastRun && lastRun.triggerType === type && !isPlaceholderPayload(lastRun.triggerPayload)) return { value: lastRun.triggerPayload, fromRun: true };
  if (type === 'manual' && samplePayload) return { value: samplePayload, fromRun: true };
  return { value: exampleTrigger(type, config), fromRun: false };
}

// ---- runs ----

/** How a run was started: "Schedule", "Manual by ada@example.com", "Run again". */
export function triggerLabel(
  // triggerType may be absent in runs recorded before trigger types existed: webhook (or manual, by its event id) runs.
  run: Pick<WorkflowRun, 'startedBy' | 'rerunOf' | 'eventId'> & Partial<Pick<WorkflowRun, 'triggerType'>>,
  me?: { id: string; email: string } | null,
): string {
  if (run.rerunOf) return 'Run again';
  const type: TriggerType = run.triggerType ?? (run.eventId.startsWith('rerun_') || run.eventId.startsWith('manual_') ? 'manual' : 'webhook');
  if (type === 'manual' && run.startedBy) return `Manual by ${me && me.id === run.startedBy ? me.email : 'another user'}`;
  return TRIGGER_LABEL[type];
}
