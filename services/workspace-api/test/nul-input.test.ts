// A NUL character (%00 in a URL, \u0000 in a JSON string) cannot be stored or compared by Postgres:
// every route answers 400 with the usual error body, and nothing is logged at error level (issue 22,
// item 6). The URL check is one service-kit hook; a JSON body's NUL reaches the database and its
// error is mapped there (service-kit's toErrorResponse). Runs on PGlite and on Postgres.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProject, show, startTestApi, type TestApi } from './helpers/app.ts';

let api: TestApi;
const lines: { level: number; msg?: string }[] = [];

before(async () => {
  api = await startTestApi({ logStream: { write: (l) => void lines.push(JSON.parse(l)) } });
});
after(async () => {
  await api?.close();
});

const errorLines = () => lines.filter((l) => l.level >= 50);

test('a NUL in a query parameter or a path id: 400 with the error body on every list, search and item route', async () => {
  const user = api.user();
  const project = await createProject(user);
  const paths = [
    '/api/v1/tasks?q=a%00b',
    '/api/v1/tasks?tag=urgent%00',
    `/api/v1/tasks?projectId=${project.id}&q=%00`,
    '/api/v1/calendar-entries?q=%00',
    '/api/v1/notes?q=%00',
    '/api/v1/notes?tag=%00x',
    '/api/v1/workflows?q=%00',
    '/api/v1/search?q=%00',
    '/api/v1/projects?q=%00',
    '/api/v1/tasks/%00',
    `/api/v1/projects/${project.id}%00`,
  ];
  for (const path of paths) {
    const res = await user.call('GET', path);
    assert.equal(res.status, 400, `${path}: ${show(res)}`);
    assert.equal(res.body.error, 'bad_request', path);
    assert.match(res.body.message, /^(querystring|params)\.\w+ must not contain the NUL character/, path);
  }
  const patch = await user.call('PATCH', '/api/v1/tasks/%00', { title: 'x' });
  assert.equal(patch.status, 400, show(patch));
  assert.deepEqual(errorLines(), [], 'nothing logged at error level');
});

test('a \\u0000 in a JSON body: 400, whether the route goes through the one-round-trip executor or Prisma', async () => {
  const user = api.user();
  for (const [path, body] of [
    ['/api/v1/tasks', { title: 'nul\u0000title' }],
    ['/api/v1/notes', { title: 'ok', content: 'nul\u0000content' }],
    ['/api/v1/calendar-entries', { title: 'nul\u0000', startsAt: '2026-01-01T10:00:00Z', endsAt: '2026-01-01T11:00:00Z' }],
  ] as const) {
    const res = await user.call('POST', path, body);
    assert.equal(res.status, 400, `${path}: ${show(res)}`);
    assert.deepEqual(res.body, {
      error: 'bad_request',
      message: 'A value contains a character that cannot be stored: the NUL character (\\u0000) or an invalid Unicode escape',
    });
  }
  assert.deepEqual(errorLines(), [], 'nothing logged at error level');
  assert.equal((await user.call('GET', '/api/v1/tasks')).body.items.length, 0, 'nothing was created');
});
