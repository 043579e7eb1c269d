// /api/v1/calendar-entries over real HTTP: creating (default ends), listing in start order with the
// from/to overlap window and filters, offset pagination, reading, rescheduling, deleting, project
// links, and request validation. Runs on PGlite (no DATABASE_URL) and on Postgres.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { CalendarEntry, PageOf } from '@flowdesk/contracts';
import { createProject, created, show, startTestApi, type ApiResponse, type TestApi, type TestUser } from './helpers/app.ts';

const ENTRIES = '/api/v1/calendar-entries';

let api: TestApi;

before(async () => {
  api = await startTestApi();
});

after(async () => {
  await api?.close();
});

const createEntry = (user: TestUser, body: Record<string, unknown>) => created<CalendarEntry>(user, ENTRIES, body);

async function listPage(user: TestUser, query: Record<string, string | number> = {}): Promise<PageOf<CalendarEntry>> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await user.call<PageOf<CalendarEntry>>('GET', qs ? `${ENTRIES}?${qs}` : ENTRIES);
  assert.equal(res.status, 200, show(res));
  return res.body;
}

const titles = (page: PageOf<CalendarEntry>) => page.items.map((e) => e.title);

function assertValidationError(res: ApiResponse, field: string) {
  assert.equal(res.status, 400, show(res));
  assert.equal(res.body.error, 'validation_failed');
  assert.equal(typeof res.body.message, 'string');
  assert.match(res.body.message, new RegExp(field), `message should name ${field}: ${res.body.message}`);
}

describe('POST /calendar-entries', () => {
  test('creates an entry (201) that ends one hour after its start by default', async () => {
    const user = api.user();
    const res = await user.call<CalendarEntry>('POST', ENTRIES, { title: 'Dentist', startsAt: '2026-03-12T09:15:00Z' });
    assert.equal(res.status, 201, show(res));
    const e = res.body;
    assert.match(e.id, /^[0-9a-f-]{36}$/);
    assert.equal(e.title, 'Dentist');
    assert.equal(e.startsAt, '2026-03-12T09:15:00.000Z');
    assert.equal(e.endsAt, '2026-03-12T10:15:00.000Z');
    assert.equal(e.allDay, false);
    assert.equal(e.description, '');
    assert.equal(e.location, null);
    assert.equal(e.projectId, null);

    const got = await user.call<CalendarEntry>('GET', `${ENTRIES}/${e.id}`);
    assert.equal(got.status, 200, show(got));
    assert.deepEqual(got.body, e);
  });

  test('keeps an explicit end, description and location', async () => {
    const user = api.user();
    const e = await createEntry(user, {
      title: 'Workshop',
      startsAt: '2026-03-12T13:00:00Z',
      endsAt: '2026-03-12T16:30:00Z',
      description: 'Bring laptop',
      location: 'Room 4',
    });
    assert.equal(e.endsAt, '2026-03-12T16:30:00.000Z');
    assert.equal(e.description, 'Bring laptop');
    assert.equal(e.location, 'Room 4');
  });

  test('an all-day entry ends by default at the end of its UTC day', async () => {
    const user = api.user();
    const midday = await createEntry(user, { title: 'Offsite', startsAt: '2026-03-12T09:30:00Z', allDay: true });
    assert.equal(midday.allDay, true);
    assert.equal(midday.endsAt, '2026-03-13T00:00:00.000Z');

    const midnight = await createEntry(user, { title: 'Holiday', startsAt: '2026-03-31T00:00:00Z', allDay: true });
    assert.equal(midnight.endsAt, '2026-04-01T00:00:00.000Z');

    // 23:30 at UTC-2 is 01:30 UTC the next day: the UTC day is the one that counts.
    const offset = await createEntry(user, { title: 'Late', startsAt: '2026-03-12T23:30:00-02:00', allDay: true });
    assert.equal(offset.startsAt, '2026-03-13T01:30:00.000Z');
    assert.equal(offset.endsAt, '2026-03-14T00:00:00.000Z');
  });

  test('an end before the start is refused with 400 validation_failed and nothing is created', async () => {
    const user = api.user();
    const res = await user.call('POST', ENTRIES, { title: 'Backwards', startsAt: '2026-03-12T10:00:00Z', endsAt: '2026-03-12T09:59:59Z' });
    assertValidationError(res, 'endsAt');
    assert.deepEqual((await listPage(user)).items, []);
  });
});

