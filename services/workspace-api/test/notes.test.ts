// /api/v1/notes over real HTTP: create, list (newest first, keyset pages that stay stable while
// notes are added), filters, read, update, delete, tag validation, project links and isolation
// between users. Runs on PGlite (no DATABASE_URL) and on Postgres.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Note, PageOf } from '@flowdesk/contracts';
import { createProject, created, show, startTestApi, type ApiResponse, type TestApi, type TestUser } from './helpers/app.ts';

const NOTES = '/api/v1/notes';

let api: TestApi;

before(async () => {
  api = await startTestApi();
});

after(async () => {
  await api?.close();
});

const createNote = (user: TestUser, body: Record<string, unknown>) => created<Note>(user, NOTES, body);

/** Notes created a few milliseconds apart, so "newest first" has one right answer. */
async function createNotes(user: TestUser, bodies: Record<string, unknown>[]): Promise<Note[]> {
  const out: Note[] = [];
  for (const b of bodies) {
    out.push(await createNote(user, b));
    await sleep(5);
  }
  return out;
}

async function listPage(user: TestUser, query: Record<string, string | number | boolean> = {}): Promise<PageOf<Note>> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await user.call<PageOf<Note>>('GET', qs ? `${NOTES}?${qs}` : NOTES);
  assert.equal(res.status, 200, show(res));
  return res.body;
}

const titles = (page: PageOf<Note>) => page.items.map((n) => n.title);

function assertValidationError(res: ApiResponse, field: string) {
  assert.equal(res.status, 400, show(res));
  assert.equal(res.body.error, 'validation_failed');
  assert.match(res.body.message, new RegExp(field), `message should name ${field}: ${res.body.message}`);
}

describe('create, get, list', () => {
  test('creates a note (201) with defaults and reads it back', async () => {
    const user = api.user();
    const res = await user.call<Note>('POST', NOTES, { title: 'Groceries' });
    assert.equal(res.status, 201, show(res));
    const n = res.body;
    assert.match(n.id, /^[0-9a-f-]{36}$/);
    assert.equal(n.title, 'Groceries');
    assert.equal(n.content, '');
    assert.deepEqual(n.tags, []);
    assert.equal(n.pinned, false);
    assert.equal(n.projectId, null);
    assert.ok(!Number.isNaN(Date.parse(n.createdAt)));

    const got = await user.call<Note>('GET', `${NOTES}/${n.id}`);
    assert.equal(got.status, 200, show(got));
    assert.deepEqual(got.body, n);
  });

  test('keeps content, tags, pinned and project as given', async () => {
    const user = api.user();
    const p = await createProject(user);
    const n = await createNote(user, { title: 'Plan', content: '# Steps\n1. a\n2. b', tags: ['plan', 'q2'], pinned: true, projectId: p.id });
    assert.equal(n.content, '# Steps\n1. a\n2. b');
    assert.deepEqual(n.tags, ['plan', 'q2']);
    assert.equal(n.pinned, true);
    assert.equal(n.projectId, p.id);
    assert.deepEqual((await user.call('GET', `${NOTES}/${n.id}`)).body, n);
  });

  test('lists notes newest first', async () => {
    const user = api.user();
    await createNotes(user, [{ title: 'one' }, { title: 'two' }, { title: 'three' }]);
    const page = await listPage(user);
    assert.deepEqual(titles(page), ['three', 'two', 'one']);
    assert.equal(page.nextCursor, null);
  });

  test('a missing title or an unknown field is refused, naming it, and nothing is created', async () => {
    const user = api.user();
    assertValidationError(await user.call('POST', NOTES, { content: 'no title' }), 'title');
    assertValidationError(await user.call('POST', NOTES, { title: '' }), 'title');
    assertValidationError(await user.call('POST', NOTES, { title: 'x', color: 'red' }), 'color');
    assert.deepEqual((await listPage(user)).items, []);
  });

  test('an unknown id is 404 not_found for get, patch and delete', async () => {
    const user = api.user();
    const id = randomUUID();
    for (const [method, body] of [['GET'], ['PATCH', { title: 'x' }], ['DELETE']] as const) {
      const res = await user.call(method, `${NOTES}/${id}`, body);
      assert.equal(res.status, 404, `${method} ${show(res)}`);
      assert.equal(res.body.error, 'not_found');
    }
  });
});

