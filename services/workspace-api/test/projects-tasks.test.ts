import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApi, type TestApi, type TestUser } from './helpers/app.ts';

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(async () => {
  await api.close();
});

/** Follows nextCursor to the end; returns the pages' item ids in order. */
async function allPages(user: TestUser, path: string): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res: { status: number; body: any } = await user.call('GET', cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    pages.push(res.body.items.map((i: { id: string }) => i.id));
    cursor = res.body.nextCursor;
    assert.ok(pages.length < 50, 'pagination ends');
  } while (cursor);
  return pages;
}

describe('projects', () => {
  test('create, read with task counts, rename, archive, filter, delete', async () => {
    const u = api.user();
    const created = await u.call('POST', '/api/v1/projects', { name: 'Launch', description: 'Q3 launch', color: '#22aa88' });
    assert.equal(created.status, 201);
    assert.equal(created.body.name, 'Launch');
    assert.equal(created.body.status, 'active');
    assert.equal(created.body.color, '#22aa88');
    const id = created.body.id;

    await u.call('POST', '/api/v1/tasks', { title: 'a', projectId: id });
    await u.call('POST', '/api/v1/tasks', { title: 'b', projectId: id, status: 'in_progress' });
    await u.call('POST', '/api/v1/tasks', { title: 'c', projectId: id, status: 'done' });
    const got = await u.call('GET', `/api/v1/projects/${id}`);
    assert.deepEqual(got.body.taskCounts, { open: 2, done: 1, total: 3 });

    const renamed = await u.call('PATCH', `/api/v1/projects/${id}`, { name: 'Launch v2', status: 'archived' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Launch v2');
    assert.equal(renamed.body.status, 'archived');
    assert.ok(renamed.body.updatedAt >= created.body.updatedAt);

    await u.call('POST', '/api/v1/projects', { name: 'Other' });
    const archived = await u.call('GET', '/api/v1/projects?status=archived');
    assert.deepEqual(
      archived.body.items.map((p: { id: string }) => p.id),
      [id],
    );
    const searched = await u.call('GET', '/api/v1/projects?q=LAUNCH');
    assert.deepEqual(
      searched.body.items.map((p: { id: string }) => p.id),
      [id],
    );

    assert.equal((await u.call('DELETE', `/api/v1/projects/${id}`)).status, 204);
    assert.equal((await u.call('GET', `/api/v1/projects/${id}`)).status, 404);
    // A project's tasks go with it.
    assert.equal((await u.call('GET', '/api/v1/tasks')).body.items.length, 0);
    assert.equal((await u.call('DELETE', `/api/v1/projects/${id}`)).status, 404);
  });

  test('validation: empty name, bad colour, empty patch', async () => {
    const u = api.user();
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }, { name: 'x', color: 'red' }, { name: 'x', status: 'deleted' }]) {
      const res = await u.call('POST', '/api/v1/projects', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error, 'validation_failed');
    }
    const p = await u.call('POST', '/api/v1/projects', { name: 'x' });
    const empty = await u.call('PATCH', `/api/v1/projects/${p.body.id}`, {});
    assert.equal(empty.status, 400);
  });

  test('keyset pagination: pages do not overlap and cover every project, newest first', async () => {
    const u = api.user();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await u.call('POST', '/api/v1/projects', { name: `p${i}` })).body.id);
    const pages = await allPages(u, '/api/v1/projects?limit=3');
    assert.deepEqual(
      pages.map((p) => p.length),
      [3, 3, 1],
    );
    assert.deepEqual(pages.flat(), [...ids].reverse());
  });
});