describe('validation', () => {
  test('a missing title is refused, naming the field', async () => {
    const user = api.user();
    assertValidationError(await user.call('POST', ENTRIES, { startsAt: '2026-03-12T10:00:00Z' }), 'title');
    assertValidationError(await user.call('POST', ENTRIES, { title: '', startsAt: '2026-03-12T10:00:00Z' }), 'title');
    assert.deepEqual((await listPage(user)).items, []);
  });

  test('a date-time that is not one is refused, naming the field', async () => {
    const user = api.user();
    assertValidationError(await user.call('POST', ENTRIES, { title: 'x', startsAt: 'tomorrow at 10' }), 'startsAt');
    assertValidationError(await user.call('POST', ENTRIES, { title: 'x', startsAt: '2026-03-12' }), 'startsAt');
    assertValidationError(await user.call('POST', ENTRIES, { title: 'x', startsAt: '2026-03-12T10:00:00Z', endsAt: '12:00' }), 'endsAt');
    assertValidationError(await user.call('POST', ENTRIES, { title: 'x' }), 'startsAt');
    assert.deepEqual((await listPage(user)).items, []);
  });

  test('an unknown field is refused, naming the field', async () => {
    const user = api.user();
    assertValidationError(await user.call('POST', ENTRIES, { title: 'x', startsAt: '2026-03-12T10:00:00Z', colour: 'red' }), 'colour');
    assert.deepEqual((await listPage(user)).items, []);

    const e = await createEntry(user, { title: 'x', startsAt: '2026-03-12T10:00:00Z' });
    assertValidationError(await user.call('PATCH', `${ENTRIES}/${e.id}`, { attendees: ['a'] }), 'attendees');
    assert.equal((await user.call<CalendarEntry>('GET', `${ENTRIES}/${e.id}`)).body.updatedAt, e.updatedAt);
  });

  test('a bad list query is refused, naming the parameter', async () => {
    const user = api.user();
    assertValidationError(await user.call('GET', `${ENTRIES}?from=yesterday`), 'from');
    assertValidationError(await user.call('GET', `${ENTRIES}?limit=0`), 'limit');
  });
});