describe('PATCH and DELETE', () => {
  test('patch changes the named fields only, and the change persists', async () => {
    const user = api.user();
    const n = await createNote(user, { title: 'Draft', content: 'first version', tags: ['draft'] });
    await sleep(5);
    const res = await user.call<Note>('PATCH', `${NOTES}/${n.id}`, { content: 'second version', pinned: true, tags: ['final', 'ready'] });
    assert.equal(res.status, 200, show(res));
    assert.equal(res.body.title, 'Draft');
    assert.equal(res.body.content, 'second version');
    assert.equal(res.body.pinned, true);
    assert.deepEqual(res.body.tags, ['final', 'ready']);
    assert.equal(res.body.createdAt, n.createdAt);
    assert.ok(Date.parse(res.body.updatedAt) > Date.parse(n.updatedAt), 'updatedAt moves on');
    assert.deepEqual((await user.call('GET', `${NOTES}/${n.id}`)).body, res.body);

    const cleared = await user.call<Note>('PATCH', `${NOTES}/${n.id}`, { tags: [] });
    assert.equal(cleared.status, 200, show(cleared));
    assert.deepEqual(cleared.body.tags, []);
  });

  test('an empty patch or an unknown field is refused and the note is unchanged', async () => {
    const user = api.user();
    const n = await createNote(user, { title: 'Stable' });
    const empty = await user.call('PATCH', `${NOTES}/${n.id}`, {});
    assert.equal(empty.status, 400, show(empty));
    assert.equal(empty.body.error, 'validation_failed');
    assertValidationError(await user.call('PATCH', `${NOTES}/${n.id}`, { title: 'x', archived: true }), 'archived');
    assert.deepEqual((await user.call('GET', `${NOTES}/${n.id}`)).body, n);
  });

  test('delete answers 204, then the note is gone (404)', async () => {
    const user = api.user();
    const [keep, drop] = await createNotes(user, [{ title: 'keep' }, { title: 'drop' }]);
    const del = await user.call('DELETE', `${NOTES}/${drop!.id}`);
    assert.equal(del.status, 204, show(del));
    assert.equal(del.body, undefined);
    const got = await user.call('GET', `${NOTES}/${drop!.id}`);
    assert.equal(got.status, 404, show(got));
    assert.equal(got.body.error, 'not_found');
    assert.equal((await user.call('DELETE', `${NOTES}/${drop!.id}`)).status, 404);
    assert.deepEqual(
      (await listPage(user)).items.map((n) => n.id),
      [keep!.id],
    );
  });
});

describe('filters', () => {
  test('tag lists only notes carrying that tag', async () => {
    const user = api.user();
    await createNotes(user, [
      { title: 'a', tags: ['work', 'urgent'] },
      { title: 'b', tags: ['home'] },
      { title: 'c', tags: ['work'] },
      { title: 'd' },
      { title: 'e', tags: ['workshop'] },
    ]);
    assert.deepEqual(titles(await listPage(user, { tag: 'work' })), ['c', 'a']);
    assert.deepEqual(titles(await listPage(user, { tag: 'urgent' })), ['a']);
    assert.deepEqual(titles(await listPage(user, { tag: 'missing' })), []);
  });

  test('pinned=true and pinned=false split the notes', async () => {
    const user = api.user();
    await createNotes(user, [{ title: 'p1', pinned: true }, { title: 'u1' }, { title: 'p2', pinned: true }, { title: 'u2', pinned: false }]);
    assert.deepEqual(titles(await listPage(user, { pinned: true })), ['p2', 'p1']);
    assert.deepEqual(titles(await listPage(user, { pinned: false })), ['u2', 'u1']);
  });

  test('projectId lists only the notes of that project', async () => {
    const user = api.user();
    const a = await createProject(user, 'A');
    const b = await createProject(user, 'B');
    await createNotes(user, [{ title: 'a1', projectId: a.id }, { title: 'b1', projectId: b.id }, { title: 'loose' }, { title: 'a2', projectId: a.id }]);
    assert.deepEqual(titles(await listPage(user, { projectId: a.id })), ['a2', 'a1']);
    assert.deepEqual(titles(await listPage(user, { projectId: b.id })), ['b1']);
    assert.deepEqual(titles(await listPage(user, { projectId: randomUUID() })), []);
  });

  test('q matches title and content, case-insensitively', async () => {
    const user = api.user();
    await createNotes(user, [
      { title: 'Kubernetes upgrade', content: 'plan the rollout' },
      { title: 'Standup', content: 'Talked about KUBERNETES costs' },
      { title: 'Recipes', content: 'pasta' },
    ]);
    assert.deepEqual(titles(await listPage(user, { q: 'kubernetes' })), ['Standup', 'Kubernetes upgrade']);
    assert.deepEqual(titles(await listPage(user, { q: 'RollOut' })), ['Kubernetes upgrade']);
    assert.deepEqual(titles(await listPage(user, { q: 'nothing here' })), []);
  });

  test('q matches % and _ literally, not as wildcards', async () => {
    const user = api.user();
    await createNotes(user, [{ title: 'snake_case names' }, { title: 'snakeXcase' }, { title: '100% done' }, { title: '1000 things' }]);
    assert.deepEqual(titles(await listPage(user, { q: '%' })), ['100% done']);
    assert.deepEqual(titles(await listPage(user, { q: '00%' })), ['100% done']);
    assert.deepEqual(titles(await listPage(user, { q: '_' })), ['snake_case names']);
    assert.deepEqual(titles(await listPage(user, { q: 'e_c' })), ['snake_case names']);
  });

  test('filters combine (tag and pinned and q)', async () => {
    const user = api.user();
    await createNotes(user, [
      { title: 'Alpha spec', tags: ['spec'], pinned: true },
      { title: 'Beta spec', tags: ['spec'] },
      { title: 'Alpha notes', tags: ['misc'], pinned: true },
    ]);
    assert.deepEqual(titles(await listPage(user, { tag: 'spec', pinned: true })), ['Alpha spec']);
    assert.deepEqual(titles(await listPage(user, { tag: 'spec', q: 'beta' })), ['Beta spec']);
  });
});

