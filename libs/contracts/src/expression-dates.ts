// Date functions for expressions (docs/workflow-engine.md, "Dates"): JSONata has $now(), $millis(),
// $fromMillis() and $toMillis() and nothing for calendars or time zones, so adding three days was
// `$fromMillis($toMillis($now()) + 3*86400000)` and "start of today in Berlin" could not be written.
// These are Luxon's (the library n8n's expressions use), registered as JSONata functions. Every date
// argument is an ISO 8601 text (as $now() gives) or epoch milliseconds; every date result is ISO 8601
// text in the zone given (UTC, "Z", when none), so results stay JSON and feed the next function.
import { DateTime, type DurationUnit } from 'luxon';

const ADD_UNITS = ['years', 'quarters', 'months', 'weeks', 'days', 'hours', 'minutes', 'seconds', 'milliseconds'] as const;
const START_UNITS = ['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second'] as const;
/** Longest format or input text taken (a format is a handful of tokens). */
const MAX_TEXT = 200;
/** Largest amount $dateAdd takes (a million days is ~2,700 years). */
const MAX_AMOUNT = 1_000_000;

function fail(fn: string, message: string): never {
  throw new Error(`$${fn}: ${message}`);
}

function zoneOf(fn: string, zone: unknown): string {
  if (zone === undefined || zone === null || zone === '') return 'UTC';
  if (typeof zone !== 'string' || zone.length > 64) fail(fn, 'the time zone must be an IANA name such as "Europe/Berlin"');
  if (!DateTime.now().setZone(zone).isValid) fail(fn, `"${zone}" is not a time zone (an IANA name such as "Europe/Berlin")`);
  return zone;
}

/** A date argument: ISO 8601 text or epoch milliseconds. */
function dateOf(fn: string, value: unknown, zone: string): DateTime {
  let dt: DateTime | undefined;
  if (typeof value === 'number' && Number.isFinite(value)) dt = DateTime.fromMillis(value, { zone });
  else if (typeof value === 'string' && value.length <= MAX_TEXT) dt = DateTime.fromISO(value, { zone });
  if (!dt?.isValid) fail(fn, `${JSON.stringify(value)?.slice(0, 60) ?? 'undefined'} is not a date (ISO 8601 text, as $now() gives, or epoch milliseconds)`);
  return dt;
}

function unitOf<T extends string>(fn: string, unit: unknown, units: readonly T[]): T {
  const u = typeof unit === 'string' ? unit.toLowerCase() : '';
  const plural = units.find((x) => x === u || x === `${u}s` || `${x}s` === u);
  if (!plural) fail(fn, `the unit must be one of ${units.join(', ')}`);
  return plural;
}

function textOf(fn: string, what: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') fail(fn, `${what} must be text`);
  if (value.length > MAX_TEXT) fail(fn, `${what} is longer than ${MAX_TEXT} characters`);
  return value;
}

const iso = (dt: DateTime) => (dt.zoneName === 'UTC' ? dt.toUTC().toISO()! : dt.toISO()!);

/** The functions, by their JSONata names without the `$`. */
export const DATE_FUNCTIONS = {
  /** `$dateAdd(date, amount, unit[, zone])`: `$dateAdd($now(), 3, "days")`. Calendar arithmetic in the zone (a day across a DST change is a calendar day). */
  dateAdd(date: unknown, amount: unknown, unit: unknown, zone?: unknown): string {
    const z = zoneOf('dateAdd', zone);
    if (typeof amount !== 'number' || !Number.isFinite(amount) || Math.abs(amount) > MAX_AMOUNT)
      fail('dateAdd', `the amount must be a number of at most ${MAX_AMOUNT}`);
    const u = unitOf('dateAdd', unit, ADD_UNITS);
    return iso(dateOf('dateAdd', date, z).plus({ [u]: amount }));
  },
  /** `$dateStartOf(date, unit[, zone])`: `$dateStartOf($now(), "day", "Europe/Berlin")`; weeks start on Monday. */
  dateStartOf(date: unknown, unit: unknown, zone?: unknown): string {
    const z = zoneOf('dateStartOf', zone);
    return iso(dateOf('dateStartOf', date, z).startOf(unitOf('dateStartOf', unit, START_UNITS)));
  },
  /** `$dateEndOf(date, unit[, zone])`: the last millisecond of the unit. */
  dateEndOf(date: unknown, unit: unknown, zone?: unknown): string {
    const z = zoneOf('dateEndOf', zone);
    return iso(dateOf('dateEndOf', date, z).endOf(unitOf('dateEndOf', unit, START_UNITS)));
  },
  /** `$dateFormat(date, format[, zone])` with Luxon's tokens: `$dateFormat($now(), "dd.MM.yyyy HH:mm", "Europe/Berlin")`. */
  dateFormat(date: unknown, format: unknown, zone?: unknown): string {
    const z = zoneOf('dateFormat', zone);
    return dateOf('dateFormat', date, z).toFormat(textOf('dateFormat', 'the format', format), { locale: 'en-US' });
  },
  /**
   * `$dateParse(text[, format[, zone]])`: ISO 8601 text in UTC. Without a format: ISO 8601, RFC 2822
   * (mail), HTTP and SQL dates; with one, Luxon's tokens (`"dd.MM.yyyy"`), read in the zone.
   */
  dateParse(text: unknown, format?: unknown, zone?: unknown): string {
    const z = zoneOf('dateParse', zone);
    const t = textOf('dateParse', 'the text', text);
    const options = { zone: z };
    const f = format === undefined || format === null || format === '' ? undefined : textOf('dateParse', 'the format', format);
    const dt =
      f === undefined
        ? [
            (x: string) => DateTime.fromISO(x, options),
            (x: string) => DateTime.fromRFC2822(x, options),
            (x: string) => DateTime.fromHTTP(x, options),
            (x: string) => DateTime.fromSQL(x, options),
          ]
            .map((parse) => parse(t))
            .find((d) => d.isValid)
        : DateTime.fromFormat(t, f, { ...options, locale: 'en-US' });
    if (!dt?.isValid) fail('dateParse', `"${t.slice(0, 60)}" is not a date${f ? ` in the format "${f}"` : ' (ISO 8601, RFC 2822, HTTP or SQL)'}`);
    return dt.toUTC().toISO();
  },
  /** `$dateDiff(from, to, unit)`: how many units from `from` to `to` (negative when `to` is earlier), with fractions. */
  dateDiff(from: unknown, to: unknown, unit: unknown): number {
    const u = unitOf('dateDiff', unit, ADD_UNITS) as DurationUnit;
    const a = dateOf('dateDiff', from, 'UTC');
    const b = dateOf('dateDiff', to, 'UTC');
    return b.diff(a, u).as(u);
  },
};
