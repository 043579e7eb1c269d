// Cross-cutting reads over real HTTP: GET /search, GET /tags and GET /overview — what they find and
// count, in what order, that another user's rows never show, and which scopes may call them.
// Runs on PGlite (no DATABASE_URL) and on Postgres.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Overview, SearchHit, SearchResult, TagCount } from '@flowdesk/contracts';
import { show, startTestApi, type TestApi, type TestUser } from './helpers/app.ts';

const V1 = '/api/v1';

let api: TestApi;

before(async () => {
  api = await startTestApi();
});

after(async () => {
  await api?.close();
});

/** Creates a row and returns its id; a few ms apart so "most recently changed" has one answer. */
async function post(user: TestUser, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await user.call<{ id: string }>('POST', `${V1}${path}`, body);
  assert.equal(res.status, 201, `POST ${path} ${show(res)}`);
  await sleep(5);
  return res.body.id;
}

async function search(user: TestUser, query: string): Promise<SearchHit[]> {
  const res = await user.call<SearchResult>('GET', `${V1}/search?${query}`);
  assert.equal(res.status, 200, show(res));
  return res.body.items;
}

const key = (h: { type: string; id: string }) => `${h.type}:${h.id}`;
const LONG_PREFIX = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(6);

describe('GET /search', () => {
  let alice: TestUser;
  let bob: TestUser;
  /** alice's matching rows, in creation order: title matches first, then body matches. */
  const titleHits: { type: string; id: string }[] = [];
  const bodyHits: { type: string; id: string }[] = [];

  before(async () => {
    alice = api.user();
    bob = api.user();

    // Rows of another user that match: they must never show up for alice.
    await post(bob, '/projects', { name: 'Orion (bob)' });
    await post(bob, '/tasks', { title: 'Orion task of bob' });
    await post(bob, '/notes', { title: 'Orion note of bob', content: 'orion' });
    await post(bob, '/calendar-entries', { title: 'Orion meeting of bob', startsAt: '2026-03-12T10:00:00Z' });
    await post(bob, '/workflows', { name: 'Orion flow of bob', triggerType: 'manual' });

    // alice's rows matching "orion" in the title (in any case)...
    titleHits.push({ type: 'project', id: await post(alice, '/projects', { name: 'Orion launch', description: 'the big one' }) });
    titleHits.push({ type: 'task', id: await post(alice, '/tasks', { title: 'ORION budget' }) });
    titleHits.push({ type: 'note', id: await post(alice, '/notes', { title: 'Retro: orion', content: 'what went well' }) });
    titleHits.push({ type: 'calendar_entry', id: await post(alice, '/calendar-entries', { title: 'Orion sync', startsAt: '2026-03-12T10:00:00Z' }) });
    titleHits.push({ type: 'workflow', id: await post(alice, '/workflows', { name: 'oRiOn digest', triggerType: 'manual' }) });
    // ...and, changed later (so recency alone would put them first), only in the body.
    bodyHits.push({ type: 'project', id: await post(alice, '/projects', { name: 'Misc', description: 'prep for Orion' }) });
    bodyHits.push({ type: 'task', id: await post(alice, '/tasks', { title: 'Call vendor', notes: 'ask about orion pricing' }) });
    bodyHits.push({
      type: 'note',
      id: await post(alice, '/notes', { title: 'Weekly', content: `${LONG_PREFIX}then the ORION review, and more text after it. ${LONG_PREFIX}` }),
    });
    bodyHits.push({
      type: 'calendar_entry',
      id: await post(alice, '/calendar-entries', { title: 'Lunch', description: 'talk Orion', startsAt: '2026-03-13T12:00:00Z' }),
    });
    bodyHits.push({ type: 'workflow', id: await post(alice, '/workflows', { name: 'Mailer', description: 'sends the orion digest', triggerType: 'manual' }) });

    // alice's rows that do not match.
    await post(alice, '/projects', { name: 'Garden' });
    await post(alice, '/tasks', { title: 'Water plants', notes: 'twice a week' });
    await post(alice, '/notes', { title: 'Recipes', content: 'pasta' });
    await post(alice, '/calendar-entries', { title: 'Dentist', startsAt: '2026-03-14T09:00:00Z' });
    await post(alice, '/workflows', { name: 'Backup', triggerType: 'manual' });
  });

  test('finds matches in projects, tasks, notes, calendar entries and workflows, case-insensitively', async () => {
    const expected = [...titleHits, ...bodyHits].map(key).sort();
    for (const q of ['orion', 'ORION', 'Orion']) {
      const hits = await search(alice, `q=${q}`);
      assert.deepEqual(hits.map(key).sort(), expected, `q=${q}`);
    }
    const types = new Set((await search(alice, 'q=orion')).map((h) => h.type));
    assert.deepEqual([...types].sort(), ['calendar_entry', 'note', 'project', 'task', 'workflow']);
  });

  test('title matches come before body matches, each most recently changed first', async () => {
    const hits = await search(alice, 'q=orion');
    assert.deepEqual(
      hits.map(key),
      [...titleHits]
        .reverse()
        .concat([...bodyHits].reverse())
        .map(key),
    );
  });

  test('every snippet contains the match, whether it was found in the title or the body', async () => {
    const hits = await search(alice, 'q=orion');
    assert.equal(hits.length, 10);
    for (const h of hits) {
      assert.match(h.snippet, /orion/i, JSON.stringify(h));
      assert.ok(!Number.isNaN(Date.parse(h.updatedAt)));
    }

    // A long body is cut to an excerpt around the match.
    const weekly = hits.find((h) => h.title === 'Weekly');
    assert.ok(weekly);
    assert.match(weekly.snippet, /ORION review/);
    assert.ok(weekly.snippet.length <= 122, `snippet is an excerpt, got ${weekly.snippet.length} chars`);
    assert.ok(weekly.snippet.startsWith('…') && weekly.snippet.endsWith('…'), weekly.snippet);
  });

  test('types narrows the kinds searched', async () => {
    const hits = await search(alice, 'q=orion&types=task&types=note');
    const expected = [...titleHits, ...bodyHits]
      .filter((h) => h.type === 'task' || h.type === 'note')
      .map(key)
      .sort();
    assert.deepEqual(hits.map(key).sort(), expected);

    const one = await search(alice, 'q=orion&types=calendar_entry');
    assert.deepEqual(
      one.map((h) => h.type),
      ['calendar_entry', 'calendar_entry'],
    );

    const bad = await alice.call('GET', `${V1}/search?q=orion&types=comment`);
    assert.equal(bad.status, 400, show(bad));
    assert.equal(bad.body.error, 'validation_failed');
  });

  test('limit caps the number of hits, keeping title matches first', async () => {
    const three = await search(alice, 'q=orion&limit=3');
    assert.equal(three.length, 3);
    const titleKeys = new Set(titleHits.map(key));
    assert.ok(
      three.every((h) => titleKeys.has(key(h))),
      JSON.stringify(three),
    );

    assert.equal((await search(alice, 'q=orion&limit=7')).length, 7);
    assert.equal((await search(alice, 'q=orion&limit=1')).length, 1);
  });

  test("another user's matching rows never appear", async () => {
    const aliceIds = new Set([...titleHits, ...bodyHits].map((h) => h.id));
    const hits = await search(bob, 'q=orion');
    assert.equal(hits.length, 5);
    assert.ok(
      hits.every((h) => !aliceIds.has(h.id) && /bob/.test(h.title)),
      JSON.stringify(hits),
    );
    assert.ok((await search(alice, 'q=bob')).length === 0);
    assert.deepEqual(await search(api.user(), 'q=orion'), []);
  });

  test('% and _ in q match literally, not as wildcards', async () => {
    const user = api.user();
    const literal = await post(user, '/notes', { title: 'Discount 50% off' });
    const underscore = await post(user, '/tasks', { title: 'rename user_id' });
    await post(user, '/notes', { title: 'Discount 500 off' });
    await post(user, '/tasks', { title: 'rename userXid' });
    assert.deepEqual(
      (await search(user, `q=${encodeURIComponent('%')}`)).map((h) => h.id),
      [literal],
    );
    assert.deepEqual(
      (await search(user, `q=${encodeURIComponent('50%')}`)).map((h) => h.id),
      [literal],
    );
    assert.deepEqual(
      (await search(user, 'q=r_i')).map((h) => h.id),
      [underscore],
    );
  });

  test('q missing or empty is refused with 400 naming q', async () => {
    for (const query of ['', 'q=', 'types=task']) {
      const res = await alice.call('GET', `${V1}/search${query ? `?${query}` : ''}`);
      assert.equal(res.status, 400, `${query}: ${show(res)}`);
      assert.equal(res.body.error, 'validation_failed');
      assert.match(res.body.message, /\bq\b/, res.body.message);
    }
  });

  test('a title match is not cut off by a more recent body match when the limit is small', async () => {
    const user = api.user();
    const titled = await post(user, '/tasks', { title: 'Nebula plan' });
    const body = await post(user, '/tasks', { title: 'Misc', notes: 'mentions nebula' });
    assert.deepEqual(
      (await search(user, 'q=nebula&types=task&limit=1')).map((h) => h.id),
      [titled],
    );
    assert.deepEqual(
      (await search(user, 'q=nebula&limit=1')).map((h) => h.id),
      [titled],
    );
    assert.deepEqual(
      (await search(user, 'q=nebula&limit=2')).map((h) => h.id),
      [titled, body],
    );
  });

  test('a calendar entry found by its location shows the match in its snippet', async () => {
    const user = api.user();
    await post(user, '/calendar-entries', { title: 'Offsite', description: 'Bring snacks', location: 'Quasar Hall', startsAt: '2026-03-12T10:00:00Z' });
    const hits = await search(user, 'q=quasar');
    assert.equal(hits.length, 1, JSON.stringify(hits));
    assert.match(hits[0]!.snippet, /Quasar/, JSON.stringify(hits[0]));
  });
});