describe('GET /calendar-entries', () => {
  test('lists entries in start order', async () => {
    const user = api.user();
    for (const [title, startsAt] of [
      ['third', '2026-05-03T08:00:00Z'],
      ['first', '2026-05-01T08:00:00Z'],
      ['fourth', '2026-05-03T09:00:00Z'],
      ['second', '2026-05-02T23:59:00Z'],
    ]) {
      await createEntry(user, { title, startsAt });
    }
    const page = await listPage(user);
    assert.deepEqual(titles(page), ['first', 'second', 'third', 'fourth']);
    assert.equal(page.nextCursor, null);
  });

  test('from/to selects the entries overlapping the window', async () => {
    const user = api.user();
    const day = '2026-04-01';
    const at = (hhmm: string) => `${day}T${hhmm}:00Z`;
    await createEntry(user, { title: 'ends at from', startsAt: at('08:00'), endsAt: at('10:00') });
    await createEntry(user, { title: 'spans from', startsAt: at('09:00'), endsAt: at('10:30') });
    await createEntry(user, { title: 'inside', startsAt: at('11:00'), endsAt: at('11:30') });
    await createEntry(user, { title: 'spans to', startsAt: at('11:30'), endsAt: at('13:00') });
    await createEntry(user, { title: 'starts at to', startsAt: at('12:00'), endsAt: at('13:00') });
    await createEntry(user, { title: 'encloses', startsAt: at('07:00'), endsAt: at('14:00') });
    await createEntry(user, { title: 'next day', startsAt: '2026-04-02T10:00:00Z' });

    const window = await listPage(user, { from: at('10:00'), to: at('12:00') });
    assert.deepEqual(titles(window), ['encloses', 'spans from', 'inside', 'spans to']);

    const fromOnly = await listPage(user, { from: at('12:00') });
    assert.deepEqual(titles(fromOnly), ['encloses', 'spans to', 'starts at to', 'next day']);

    const toOnly = await listPage(user, { to: at('09:00') });
    assert.deepEqual(titles(toOnly), ['encloses', 'ends at from']);
  });

  test('projectId lists only the entries of that project', async () => {
    const user = api.user();
    const a = await createProject(user, 'A');
    const b = await createProject(user, 'B');
    await createEntry(user, { title: 'a1', startsAt: '2026-03-01T10:00:00Z', projectId: a.id });
    await createEntry(user, { title: 'b1', startsAt: '2026-03-01T11:00:00Z', projectId: b.id });
    await createEntry(user, { title: 'none', startsAt: '2026-03-01T12:00:00Z' });
    await createEntry(user, { title: 'a2', startsAt: '2026-03-01T13:00:00Z', projectId: a.id });

    const page = await listPage(user, { projectId: a.id });
    assert.deepEqual(titles(page), ['a1', 'a2']);
    assert.ok(page.items.every((e) => e.projectId === a.id));
    assert.deepEqual(titles(await listPage(user, { projectId: randomUUID() })), []);
  });

  test('q matches title, description and location, case-insensitively', async () => {
    const user = api.user();
    await createEntry(user, { title: 'Quarterly REVIEW', startsAt: '2026-03-01T09:00:00Z' });
    await createEntry(user, { title: 'Lunch', description: 'then a review of the roadmap', startsAt: '2026-03-01T12:00:00Z' });
    await createEntry(user, { title: 'Offsite', location: 'Review Hall', startsAt: '2026-03-01T15:00:00Z' });
    await createEntry(user, { title: 'Standup', description: 'daily', location: 'Room 1', startsAt: '2026-03-01T16:00:00Z' });

    assert.deepEqual(titles(await listPage(user, { q: 'review' })), ['Quarterly REVIEW', 'Lunch', 'Offsite']);
    assert.deepEqual(titles(await listPage(user, { q: 'ROOM 1' })), ['Standup']);
    assert.deepEqual(titles(await listPage(user, { q: 'nothing like this' })), []);
  });

  test('pages with limit: no overlap, everything covered, then nextCursor null', async () => {
    const user = api.user();
    const created: CalendarEntry[] = [];
    for (let i = 5; i >= 1; i--) created.push(await createEntry(user, { title: `e${i}`, startsAt: `2026-06-0${i}T10:00:00Z` }));

    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let round = 0; round < 10; round++) {
      const page: PageOf<CalendarEntry> = await listPage(user, cursor ? { limit: 2, cursor } : { limit: 2 });
      sizes.push(page.items.length);
      seen.push(...titles(page));
      cursor = page.nextCursor;
      if (cursor === null) break;
      assert.equal(typeof cursor, 'string');
    }
    assert.deepEqual(sizes, [2, 2, 1]);
    assert.deepEqual(seen, ['e1', 'e2', 'e3', 'e4', 'e5']);
    assert.equal(new Set(seen).size, created.length);
  });

  test('a cursor from another listing, or not from this API, is refused with 400', async () => {
    const user = api.user();
    for (let i = 1; i <= 3; i++) {
      await createEntry(user, { title: `e${i}`, startsAt: `2026-06-0${i}T10:00:00Z` });
      const note = await user.call('POST', '/api/v1/notes', { title: `n${i}` });
      assert.equal(note.status, 201, show(note));
    }
    const notes = await user.call<PageOf<unknown>>('GET', '/api/v1/notes?limit=1');
    assert.equal(notes.status, 200, show(notes));
    const keyset = notes.body.nextCursor;
    assert.equal(typeof keyset, 'string');

    const refused = await user.call('GET', `${ENTRIES}?limit=1&cursor=${encodeURIComponent(keyset!)}`);
    assertValidationError(refused, 'cursor');
    assertValidationError(await user.call('GET', `${ENTRIES}?cursor=not-a-cursor`), 'cursor');
  });
});

