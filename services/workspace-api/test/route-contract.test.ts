// The promises every workspace-api route keeps, checked route by route: a valid internal token is
// required (401 otherwise), writes need mcp:write (403 with the `forbidden` error body), and another
// user's id is indistinguishable from an unknown one (404, never 403).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generateSigningKeys, signInternalToken } from '@flowdesk/service-kit';
import { startTestApi, rawCall, type TestApi, type TestUser } from './helpers/app.ts';

interface Route {
  method: string;
  path: string;
  access: 'read' | 'write';
  body?: unknown;
  /** The route takes an id: which kind of the owner's rows fills it. */
  id?: 'project' | 'task' | 'calendar' | 'note' | 'workflow' | 'comment';
}

const routes: Route[] = [
  { method: 'GET', path: '/projects', access: 'read' },
  { method: 'POST', path: '/projects', access: 'write', body: { name: 'New' } },
  { method: 'GET', path: '/projects/:id', access: 'read', id: 'project' },
  { method: 'PATCH', path: '/projects/:id', access: 'write', id: 'project', body: { name: 'Renamed' } },
  { method: 'DELETE', path: '/projects/:id', access: 'write', id: 'project' },
  { method: 'GET', path: '/tasks', access: 'read' },
  { method: 'POST', path: '/tasks', access: 'write', body: { title: 'New' } },
  { method: 'POST', path: '/tasks/bulk-update', access: 'write', body: { ids: [randomUUID()], set: { status: 'done' } } },
  { method: 'GET', path: '/tasks/:id', access: 'read', id: 'task' },
  { method: 'PATCH', path: '/tasks/:id', access: 'write', id: 'task', body: { title: 'Renamed' } },
  { method: 'DELETE', path: '/tasks/:id', access: 'write', id: 'task' },
  { method: 'GET', path: '/calendar-entries', access: 'read' },
  { method: 'POST', path: '/calendar-entries', access: 'write', body: { title: 'Call', startsAt: '2026-05-01T10:00:00Z' } },
  { method: 'GET', path: '/calendar-entries/:id', access: 'read', id: 'calendar' },
  { method: 'PATCH', path: '/calendar-entries/:id', access: 'write', id: 'calendar', body: { title: 'Renamed' } },
  { method: 'DELETE', path: '/calendar-entries/:id', access: 'write', id: 'calendar' },
  { method: 'GET', path: '/notes', access: 'read' },
  { method: 'POST', path: '/notes', access: 'write', body: { title: 'New' } },
  { method: 'GET', path: '/notes/:id', access: 'read', id: 'note' },
  { method: 'PATCH', path: '/notes/:id', access: 'write', id: 'note', body: { title: 'Renamed' } },
  { method: 'DELETE', path: '/notes/:id', access: 'write', id: 'note' },
  { method: 'GET', path: '/workflows', access: 'read' },
  { method: 'POST', path: '/workflows', access: 'write', body: { name: 'New', triggerType: 'manual' } },
  { method: 'GET', path: '/workflows/:id', access: 'read', id: 'workflow' },
  { method: 'PATCH', path: '/workflows/:id', access: 'write', id: 'workflow', body: { active: true } },
  { method: 'DELETE', path: '/workflows/:id', access: 'write', id: 'workflow' },
  { method: 'GET', path: '/workflows/:id/webhook-secret', access: 'write', id: 'workflow' },
  { method: 'POST', path: '/workflows/:id/webhook-secret/regenerate', access: 'write', id: 'workflow' },
  {
    method: 'PUT',
    path: '/workflows/:id/webhook-secret',
    access: 'write',
    id: 'workflow',
    body: { secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` },
  },
  { method: 'GET', path: '/workflows/:id/versions', access: 'read', id: 'workflow' },
  { method: 'GET', path: '/workflows/:id/versions/:n', access: 'read', id: 'workflow' },
  { method: 'POST', path: '/workflows/:id/versions/:n/restore', access: 'write', id: 'workflow' },
  { method: 'GET', path: '/workflows/:id/export', access: 'read', id: 'workflow' },
  { method: 'PUT', path: '/workflows/:id/sample', access: 'write', id: 'workflow', body: { payload: { order: 1 } } },
  { method: 'DELETE', path: '/workflows/:id/sample', access: 'write', id: 'workflow' },
  {
    method: 'POST',
    path: '/workflows/import',
    access: 'write',
    body: {
      format: 'flowdesk.workflow',
      formatVersion: 1,
      workflow: {
        name: 'Imported',
        description: '',
        triggerType: 'manual',
        triggerConfig: {},
        graph: { nodes: [], edges: [] },
        requireWebhookSecret: true,
        executionOrder: 'parallel',
        errorWorkflowId: null,
        retention: null,
        samplePayload: null,
      },
    },
  },
  { method: 'GET', path: '/search?q=plan', access: 'read' },
  { method: 'GET', path: '/tags', access: 'read' },
  { method: 'GET', path: '/overview', access: 'read' },
  { method: 'GET', path: `/comments?targetType=task&targetId=${randomUUID()}`, access: 'read' },
  { method: 'POST', path: '/comments', access: 'write', body: { targetType: 'task', targetId: randomUUID(), body: 'Hi' } },
  { method: 'DELETE', path: '/comments/:id', access: 'write', id: 'comment' },
  { method: 'GET', path: '/activity', access: 'read' },
  { method: 'GET', path: '/profile', access: 'read' },
  { method: 'PATCH', path: '/profile', access: 'write', body: { timezone: 'Europe/Berlin' } },
];

let api: TestApi;
let owner: TestUser;

/** Creates one row of each kind for `user`; returns their ids. */
async function seed(user: TestUser): Promise<Record<NonNullable<Route['id']>, string>> {
  const project = await user.call('POST', '/api/v1/projects', { name: 'Plan' });
  const task = await user.call('POST', '/api/v1/tasks', { title: 'Plan the week', projectId: project.body.id });
  const calendar = await user.call('POST', '/api/v1/calendar-entries', { title: 'Planning', startsAt: '2026-05-01T09:00:00Z' });
  const note = await user.call('POST', '/api/v1/notes', { title: 'Plan notes' });
  const workflow = await user.call('POST', '/api/v1/workflows', { name: 'Plan hook', triggerType: 'webhook' });
  for (const r of [project, task, calendar, note, workflow]) assert.equal(r.status, 201, JSON.stringify(r.body));
  const comment = await user.call('POST', '/api/v1/comments', { targetType: 'task', targetId: task.body.id, body: 'Plan comment' });
  assert.equal(comment.status, 201, JSON.stringify(comment.body));
  return { project: project.body.id, task: task.body.id, calendar: calendar.body.id, note: note.body.id, workflow: workflow.body.id, comment: comment.body.id };
}

const url = (r: Route, id: string = randomUUID()) => `/api/v1${r.path.replace(':id', id).replace(':n', '1')}`;
const name = (r: Route) => `${r.method} ${r.path}`;

before(async () => {
  api = await startTestApi();
  owner = api.user();
});
after(async () => {
  await api.close();
});

test('this table covers every route of the OpenAPI document', async () => {
  const doc = (await rawCall(api.baseUrl, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).map((m) => `${m.toUpperCase()} ${p.replace('/api/v1', '').replace('{id}', ':id').replace('{n}', ':n')}`),
  );
  const covered = routes.map((r) => `${r.method} ${r.path.split('?')[0]}`);
  assert.deepEqual([...documented].sort(), [...new Set(covered)].sort());
});

describe('401 without a valid internal token', () => {
  const other = generateSigningKeys();
  const now = Date.now();
  const bad: Record<string, () => string | undefined> = {
    'no Authorization header': () => undefined,
    'not a bearer': () => `Basic ${Buffer.from('a:b').toString('base64')}`,
    'garbage token': () => 'Bearer not-a-jwt',
    "a user's API key is never accepted as-is": () => 'Bearer fdk_3q2x9Yb0uZ7TqkQw8rT1mF4vN6cS5pL2hJ0dK9aE',
    'signed by another key': () => `Bearer ${signInternalToken(other, { sub: owner.id, aud: 'workspace-api', scope: 'mcp:write' })}`,
    'minted for another service': () => `Bearer ${signInternalToken(api.keys, { sub: owner.id, aud: 'mcp-gateway', scope: 'mcp:write' })}`,
    expired: () =>
      `Bearer ${signInternalToken(api.keys, { sub: owner.id, aud: 'workspace-api', scope: 'mcp:write' }, { now: now - 3_600_000, ttlSeconds: 300 })}`,
    'unsigned (alg none)': () => {
      const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      return `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: 'flowdesk-auth', sub: owner.id, aud: 'workspace-api', scope: 'mcp:write', iat: 1, exp: 4e9 })}.`;
    },
  };
  for (const [label, header] of Object.entries(bad)) {
    test(label, async () => {
      for (const r of routes) {
        const headers: Record<string, string> = {};
        const h = header();
        if (h) headers.authorization = h;
        if (r.body) headers['content-type'] = 'application/json';
        const res = await rawCall(api.baseUrl, r.method, url(r), { headers, body: r.body ? JSON.stringify(r.body) : undefined });
        assert.equal(res.status, 401, name(r));
        assert.equal(res.body.error, 'unauthorized', name(r));
        assert.equal(typeof res.body.message, 'string', name(r));
      }
    });
  }
});

test('a read token may call every read route and no write route (403 naming mcp:write)', async () => {
  const reader = api.user('mcp:read');
  const ids = await seed(api.user());
  for (const r of routes) {
    const res = await reader.call(r.method, url(r, r.id ? ids[r.id] : undefined), r.body);
    if (r.access === 'write') {
      assert.equal(res.status, 403, name(r));
      assert.deepEqual(Object.keys(res.body).sort(), ['error', 'message']);
      assert.equal(res.body.error, 'forbidden', name(r));
      assert.match(res.body.message, /requires the mcp:write scope/, name(r));
    } else {
      assert.notEqual(res.status, 401, name(r));
      assert.notEqual(res.status, 403, name(r));
    }
  }
});

test("another user's ids answer 404 exactly like unknown ids, and their rows stay as they were", async () => {
  const victim = api.user();
  const ids = await seed(victim);
  const before = await victim.call('GET', `/api/v1/workflows/${ids.workflow}`);
  for (const r of routes.filter((x) => x.id)) {
    const foreign = await owner.call(r.method, url(r, ids[r.id!]), r.body);
    const unknown = await owner.call(r.method, url(r), r.body);
    assert.equal(foreign.status, 404, `${name(r)} with another user's id`);
    assert.equal(unknown.status, 404, `${name(r)} with an unknown id`);
    assert.equal(foreign.body.error, 'not_found');
    // Same words for both: the answer must not tell "exists but not yours" from "does not exist".
    assert.equal(foreign.body.message, unknown.body.message, name(r));
  }
  for (const kind of ['project', 'task', 'calendar', 'note', 'workflow'] as const) {
    const path = { project: 'projects', task: 'tasks', calendar: 'calendar-entries', note: 'notes', workflow: 'workflows' }[kind];
    assert.equal((await victim.call('GET', `/api/v1/${path}/${ids[kind]}`)).status, 200, `${kind} still there`);
  }
  assert.deepEqual((await victim.call('GET', `/api/v1/workflows/${ids.workflow}`)).body, before.body);
});

