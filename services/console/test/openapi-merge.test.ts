// The public API document is merged from the services' own documents (issue 35): each service's
// paths appear at their public path, a component two services name alike but define differently
// keeps both, and a service that does not answer leaves the rest served (fail soft), not a 503.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createService } from '@flowdesk/service-kit';
import type { UpstreamAnswer } from '../src/adapters/upstream.ts';
import { referenceRoutes } from '../src/routes/reference.ts';

type Doc = Record<string, unknown>;
const answer = (status: number, doc?: Doc) =>
  ({ status, headers: {}, body: { json: async () => doc, text: async () => JSON.stringify(doc), dump: async () => {} } }) as unknown as UpstreamAnswer;

/** An upstream serving `doc` at /openapi.json while `up()` says so; it counts its calls. */
function upstream(doc: Doc, up: () => boolean = () => true) {
  const u = {
    calls: 0,
    request: async (r: { path: string }) => {
      u.calls++;
      if (!up()) throw new Error('connection refused');
      return r.path === '/openapi.json' ? answer(200, doc) : answer(404);
    },
  };
  return u;
}
const op = (schema: unknown) => ({ responses: { 200: { description: 'Default Response', content: { 'application/json': { schema } } } } });

const workspaceDoc = {
  info: { version: '1.0.0' },
  paths: { '/api/v1/tasks': { get: { ...op({ $ref: '#/components/schemas/Thing' }), security: [{ internalJwt: [] }] } }, '/internal/v1/x': { get: op({}) } },
  components: { schemas: { Thing: { type: 'object', properties: { task: { type: 'string' } } } } },
};
const authDoc = {
  paths: { '/auth/v1/api-keys': { get: op({ $ref: '#/components/schemas/Thing' }) }, '/oauth/token': { post: op({}) } },
  components: { schemas: { Thing: { type: 'object', properties: { key: { type: 'string' } } } } },
};
const engineDoc = {
  paths: { '/api/v1/workflow-runs/{id}': { get: op({ type: 'object' }) }, '/api/v1/resume/{waitId}': { post: { ...op({}), security: [] } } },
};

async function served(upstreams: Parameters<typeof referenceRoutes>[0]['upstreams'], clock: { t: number }, documentTimeoutMs?: number) {
  const app = createService({ name: 'console', logLevel: 'silent' });
  const options = { upstreams, publicBaseUrl: 'http://flowdesk.test', now: () => new Date(clock.t), cacheMs: 60_000, retryMs: 5_000, documentTimeoutMs };
  await app.register(referenceRoutes(options), {
    prefix: '/api/v1',
  });
  return app;
}

test('the public document: each service’s routes at their public path, internal ones left out, clashing component names kept apart', async () => {
  const app = await served({ 'workspace-api': upstream(workspaceDoc), auth: upstream(authDoc), 'workflow-engine': upstream(engineDoc) }, { t: 0 });
  const res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json();
  assert.deepEqual(Object.keys(doc.paths).sort(), ['/api/v1/api-keys', '/api/v1/resume/{waitId}', '/api/v1/tasks', '/api/v1/workflow-runs/{id}']);
  // workspace-api's internal JWT is not what a caller of the public API sends; the engine's "no credential" stays.
  assert.equal(doc.paths['/api/v1/tasks'].get.security, undefined);
  assert.deepEqual(doc.paths['/api/v1/resume/{waitId}'].post.security, []);
  assert.equal(doc.paths['/api/v1/tasks'].get.responses['200'].description, 'OK');
  // An operation that names no error answers ErrorBody by default.
  assert.deepEqual(doc.paths['/api/v1/tasks'].get.responses.default.content['application/json'].schema, { $ref: '#/components/schemas/ErrorBody' });
  const taskRef = doc.paths['/api/v1/tasks'].get.responses['200'].content['application/json'].schema.$ref as string;
  const keyRef = doc.paths['/api/v1/api-keys'].get.responses['200'].content['application/json'].schema.$ref as string;
  assert.notEqual(taskRef, keyRef);
  const schemaAt = (ref: string) => doc.components.schemas[ref.slice('#/components/schemas/'.length)];
  assert.ok(schemaAt(taskRef).properties.task);
  assert.ok(schemaAt(keyRef).properties.key);
  assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['bearer', 'csrf', 'session']);
  await app.close();
});

test('a service that does not answer: the others are served, the description says so, and it is asked again soon; none answering is a 503', async () => {
  let authUp = false;
  let everyoneUp = true;
  const clock = { t: 0 };
  const auth = upstream(authDoc, () => authUp && everyoneUp);
  const app = await served(
    { 'workspace-api': upstream(workspaceDoc, () => everyoneUp), auth, 'workflow-engine': upstream(engineDoc, () => everyoneUp) },
    clock,
  );
  let res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  assert.ok(res.json().paths['/api/v1/tasks']);
  assert.equal(res.json().paths['/api/v1/api-keys'], undefined);
  assert.match(res.json().info.description, /incomplete: auth did not give its document/);
  assert.equal(res.headers['cache-control'], 'public, max-age=5');

  // Within the short retry time the partial copy is served; after it, auth is asked again.
  authUp = true;
  clock.t = 4_000;
  res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.json().paths['/api/v1/api-keys'], undefined);
  clock.t = 5_000;
  res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.ok(res.json().paths['/api/v1/api-keys']);
  assert.doesNotMatch(res.json().info.description, /incomplete/);
  assert.equal(res.headers['cache-control'], 'public, max-age=60');

  // Everyone down after a complete copy: the last good documents stand in.
  everyoneUp = false;
  clock.t = 70_000;
  res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  assert.ok(res.json().paths['/api/v1/api-keys']);
  await app.close();

  // Never any answer: 503.
  const none = await served(
    { 'workspace-api': upstream(workspaceDoc, () => false), auth: upstream(authDoc, () => false), 'workflow-engine': upstream(engineDoc, () => false) },
    { t: 0 },
  );
  res = await none.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 503);
  await none.close();
});

test('a service that hangs is waited for only so long; requests meanwhile share one refresh', async () => {
  const workspace = upstream(workspaceDoc);
  const hanging = { request: () => new Promise<never>(() => {}) };
  const app = await served({ 'workspace-api': workspace, auth: upstream(authDoc), 'workflow-engine': hanging }, { t: 0 }, 200);
  const started = performance.now();
  const [a, b] = await Promise.all([app.inject({ method: 'GET', url: '/api/v1/openapi.json' }), app.inject({ method: 'GET', url: '/api/v1/openapi.json' })]);
  const ms = performance.now() - started;
  assert.ok(ms < 2_000, `answered after ${Math.round(ms)} ms`);
  for (const res of [a, b]) {
    assert.equal(res.statusCode, 200);
    assert.ok(res.json().paths['/api/v1/tasks']);
    assert.match(res.json().info.description, /incomplete: workflow-engine did not give its document/);
  }
  assert.equal(workspace.calls, 1, 'two requests during one refresh ask each service once');
  await app.close();
});