describe('tasks', () => {
  test('create with every field, read back, and defaults', async () => {
    const u = api.user();
    const p = await u.call('POST', '/api/v1/projects', { name: 'Home' });
    const res = await u.call('POST', '/api/v1/tasks', {
      title: 'Fix the sink',
      projectId: p.body.id,
      dueDate: '2026-06-30',
      notes: 'Buy a washer first',
      priority: 'high',
      tags: ['home', 'urgent-ish'],
    });
    assert.equal(res.status, 201);
    const t = res.body;
    assert.equal(t.title, 'Fix the sink');
    assert.equal(t.projectId, p.body.id);
    assert.equal(t.dueDate, '2026-06-30');
    assert.equal(t.notes, 'Buy a washer first');
    assert.equal(t.status, 'todo');
    assert.equal(t.priority, 'high');
    assert.deepEqual(t.tags, ['home', 'urgent-ish']);
    assert.equal(t.completedAt, null);
    assert.deepEqual((await u.call('GET', `/api/v1/tasks/${t.id}`)).body, t);

    const bare = await u.call('POST', '/api/v1/tasks', { title: 'Inbox item' });
    assert.equal(bare.body.projectId, null);
    assert.equal(bare.body.priority, 'none');
    assert.deepEqual(bare.body.tags, []);
  });

  test('completing sets completedAt; reopening clears it; moving between projects', async () => {
    const u = api.user();
    const a = await u.call('POST', '/api/v1/projects', { name: 'A' });
    const b = await u.call('POST', '/api/v1/projects', { name: 'B' });
    const t = (await u.call('POST', '/api/v1/tasks', { title: 't', projectId: a.body.id })).body;
    api.setNow(new Date('2026-04-01T08:00:00Z'));
    const done = await u.call('PATCH', `/api/v1/tasks/${t.id}`, { status: 'done' });
    assert.equal(done.body.completedAt, '2026-04-01T08:00:00.000Z');
    api.setNow(new Date('2026-04-02T08:00:00Z'));
    const again = await u.call('PATCH', `/api/v1/tasks/${t.id}`, { status: 'done', title: 't2' });
    assert.equal(again.body.completedAt, '2026-04-01T08:00:00.000Z', 'completing twice keeps the first time');
    const reopened = await u.call('PATCH', `/api/v1/tasks/${t.id}`, { status: 'todo' });
    assert.equal(reopened.body.completedAt, null);
    const moved = await u.call('PATCH', `/api/v1/tasks/${t.id}`, { projectId: b.body.id });
    assert.equal(moved.body.projectId, b.body.id);
    const inbox = await u.call('PATCH', `/api/v1/tasks/${t.id}`, { projectId: null, dueDate: null });
    assert.equal(inbox.body.projectId, null);
    api.setNow(new Date());
  });

  test("a task cannot be put in another user's project: 404, nothing created or moved", async () => {
    const u = api.user();
    const other = api.user();
    const theirs = (await other.call('POST', '/api/v1/projects', { name: 'secret' })).body.id;
    const create = await u.call('POST', '/api/v1/tasks', { title: 'x', projectId: theirs });
    assert.equal(create.status, 404);
    assert.equal(create.body.error, 'not_found');
    assert.equal((await u.call('GET', '/api/v1/tasks')).body.items.length, 0);
    const mine = (await u.call('POST', '/api/v1/tasks', { title: 'mine' })).body;
    const move = await u.call('PATCH', `/api/v1/tasks/${mine.id}`, { projectId: theirs });
    assert.equal(move.status, 404);
    assert.equal((await u.call('GET', `/api/v1/tasks/${mine.id}`)).body.projectId, null);
    assert.deepEqual((await other.call('GET', `/api/v1/projects/${theirs}`)).body.taskCounts, { open: 0, done: 0, total: 0 });
  });

  test('filters: project, inbox, status, priority, tag, due window, overdue, text', async () => {
    const u = api.user();
    api.setNow(new Date('2026-05-10T12:00:00Z'));
    const p = (await u.call('POST', '/api/v1/projects', { name: 'P' })).body.id;
    const mk = async (title: string, extra: object = {}) => (await u.call('POST', '/api/v1/tasks', { title, ...extra })).body.id as string;
    const late = await mk('Late report', { projectId: p, dueDate: '2026-05-01', priority: 'urgent', tags: ['work'] });
    const today = await mk('Pay rent', { dueDate: '2026-05-10', priority: 'high', tags: ['home'] });
    const later = await mk('Plan trip', { dueDate: '2026-06-01', notes: 'Book the FLIGHTS', tags: ['home', 'travel'] });
    const doneLate = await mk('Old done', { dueDate: '2026-04-01', status: 'done' });
    const q = async (qs: string) => ((await u.call('GET', `/api/v1/tasks?${qs}`)).body.items as { id: string }[]).map((t) => t.id).sort();
    const sorted = (...ids: string[]) => ids.sort();
    assert.deepEqual(await q(`projectId=${p}`), [late]);
    assert.deepEqual(await q('inbox=true'), sorted(today, later, doneLate));
    assert.deepEqual(await q('status=done'), [doneLate]);
    assert.deepEqual(await q('status=todo&status=in_progress'), sorted(late, today, later));
    assert.deepEqual(await q('priority=urgent&priority=high'), sorted(late, today));
    assert.deepEqual(await q('tag=home'), sorted(today, later));
    assert.deepEqual(await q('dueAfter=2026-05-10&dueBefore=2026-05-31'), [today]);
    assert.deepEqual(await q('overdue=true'), [late], 'overdue: due before today and still open');
    assert.deepEqual(await q('q=flights'), [later], 'text search looks in notes, case-insensitively');
    const byDue = (await u.call('GET', '/api/v1/tasks?sort=due_asc')).body.items.map((t: { id: string }) => t.id);
    assert.deepEqual(byDue, [doneLate, late, today, later]);
    const byPriority = (await u.call('GET', '/api/v1/tasks?sort=priority_desc&limit=2')).body.items.map((t: { id: string }) => t.id);
    assert.deepEqual(byPriority, [late, today]);
    api.setNow(new Date());
  });

  test('pagination under every sort order covers all tasks exactly once', async () => {
    const u = api.user();
    const ids = new Set<string>();
    for (let i = 0; i < 9; i++) {
      ids.add(
        (await u.call('POST', '/api/v1/tasks', { title: `t${i}`, dueDate: `2026-07-0${(i % 3) + 1}`, priority: ['low', 'high', 'none'][i % 3] })).body.id,
      );
    }
    for (const sort of ['created_desc', 'due_asc', 'priority_desc', 'updated_desc']) {
      const pages = await allPages(u, `/api/v1/tasks?limit=4&sort=${sort}`);
      assert.deepEqual(
        pages.map((p) => p.length),
        [4, 4, 1],
        sort,
      );
      assert.deepEqual(new Set(pages.flat()), ids, sort);
    }
  });

  test('bulk update completes several tasks at once and reports ids it could not see', async () => {
    const u = api.user();
    const other = api.user();
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push((await u.call('POST', '/api/v1/tasks', { title: `t${i}` })).body.id);
    const theirs = (await other.call('POST', '/api/v1/tasks', { title: 'theirs' })).body.id;
    const res = await u.call('POST', '/api/v1/tasks/bulk-update', { ids: [...mine, theirs], set: { status: 'done' } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.updated, mine);
    assert.deepEqual(res.body.notFound, [theirs]);
    for (const id of mine) {
      const t = (await u.call('GET', `/api/v1/tasks/${id}`)).body;
      assert.equal(t.status, 'done');
      assert.ok(t.completedAt);
    }
    assert.equal((await other.call('GET', `/api/v1/tasks/${theirs}`)).body.status, 'todo');
  });

  test('validation names the field: title, date, status, tags', async () => {
    const u = api.user();
    const cases: [object, RegExp][] = [
      [{}, /title/],
      [{ title: '' }, /title/],
      [{ title: 'x', dueDate: '2026-13-45' }, /dueDate/],
      [{ title: 'x', dueDate: 'tomorrow' }, /dueDate/],
      [{ title: 'x', status: 'blocked' }, /status/],
      [{ title: 'x', priority: 'p1' }, /priority/],
      [{ title: 'x', tags: ['has space'] }, /tags/],
      [{ title: 'x', projectId: 'abc' }, /projectId/],
    ];
    for (const [body, field] of cases) {
      const res = await u.call('POST', '/api/v1/tasks', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error, 'validation_failed');
      assert.match(res.body.message, field, JSON.stringify(body));
    }
    const bad = await u.call('GET', '/api/v1/tasks?limit=1000');
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /limit/);
  });
});