test('a malformed id is a 400 naming the parameter, not a 500', async () => {
  for (const r of routes.filter((x) => x.id)) {
    const res = await owner.call(r.method, `/api/v1${r.path.replace(':id', 'not-a-uuid')}`, r.body);
    assert.equal(res.status, 400, name(r));
    assert.equal(res.body.error, 'validation_failed');
    assert.match(res.body.message, /params\.id/);
  }
});

describe('bad input gets a clean 4xx with the error body', () => {
  test('malformed JSON → 400 bad_request', async () => {
    const res = await owner.call('POST', '/api/v1/projects', '{"name": "x"', {});
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'bad_request');
  });
  test('wrong content type → 415 unsupported_media_type', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await owner.call('POST', '/api/v1/projects', 'name=x', { 'content-type': type });
      assert.equal(res.status, 415, type);
      assert.equal(res.body.error, 'unsupported_media_type');
    }
  });
  test('a body over the 1 MiB limit → 413 payload_too_large, and nothing is stored', async () => {
    const user = api.user();
    const res = await user.call('POST', '/api/v1/notes', { title: 'big', content: 'x'.repeat(1024 * 1024) });
    assert.equal(res.status, 413);
    assert.equal(res.body.error, 'payload_too_large');
    assert.equal((await user.call('GET', '/api/v1/notes')).body.items.length, 0);
  });
  test('a JSON array or string where an object belongs → 400 validation_failed', async () => {
    for (const body of ['[]', '"x"', '42', 'null']) {
      const res = await owner.call('POST', '/api/v1/tasks', body);
      assert.equal(res.status, 400, body);
      assert.ok(['validation_failed', 'bad_request'].includes(res.body.error), body);
    }
  });
  test('unknown fields are refused, naming the field', async () => {
    const res = await owner.call('POST', '/api/v1/tasks', { title: 'x', assignee: 'bob' });
    assert.equal(res.status, 400);
    assert.match(res.body.message, /assignee/);
  });
  test('a cursor this API did not issue → 400', async () => {
    const res = await owner.call('GET', '/api/v1/tasks?cursor=bm9wZQ');
    assert.equal(res.status, 400);
    assert.match(res.body.message, /cursor/);
  });
  test('every answer carries a request id, and a sane incoming x-request-id is kept', async () => {
    const res = await owner.call('GET', '/api/v1/tasks', undefined, { 'x-request-id': 'trace-123' });
    assert.equal(res.headers.get('x-request-id'), 'trace-123');
    const other = await owner.call('GET', '/api/v1/tasks', undefined, { 'x-request-id': 'bad id with spaces' });
    assert.match(other.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});

test('GET /openapi.json (also /api/v1/openapi.json) documents every route with the error body', async () => {
  const res = await rawCall(api.baseUrl, 'GET', '/openapi.json');
  assert.deepEqual((await rawCall(api.baseUrl, 'GET', '/api/v1/openapi.json')).body, res.body);
  assert.equal(res.status, 200);
  assert.equal(res.body.openapi, '3.1.0');
  const post = res.body.paths['/api/v1/tasks'].post;
  assert.ok(post.requestBody.content['application/json'].schema.properties.title);
  assert.ok(post.responses['401']);
  assert.ok(post.responses['403']);
});