describe('keyset pagination', () => {
  test('limit=2 over 5: newest first, no overlap, all covered, then nextCursor null', async () => {
    const user = api.user();
    const notes = await createNotes(
      user,
      [1, 2, 3, 4, 5].map((i) => ({ title: `n${i}` })),
    );

    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let round = 0; round < 10; round++) {
      const page: PageOf<Note> = await listPage(user, cursor ? { limit: 2, cursor } : { limit: 2 });
      sizes.push(page.items.length);
      seen.push(...titles(page));
      cursor = page.nextCursor;
      if (cursor === null) break;
    }
    assert.deepEqual(sizes, [2, 2, 1]);
    assert.deepEqual(seen, ['n5', 'n4', 'n3', 'n2', 'n1']);
    assert.equal(new Set(seen).size, notes.length);
  });

  test('stays stable when a note is created between page fetches', async () => {
    const user = api.user();
    await createNotes(
      user,
      [1, 2, 3, 4, 5].map((i) => ({ title: `n${i}` })),
    );

    const first = await listPage(user, { limit: 2 });
    assert.deepEqual(titles(first), ['n5', 'n4']);
    assert.ok(first.nextCursor);

    await createNote(user, { title: 'newcomer' });

    const second = await listPage(user, { limit: 2, cursor: first.nextCursor });
    assert.ok(second.nextCursor);
    const third = await listPage(user, { limit: 2, cursor: second.nextCursor });
    assert.equal(third.nextCursor, null);

    const rest = [...titles(second), ...titles(third)];
    assert.deepEqual(rest, ['n3', 'n2', 'n1'], 'no duplicates, no skips');

    // A fresh listing starts with the new note.
    assert.deepEqual(titles(await listPage(user, { limit: 2 })), ['newcomer', 'n5']);
  });

  test('a cursor from an offset listing, or not from this API, is refused with 400', async () => {
    const user = api.user();
    await createNotes(user, [{ title: 'n1' }, { title: 'n2' }]);
    for (let i = 1; i <= 2; i++) {
      const e = await user.call('POST', '/api/v1/calendar-entries', { title: `e${i}`, startsAt: `2026-03-0${i}T10:00:00Z` });
      assert.equal(e.status, 201, show(e));
    }
    const calendar = await user.call<PageOf<unknown>>('GET', '/api/v1/calendar-entries?limit=1');
    const offsetCursor = calendar.body.nextCursor;
    assert.equal(typeof offsetCursor, 'string');
    assertValidationError(await user.call('GET', `${NOTES}?limit=1&cursor=${encodeURIComponent(offsetCursor!)}`), 'cursor');
    assertValidationError(await user.call('GET', `${NOTES}?cursor=garbage`), 'cursor');
  });
});

