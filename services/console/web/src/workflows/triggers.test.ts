import { describe, expect, test } from 'vitest';
import {
  checkSchedule,
  cronToPreset,
  exampleTrigger,
  formatTick,
  parsePayload,
  parseTime,
  presetToCron,
  triggerLabel,
  triggerSample,
  type SchedulePreset,
} from './triggers.ts';

describe('schedule presets', () => {
  const cases: [SchedulePreset, string][] = [
    [{ kind: 'minutes', every: 1 }, '* * * * *'],
    [{ kind: 'minutes', every: 15 }, '*/15 * * * *'],
    [{ kind: 'hourly', minute: 5 }, '5 * * * *'],
    [{ kind: 'daily', hour: 9, minute: 30 }, '30 9 * * *'],
    [{ kind: 'weekly', day: 1, hour: 8, minute: 0 }, '0 8 * * 1'],
  ];
  test.each(cases)('%o → %s and back', (preset, cron) => {
    expect(presetToCron(preset)).toBe(cron);
    expect(cronToPreset(cron)).toEqual(preset);
  });
  test('anything else is custom, normalised to single spaces', () => {
    expect(presetToCron({ kind: 'custom', cron: '  0  9 1 * * ' })).toBe('0 9 1 * *');
    expect(cronToPreset('0 9 1 * *')).toEqual({ kind: 'custom', cron: '0 9 1 * *' });
    expect(cronToPreset('*/7 * * * *')).toEqual({ kind: 'custom', cron: '*/7 * * * *' });
    expect(cronToPreset('0 9 * * 1-5')).toEqual({ kind: 'custom', cron: '0 9 * * 1-5' });
    expect(cronToPreset('0 9 * *')).toEqual({ kind: 'custom', cron: '0 9 * *' });
  });
  test('times', () => {
    expect(parseTime('09:05')).toEqual({ hour: 9, minute: 5 });
    expect(parseTime('24:00')).toBeNull();
    expect(parseTime('')).toBeNull();
  });
});

describe('checkSchedule', () => {
  const from = new Date('2026-03-27T12:00:00Z');
  test('describes the expression and lists the next ticks in the time zone, across DST', () => {
    const r = checkSchedule('0 9 * * *', 'Europe/Berlin', from, 5);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.description).toBe('At 09:00');
    // 28 March is still winter time (UTC+1); from 29 March summer time (UTC+2): always 09:00 in Berlin.
    expect(r.next.map((d) => d.toISOString())).toEqual([
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
      '2026-03-31T07:00:00.000Z',
      '2026-04-01T07:00:00.000Z',
    ]);
    expect(formatTick(r.next[1]!, 'Europe/Berlin')).toMatch(/^Sun,? 29 Mar 2026, 09:00$/);
  });
  test('every 15 minutes', () => {
    const r = checkSchedule('*/15 * * * *', 'UTC', from, 2);
    expect(r).toMatchObject({ ok: true, description: 'Every 15 minutes' });
    if (r.ok) expect(r.next.map((d) => d.toISOString())).toEqual(['2026-03-27T12:15:00.000Z', '2026-03-27T12:30:00.000Z']);
  });
  test('refuses what the server refuses, with a reason', () => {
    expect(checkSchedule('0 9 * *', 'UTC')).toEqual({ ok: false, error: expect.stringContaining('five fields') as string });
    expect(checkSchedule('0 0 9 * * *', 'UTC')).toEqual({ ok: false, error: expect.stringContaining('five fields') as string });
    expect(checkSchedule('61 9 * * *', 'UTC')).toEqual({ ok: false, error: expect.stringMatching(/minute/i) as string });
    expect(checkSchedule('0 9 * * *', 'Mars/Olympus')).toEqual({ ok: false, error: expect.stringContaining('time zone') as string });
    expect(checkSchedule('', 'UTC').ok).toBe(false);
  });
});

describe('parsePayload', () => {
  test('empty is {}', () => expect(parsePayload('  ')).toEqual({ ok: true, payload: {} }));
  test('an object', () => expect(parsePayload('{"a": [1]}')).toEqual({ ok: true, payload: { a: [1] } }));
  test('not JSON', () => expect(parsePayload('{a: 1}')).toMatchObject({ ok: false, error: expect.stringContaining('Not valid JSON') as string }));
  test('not an object', () => {
    expect(parsePayload('[1]')).toMatchObject({ ok: false, error: expect.stringContaining('JSON object') as string });
    expect(parsePayload('"x"').ok).toBe(false);
    expect(parsePayload('null').ok).toBe(false);
  });
});

describe('trigger variables', () => {
  test('each type has the fields the engine sends', () => {
    expect(Object.keys(exampleTrigger('schedule', { cron: '*/5 * * * *', timezone: 'Europe/Berlin' }))).toEqual([
      'scheduledFor',
      'firedAt',
      'cron',
      'timezone',
      'missedTicks',
    ]);
    expect(exampleTrigger('schedule', { cron: '*/5 * * * *', timezone: 'Europe/Berlin' })).toMatchObject({ cron: '*/5 * * * *', timezone: 'Europe/Berlin' });
    expect(Object.keys(exampleTrigger('note', {}))).toEqual(['event', 'note', 'previous', 'changedAt']);
    expect(Object.keys(exampleTrigger('entity', { entity: 'project' }))).toEqual(['entity', 'event', 'entityId', 'before', 'after', 'changedAt']);
    expect(exampleTrigger('entity', { entity: 'project' })).toMatchObject({ entity: 'project' });
  });
  test('the last run of the same type wins over the example', () => {
    const payload = { scheduledFor: '2026-01-01T09:00:00.000Z' };
    expect(triggerSample('schedule', {}, { triggerType: 'schedule', triggerPayload: payload })).toEqual({ value: payload, fromRun: true });
    expect(triggerSample('schedule', {}, { triggerType: 'manual', triggerPayload: payload }).fromRun).toBe(false);
    expect(triggerSample('schedule', {}, null).fromRun).toBe(false);
  });
  test("a run whose payload could not be stored offers its placeholder as no sample (the engine's form and the older one)", () => {
    for (const placeholder of [{ _unstorable: 'invalid input syntax for type json' }, { unstorablePayload: true }]) {
      expect(triggerSample('note', {}, { triggerType: 'note', triggerPayload: placeholder }).fromRun).toBe(false);
    }
  });
});

describe('triggerLabel', () => {
  const me = { id: 'u1', email: 'alice@example.com' };
  const run = { eventId: 'x', rerunOf: null, startedBy: null };
  test('names the type, and who started a manual run', () => {
    expect(triggerLabel({ ...run, triggerType: 'schedule' }, me)).toBe('Schedule');
    expect(triggerLabel({ ...run, triggerType: 'manual', startedBy: 'u1' }, me)).toBe('Manual by alice@example.com');
    expect(triggerLabel({ ...run, triggerType: 'manual', startedBy: 'u2' }, me)).toBe('Manual by another user');
    expect(triggerLabel({ ...run, triggerType: 'entity' })).toBe('Entity change');
    expect(triggerLabel({ ...run, triggerType: 'manual', rerunOf: 'r1', startedBy: 'u1' }, me)).toBe('Run again');
    expect(triggerLabel({ ...run })).toBe('Webhook');
  });
});