describe('GET, PATCH, DELETE /calendar-entries/:id', () => {
  test('an unknown id is 404 not_found', async () => {
    const user = api.user();
    const id = randomUUID();
    for (const [method, body] of [['GET'], ['PATCH', { title: 'x' }], ['DELETE']] as const) {
      const res = await user.call(method, `${ENTRIES}/${id}`, body);
      assert.equal(res.status, 404, `${method} ${show(res)}`);
      assert.equal(res.body.error, 'not_found');
    }
  });

  test('patch changes the named fields only', async () => {
    const user = api.user();
    const e = await createEntry(user, { title: 'Call', startsAt: '2026-03-12T10:00:00Z', location: 'Phone', description: 'agenda' });
    const res = await user.call<CalendarEntry>('PATCH', `${ENTRIES}/${e.id}`, { title: 'Video call', location: 'Zoom' });
    assert.equal(res.status, 200, show(res));
    assert.equal(res.body.title, 'Video call');
    assert.equal(res.body.location, 'Zoom');
    assert.equal(res.body.description, 'agenda');
    assert.equal(res.body.startsAt, e.startsAt);
    assert.equal(res.body.endsAt, e.endsAt);
    assert.deepEqual((await user.call('GET', `${ENTRIES}/${e.id}`)).body, res.body);
  });

  test('location null means no location, on create and on patch', async () => {
    const user = api.user();
    const created = await createEntry(user, { title: 'Call', startsAt: '2026-03-12T10:00:00Z', location: null });
    assert.equal(created.location, null);
    const e = await createEntry(user, { title: 'Call', startsAt: '2026-03-12T10:00:00Z', location: 'Phone' });
    const res = await user.call<CalendarEntry>('PATCH', `${ENTRIES}/${e.id}`, { location: null });
    assert.equal(res.status, 200, show(res));
    assert.equal(res.body.location, null);
    assert.equal((await user.call<CalendarEntry>('GET', `${ENTRIES}/${e.id}`)).body.location, null);
  });

  test('moving startsAt alone keeps the duration', async () => {
    const user = api.user();
    const e = await createEntry(user, { title: 'Review', startsAt: '2026-03-12T10:00:00Z', endsAt: '2026-03-12T11:30:00Z' });
    const later = await user.call<CalendarEntry>('PATCH', `${ENTRIES}/${e.id}`, { startsAt: '2026-03-14T15:45:00Z' });
    assert.equal(later.status, 200, show(later));
    assert.equal(later.body.startsAt, '2026-03-14T15:45:00.000Z');
    assert.equal(later.body.endsAt, '2026-03-14T17:15:00.000Z');

    // Moving it earlier than its old start works the same way.
    const earlier = await user.call<CalendarEntry>('PATCH', `${ENTRIES}/${e.id}`, { startsAt: '2026-03-01T08:00:00Z' });
    assert.equal(earlier.status, 200, show(earlier));
    assert.equal(earlier.body.endsAt, '2026-03-01T09:30:00.000Z');
    assert.equal((await user.call<CalendarEntry>('GET', `${ENTRIES}/${e.id}`)).body.endsAt, '2026-03-01T09:30:00.000Z');
  });

  test('patching both ends sets them as given', async () => {
    const user = api.user();
    const e = await createEntry(user, { title: 'Review', startsAt: '2026-03-12T10:00:00Z' });
    const res = await user.call<CalendarEntry>('PATCH', `${ENTRIES}/${e.id}`, { startsAt: '2026-03-12T12:00:00Z', endsAt: '2026-03-12T12:15:00Z' });
    assert.equal(res.status, 200, show(res));
    assert.equal(new Date(res.body.endsAt).getTime() - new Date(res.body.startsAt).getTime(), 15 * 60_000);
  });

  test('an end before the start is refused with 400 and the entry is unchanged', async () => {
    const user = api.user();
    const e = await createEntry(user, { title: 'Review', startsAt: '2026-03-12T10:00:00Z' });
    assertValidationError(await user.call('PATCH', `${ENTRIES}/${e.id}`, { endsAt: '2026-03-12T09:00:00Z' }), 'endsAt');
    assertValidationError(await user.call('PATCH', `${ENTRIES}/${e.id}`, { startsAt: '2026-03-13T10:00:00Z', endsAt: '2026-03-13T09:00:00Z' }), 'endsAt');
    const got = await user.call<CalendarEntry>('GET', `${ENTRIES}/${e.id}`);
    assert.deepEqual(got.body, e);
  });

  test('an empty patch is refused with 400', async () => {
    const user = api.user();
    const e = await createEntry(user, { title: 'Review', startsAt: '2026-03-12T10:00:00Z' });
    const res = await user.call('PATCH', `${ENTRIES}/${e.id}`, {});
    assert.equal(res.status, 400, show(res));
    assert.equal(res.body.error, 'validation_failed');
  });

  test('delete answers 204, then the entry is gone (404)', async () => {
    const user = api.user();
    const keep = await createEntry(user, { title: 'keep', startsAt: '2026-03-12T08:00:00Z' });
    const e = await createEntry(user, { title: 'drop', startsAt: '2026-03-12T10:00:00Z' });
    const del = await user.call('DELETE', `${ENTRIES}/${e.id}`);
    assert.equal(del.status, 204, show(del));
    assert.equal(del.body, undefined);

    const got = await user.call('GET', `${ENTRIES}/${e.id}`);
    assert.equal(got.status, 404, show(got));
    assert.equal(got.body.error, 'not_found');
    const again = await user.call('DELETE', `${ENTRIES}/${e.id}`);
    assert.equal(again.status, 404, show(again));
    assert.deepEqual(
      (await listPage(user)).items.map((x) => x.id),
      [keep.id],
    );
  });

  test("another user's entry does not exist: 404 for get, patch and delete, and it is unchanged", async () => {
    const owner = api.user();
    const other = api.user();
    const e = await createEntry(owner, { title: 'Private', startsAt: '2026-03-12T10:00:00Z' });
    for (const [method, body] of [['GET'], ['PATCH', { title: 'taken' }], ['DELETE']] as const) {
      const res = await other.call(method, `${ENTRIES}/${e.id}`, body);
      assert.equal(res.status, 404, `${method} ${show(res)}`);
      assert.equal(res.body.error, 'not_found');
    }
    assert.deepEqual((await listPage(other)).items, []);
    assert.deepEqual((await owner.call('GET', `${ENTRIES}/${e.id}`)).body, e);
  });
});