describe('GET /tags', () => {
  test('counts each tag across tasks and notes, ordered by total then name', async () => {
    const alice = api.user();
    const bob = api.user();
    await post(bob, '/tasks', { title: 'b', tags: ['work', 'bobonly'] });
    await post(bob, '/notes', { title: 'b', tags: ['work', 'home'] });

    await post(alice, '/tasks', { title: 't1', tags: ['work', 'urgent'] });
    await post(alice, '/tasks', { title: 't2', tags: ['work'] });
    await post(alice, '/tasks', { title: 't3', tags: ['home'] });
    await post(alice, '/tasks', { title: 't4' });
    await post(alice, '/notes', { title: 'n1', tags: ['work'] });
    await post(alice, '/notes', { title: 'n2', tags: ['reading'] });
    await post(alice, '/notes', { title: 'n3', tags: ['urgent', 'home'] });
    const alphaNote = await post(alice, '/notes', { title: 'n4', tags: ['alpha'] });

    const res = await alice.call<{ items: TagCount[] }>('GET', `${V1}/tags`);
    assert.equal(res.status, 200, show(res));
    assert.deepEqual(res.body.items, [
      { tag: 'work', tasks: 2, notes: 1 },
      { tag: 'home', tasks: 1, notes: 1 },
      { tag: 'urgent', tasks: 1, notes: 1 },
      { tag: 'alpha', tasks: 0, notes: 1 },
      { tag: 'reading', tasks: 0, notes: 1 },
    ]);

    // Counts follow the data: a deleted note no longer counts.
    assert.equal((await alice.call('DELETE', `${V1}/notes/${alphaNote}`)).status, 204);
    const after = await alice.call<{ items: TagCount[] }>('GET', `${V1}/tags`);
    assert.deepEqual(
      after.body.items.map((t) => t.tag),
      ['work', 'home', 'urgent', 'reading'],
    );

    const bobs = await bob.call<{ items: TagCount[] }>('GET', `${V1}/tags`);
    assert.deepEqual(bobs.body.items, [
      { tag: 'work', tasks: 1, notes: 1 },
      { tag: 'bobonly', tasks: 1, notes: 0 },
      { tag: 'home', tasks: 0, notes: 1 },
    ]);
  });

  test('a user without tags gets an empty list', async () => {
    const res = await api.user().call('GET', `${V1}/tags`);
    assert.equal(res.status, 200, show(res));
    assert.deepEqual(res.body, { items: [] });
  });
});

