import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApi, createProject, created, show, type TestApi } from './helpers/app.ts';
import type { Comment, Task } from '@flowdesk/contracts';

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(async () => {
  await api.close();
});

test('comments attach to the caller’s task, project or note, list newest first and go with their target', async () => {
  const user = api.user();
  const project = await createProject(user, 'Launch');
  const task = await created<Task>(user, '/api/v1/tasks', { title: 'Write copy', projectId: project.id });
  const first = await created<Comment>(user, '/api/v1/comments', { targetType: 'task', targetId: task.id, body: 'First draft done' });
  await created<Comment>(user, '/api/v1/comments', { targetType: 'task', targetId: task.id, body: 'Reviewed' });
  await created<Comment>(user, '/api/v1/comments', { targetType: 'project', targetId: project.id, body: 'Kickoff went well' });
  assert.deepEqual([first.targetType, first.targetId], ['task', task.id]);
  const list = await user.call('GET', `/api/v1/comments?targetType=task&targetId=${task.id}`);
  assert.equal(list.status, 200, show(list));
  assert.deepEqual(
    list.body.items.map((c: Comment) => c.body),
    ['Reviewed', 'First draft done'],
  );
  // A target of the wrong kind is not found.
  assert.equal((await user.call('POST', '/api/v1/comments', { targetType: 'note', targetId: task.id, body: 'x' })).status, 404);
  assert.equal((await user.call('DELETE', `/api/v1/tasks/${task.id}`)).status, 204);
  assert.equal((await user.call('GET', `/api/v1/comments?targetType=task&targetId=${task.id}`)).status, 404);
  assert.equal((await user.call('DELETE', `/api/v1/comments/${first.id}`)).status, 404, 'cascaded with its task');
});

test('another user can neither comment on nor read the comments of a foreign target', async () => {
  const owner = api.user();
  const other = api.user();
  const task = await created<Task>(owner, '/api/v1/tasks', { title: 'Private' });
  await created<Comment>(owner, '/api/v1/comments', { targetType: 'task', targetId: task.id, body: 'secret' });
  const read = await other.call('GET', `/api/v1/comments?targetType=task&targetId=${task.id}`);
  const write = await other.call('POST', '/api/v1/comments', { targetType: 'task', targetId: task.id, body: 'hi' });
  assert.deepEqual([read.status, write.status], [404, 404]);
  assert.equal(read.body.message, 'Task not found');
});

test('activity lists recent changes newest first, with completions and comments', async () => {
  const user = api.user();
  const task = await created<Task>(user, '/api/v1/tasks', { title: 'Ship it' });
  await created(user, '/api/v1/notes', { title: 'Ideas' });
  await user.call('PATCH', `/api/v1/tasks/${task.id}`, { status: 'done' });
  await created<Comment>(user, '/api/v1/comments', { targetType: 'task', targetId: task.id, body: 'Shipped!' });
  const res = await user.call('GET', '/api/v1/activity?limit=10');
  assert.equal(res.status, 200, show(res));
  const items = res.body.items as { type: string; action: string; title: string; target: unknown }[];
  assert.deepEqual(
    items.map((i) => `${i.type}:${i.action}`),
    ['comment:commented', 'task:completed', 'note:created'],
  );
  assert.deepEqual(items[0]!.target, { type: 'task', id: task.id });
  assert.deepEqual((await api.user().call('GET', '/api/v1/activity')).body.items, [], 'nothing of other users');
});

test('profile: defaults until changed, validated time zone, default project must be the caller’s', async () => {
  const user = api.user();
  const initial = await user.call('GET', '/api/v1/profile');
  assert.deepEqual(initial.body, {
    userId: user.id,
    displayName: null,
    timezone: 'UTC',
    weekStartsOn: 'monday',
    workdayStart: '09:00',
    workdayEnd: '17:00',
    defaultProjectId: null,
    updatedAt: null,
  });
  const project = await createProject(user);
  const changed = await user.call('PATCH', '/api/v1/profile', { displayName: 'Ada', timezone: 'Europe/Berlin', defaultProjectId: project.id });
  assert.equal(changed.status, 200, show(changed));
  assert.equal(changed.body.timezone, 'Europe/Berlin');
  assert.equal(changed.body.defaultProjectId, project.id);
  const again = await user.call('PATCH', '/api/v1/profile', { workdayStart: '08:30' });
  assert.equal(again.body.displayName, 'Ada');
  const bad = await user.call('PATCH', '/api/v1/profile', { timezone: 'Mars/Olympus' });
  assert.equal(bad.status, 400);
  assert.match(bad.body.message, /timezone/);
  const foreign = await api.user().call('PATCH', '/api/v1/profile', { defaultProjectId: project.id });
  assert.equal(foreign.status, 404);
  assert.equal((await user.call('GET', '/api/v1/profile')).body.workdayStart, '08:30');
});
