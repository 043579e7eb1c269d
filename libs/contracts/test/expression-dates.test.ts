// The date functions of expressions (src/expression-dates.ts; docs/workflow-engine.md, "Dates"), as a
// workflow author writes them: through evaluateExpression, the same path the engine and the sandbox use.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluateExpression } from '../src/expressions.ts';

const scope = {
  trigger: { due: '2026-03-28T10:30:00.000Z', mail: 'Sat, 28 Mar 2026 10:30:00 +0000', de: '28.03.2026 14:05' },
  nodes: {},
  now: '2026-03-28T10:30:00.000Z',
};
const ev = (source: string) => evaluateExpression(source, scope);

test('$dateAdd adds calendar units, in a time zone across its DST change', async () => {
  assert.equal(await ev('$dateAdd(trigger.due, 3, "days")'), '2026-03-31T10:30:00.000Z');
  assert.equal(await ev('$dateAdd(trigger.due, -90, "minutes")'), '2026-03-28T09:00:00.000Z');
  assert.equal(await ev('$dateAdd(trigger.due, 1, "month")'), '2026-04-28T10:30:00.000Z');
  // Berlin moves its clocks on 29 March 2026: one calendar day later is 23 hours later.
  assert.equal(await ev('$dateAdd(trigger.due, 1, "day", "Europe/Berlin")'), '2026-03-29T11:30:00.000+02:00');
  // Epoch milliseconds are dates too ($toMillis, $millis()).
  assert.equal(await ev('$dateAdd($toMillis(trigger.due), 2, "hours")'), '2026-03-28T12:30:00.000Z');
});

test('$dateStartOf and $dateEndOf: day and week (Monday) in a zone', async () => {
  assert.equal(await ev('$dateStartOf(trigger.due, "day")'), '2026-03-28T00:00:00.000Z');
  assert.equal(await ev('$dateStartOf(trigger.due, "day", "America/New_York")'), '2026-03-28T00:00:00.000-04:00');
  assert.equal(await ev('$dateStartOf(trigger.due, "week", "Europe/Berlin")'), '2026-03-23T00:00:00.000+01:00');
  assert.equal(await ev('$dateEndOf(trigger.due, "month")'), '2026-03-31T23:59:59.999Z');
  // Composes: the start of tomorrow in Tokyo.
  assert.equal(await ev('$dateStartOf($dateAdd(trigger.due, 1, "day", "Asia/Tokyo"), "day", "Asia/Tokyo")'), '2026-03-29T00:00:00.000+09:00');
});

test('$dateFormat formats in a zone; $dateParse reads ISO, mail dates and a given format', async () => {
  assert.equal(await ev('$dateFormat(trigger.due, "dd.MM.yyyy HH:mm", "Europe/Berlin")'), '28.03.2026 11:30');
  assert.equal(await ev('$dateFormat(trigger.due, "cccc d LLLL")'), 'Saturday 28 March');
  assert.equal(await ev('$dateParse(trigger.mail)'), '2026-03-28T10:30:00.000Z');
  assert.equal(await ev('$dateParse(trigger.de, "dd.MM.yyyy HH:mm", "Europe/Berlin")'), '2026-03-28T13:05:00.000Z');
  assert.equal(await ev('$dateParse("2026-03-28")'), '2026-03-28T00:00:00.000Z');
});

test('$dateDiff counts units between two dates, negative backwards', async () => {
  assert.equal(await ev('$dateDiff(trigger.due, "2026-04-02T10:30:00.000Z", "days")'), 5);
  assert.equal(await ev('$dateDiff(trigger.due, "2026-03-28T09:00:00.000Z", "hours")'), -1.5);
  assert.equal(await ev('$dateDiff(trigger.due, $dateAdd(trigger.due, 2, "weeks"), "days")'), 14);
});

test('bad arguments fail the expression with a message naming the function and what it takes', async () => {
  await assert.rejects(ev('$dateAdd("yesterday", 1, "day")'), /\$dateAdd: "yesterday" is not a date/);
  await assert.rejects(ev('$dateAdd(trigger.due, 1, "fortnight")'), /\$dateAdd: the unit must be one of years, quarters, months, weeks, days/);
  await assert.rejects(ev('$dateAdd(trigger.due, 1e9, "days")'), /the amount must be a number of at most 1000000/);
  await assert.rejects(ev('$dateStartOf(trigger.due, "day", "Mars/Olympus")'), /"Mars\/Olympus" is not a time zone/);
  await assert.rejects(ev('$dateParse("31.02.2026", "dd.MM.yyyy")'), /\$dateParse: "31.02.2026" is not a date in the format "dd.MM.yyyy"/);
  await assert.rejects(ev('$dateFormat(trigger.due, $pad("", 300, "y"))'), /the format is longer than 200 characters/);
});