describe('project links', () => {
  test('a project of another user is 404 and nothing is created or linked', async () => {
    const owner = api.user();
    const other = api.user();
    const foreign = await createProject(owner, 'Secret');

    const res = await other.call('POST', ENTRIES, { title: 'sneaky', startsAt: '2026-03-12T10:00:00Z', projectId: foreign.id });
    assert.equal(res.status, 404, show(res));
    assert.equal(res.body.error, 'not_found');
    assert.deepEqual((await listPage(other)).items, []);
    assert.deepEqual((await listPage(owner)).items, []);

    const mine = await createEntry(other, { title: 'mine', startsAt: '2026-03-12T10:00:00Z' });
    const patch = await other.call('PATCH', `${ENTRIES}/${mine.id}`, { projectId: foreign.id });
    assert.equal(patch.status, 404, show(patch));
    assert.equal(patch.body.error, 'not_found');
    assert.equal((await other.call<CalendarEntry>('GET', `${ENTRIES}/${mine.id}`)).body.projectId, null);
  });

  test('linking to and unlinking from an own project', async () => {
    const user = api.user();
    const p = await createProject(user);
    const e = await createEntry(user, { title: 'Kickoff', startsAt: '2026-03-12T10:00:00Z', projectId: p.id });
    assert.equal(e.projectId, p.id);
    const unlinked = await user.call<CalendarEntry>('PATCH', `${ENTRIES}/${e.id}`, { projectId: null });
    assert.equal(unlinked.status, 200, show(unlinked));
    assert.equal(unlinked.body.projectId, null);
  });

  test('deleting the project keeps the entry, with projectId null', async () => {
    const user = api.user();
    const p = await createProject(user);
    const e = await createEntry(user, { title: 'Kickoff', startsAt: '2026-03-12T10:00:00Z', projectId: p.id });
    const del = await user.call('DELETE', `/api/v1/projects/${p.id}`);
    assert.equal(del.status, 204, show(del));

    const got = await user.call<CalendarEntry>('GET', `${ENTRIES}/${e.id}`);
    assert.equal(got.status, 200, show(got));
    assert.equal(got.body.projectId, null);
    assert.equal(got.body.title, 'Kickoff');
    assert.equal(got.body.startsAt, e.startsAt);
    assert.deepEqual((await listPage(user, { projectId: p.id })).items, []);
  });
});