describe('tags validation', () => {
  test('a tag with a space or a comma is refused', async () => {
    const user = api.user();
    assertValidationError(await user.call('POST', NOTES, { title: 'x', tags: ['two words'] }), 'tags');
    assertValidationError(await user.call('POST', NOTES, { title: 'x', tags: ['a,b'] }), 'tags');
    assertValidationError(await user.call('POST', NOTES, { title: 'x', tags: [''] }), 'tags');
    assert.deepEqual((await listPage(user)).items, []);
  });

  test('duplicate tags are refused', async () => {
    const user = api.user();
    assertValidationError(await user.call('POST', NOTES, { title: 'x', tags: ['dup', 'other', 'dup'] }), 'tags');
    assert.deepEqual((await listPage(user)).items, []);
  });

  test('at most 20 tags', async () => {
    const user = api.user();
    const tags = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);
    assertValidationError(await user.call('POST', NOTES, { title: 'x', tags: tags(21) }), 'tags');
    assert.deepEqual((await listPage(user)).items, []);
    const ok = await createNote(user, { title: 'x', tags: tags(20) });
    assert.equal(ok.tags.length, 20);
  });

  test('bad tags on patch are refused and the note keeps its tags', async () => {
    const user = api.user();
    const n = await createNote(user, { title: 'x', tags: ['keep'] });
    assertValidationError(await user.call('PATCH', `${NOTES}/${n.id}`, { tags: ['has space'] }), 'tags');
    assertValidationError(await user.call('PATCH', `${NOTES}/${n.id}`, { tags: ['a', 'a'] }), 'tags');
    assert.deepEqual((await user.call<Note>('GET', `${NOTES}/${n.id}`)).body.tags, ['keep']);
  });
});

describe('projects and other users', () => {
  test('deleting the project unlinks its notes (projectId null) and keeps them', async () => {
    const user = api.user();
    const p = await createProject(user);
    const other = await createProject(user, 'Other');
    const [linked, elsewhere] = await createNotes(user, [
      { title: 'linked', projectId: p.id },
      { title: 'elsewhere', projectId: other.id },
    ]);
    const del = await user.call('DELETE', `/api/v1/projects/${p.id}`);
    assert.equal(del.status, 204, show(del));

    const got = await user.call<Note>('GET', `${NOTES}/${linked!.id}`);
    assert.equal(got.status, 200, show(got));
    assert.equal(got.body.projectId, null);
    assert.equal(got.body.title, 'linked');
    assert.equal((await user.call<Note>('GET', `${NOTES}/${elsewhere!.id}`)).body.projectId, other.id);
    assert.deepEqual(titles(await listPage(user)), ['elsewhere', 'linked']);
  });

  test('a project of another user is 404 and nothing is created or linked', async () => {
    const owner = api.user();
    const other = api.user();
    const foreign = await createProject(owner, 'Secret');

    const res = await other.call('POST', NOTES, { title: 'sneaky', projectId: foreign.id });
    assert.equal(res.status, 404, show(res));
    assert.equal(res.body.error, 'not_found');
    assert.deepEqual((await listPage(other)).items, []);

    const mine = await createNote(other, { title: 'mine' });
    const patch = await other.call('PATCH', `${NOTES}/${mine.id}`, { projectId: foreign.id });
    assert.equal(patch.status, 404, show(patch));
    assert.deepEqual((await other.call('GET', `${NOTES}/${mine.id}`)).body, mine);
  });

  test("another user's note id is 404 for get, patch and delete, and the note is unchanged", async () => {
    const owner = api.user();
    const stranger = api.user();
    const n = await createNote(owner, { title: 'Diary', content: 'private', tags: ['secret'] });

    const get = await stranger.call('GET', `${NOTES}/${n.id}`);
    assert.equal(get.status, 404, show(get));
    assert.equal(get.body.error, 'not_found');
    const patch = await stranger.call('PATCH', `${NOTES}/${n.id}`, { content: 'overwritten', pinned: true });
    assert.equal(patch.status, 404, show(patch));
    assert.equal(patch.body.error, 'not_found');
    const del = await stranger.call('DELETE', `${NOTES}/${n.id}`);
    assert.equal(del.status, 404, show(del));
    assert.equal(del.body.error, 'not_found');

    assert.deepEqual((await owner.call('GET', `${NOTES}/${n.id}`)).body, n);
    assert.deepEqual((await listPage(stranger)).items, []);
    assert.deepEqual((await listPage(stranger, { tag: 'secret' })).items, []);
    assert.deepEqual((await listPage(stranger, { q: 'private' })).items, []);
  });
});