describe('GET /overview', () => {
  const NOW = '2026-03-10T12:00:00.000Z';

  before(() => {
    api.setNow(new Date(NOW));
  });

  test('a fresh user gets all zeros', async () => {
    const res = await api.user().call<Overview>('GET', `${V1}/overview`);
    assert.equal(res.status, 200, show(res));
    assert.deepEqual(res.body, {
      projects: { active: 0, archived: 0 },
      tasks: { open: 0, done: 0, overdue: 0, dueToday: 0, dueThisWeek: 0 },
      notes: 0,
      calendar: { upcoming7Days: 0 },
      workflows: { total: 0, active: 0, runsLast24h: 0, failedLast24h: 0 },
      asOf: NOW,
    });
  });

  test("counts the user's projects, tasks, notes, calendar entries and workflows as of the clock", async () => {
    const alice = api.user();
    const bob = api.user();
    // Another user's rows of every kind, which must not be counted.
    await post(bob, '/projects', { name: 'b' });
    await post(bob, '/tasks', { title: 'b overdue', dueDate: '2026-03-01' });
    await post(bob, '/tasks', { title: 'b today', dueDate: '2026-03-10' });
    await post(bob, '/notes', { title: 'b' });
    await post(bob, '/calendar-entries', { title: 'b', startsAt: '2026-03-11T10:00:00Z' });
    await post(bob, '/workflows', { name: 'b', triggerType: 'manual', active: true });

    await post(alice, '/projects', { name: 'Active 1' });
    await post(alice, '/projects', { name: 'Active 2', status: 'active' });
    await post(alice, '/projects', { name: 'Old', status: 'archived' });

    const task = (title: string, extra: Record<string, unknown>) => post(alice, '/tasks', { title, ...extra });
    await task('overdue yesterday', { dueDate: '2026-03-09' });
    await task('overdue in progress', { dueDate: '2026-03-01', status: 'in_progress' });
    await task('done late', { dueDate: '2026-03-09', status: 'done' });
    await task('done today', { dueDate: '2026-03-10', status: 'done' });
    await task('cancelled', { dueDate: '2026-03-05', status: 'cancelled' });
    await task('due today', { dueDate: '2026-03-10' });
    await task('due in two days', { dueDate: '2026-03-12', status: 'in_progress' });
    await task('due in six days', { dueDate: '2026-03-16' });
    await task('due in seven days', { dueDate: '2026-03-17' });
    await task('no due date', {});

    await post(alice, '/notes', { title: 'n1' });
    await post(alice, '/notes', { title: 'n2' });
    await post(alice, '/notes', { title: 'n3', pinned: true });

    const entry = (title: string, startsAt: string, endsAt: string) => post(alice, '/calendar-entries', { title, startsAt, endsAt });
    await entry('this morning', '2026-03-10T08:00:00Z', '2026-03-10T09:00:00Z');
    await entry('ended exactly now', '2026-03-10T11:00:00Z', '2026-03-10T12:00:00Z');
    await entry('happening now', '2026-03-10T11:30:00Z', '2026-03-10T13:00:00Z');
    await entry('tomorrow', '2026-03-11T09:00:00Z', '2026-03-11T10:00:00Z');
    await entry('in six days', '2026-03-16T09:00:00Z', '2026-03-16T10:00:00Z');
    await entry('just inside 7 days', '2026-03-17T11:59:00Z', '2026-03-17T12:30:00Z');
    await entry('exactly 7 days out', '2026-03-17T12:00:00Z', '2026-03-17T13:00:00Z');
    await entry('next month', '2026-04-10T09:00:00Z', '2026-04-10T10:00:00Z');

    await post(alice, '/workflows', { name: 'on', triggerType: 'manual', active: true });
    await post(alice, '/workflows', { name: 'on too', triggerType: 'schedule', active: true, triggerConfig: { cron: '0 9 * * 1' } });
    await post(alice, '/workflows', { name: 'off', triggerType: 'manual' });

    const res = await alice.call<Overview>('GET', `${V1}/overview`);
    assert.equal(res.status, 200, show(res));
    assert.deepEqual(res.body, {
      projects: { active: 2, archived: 1 },
      // open: todo + in_progress (7); overdue: due before 2026-03-10 and open; this week: 2026-03-10..16.
      tasks: { open: 7, done: 2, overdue: 2, dueToday: 1, dueThisWeek: 3 },
      notes: 3,
      // Entries overlapping [now, now + 7 days): one still running, tomorrow, in six days, just inside.
      calendar: { upcoming7Days: 4 },
      workflows: { total: 3, active: 2, runsLast24h: 0, failedLast24h: 0 },
      asOf: NOW,
    });
  });

  test('"today" follows the clock', async () => {
    const user = api.user();
    await post(user, '/tasks', { title: 'due 10 March', dueDate: '2026-03-10' });
    api.setNow(new Date('2026-03-11T00:00:00Z'));
    try {
      const next = await user.call<Overview>('GET', `${V1}/overview`);
      assert.equal(next.status, 200, show(next));
      assert.deepEqual(next.body.tasks, { open: 1, done: 0, overdue: 1, dueToday: 0, dueThisWeek: 0 });
      assert.equal(next.body.asOf, '2026-03-11T00:00:00.000Z');
    } finally {
      api.setNow(new Date(NOW));
    }
    const back = await user.call<Overview>('GET', `${V1}/overview`);
    assert.deepEqual(back.body.tasks, { open: 1, done: 0, overdue: 0, dueToday: 1, dueThisWeek: 1 });
  });
});

describe('scopes', () => {
  const routes = [`${V1}/search?q=anything`, `${V1}/tags`, `${V1}/overview`];

  test('an mcp:read token may call search, tags and overview', async () => {
    const reader = api.user('mcp:read');
    for (const path of routes) {
      const res = await reader.call('GET', path);
      assert.equal(res.status, 200, `${path} ${show(res)}`);
    }
  });

  test('a token with no known scope gets 403 forbidden', async () => {
    for (const scope of ['profile email', 'mcp:admin']) {
      const stranger = api.user(scope);
      for (const path of routes) {
        const res = await stranger.call('GET', path);
        assert.equal(res.status, 403, `${scope} ${path} ${show(res)}`);
        assert.equal(res.body.error, 'forbidden');
        assert.equal(typeof res.body.message, 'string');
      }
    }
  });
});
