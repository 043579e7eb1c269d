// The public API at /api/v1 with a user's own bearer credential (API key), over real HTTP on the
// real auth and workspace-api: what a script sees.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, startConsoleStack, type ConsoleStack, type TestUser } from './helpers/stack.ts';

let stack: ConsoleStack;
let alice: TestUser;
let bob: TestUser;

before(async () => {
  stack = await startConsoleStack({ introspectionCacheMs: 30_000 });
  [alice, bob] = await Promise.all([stack.newUser(), stack.newUser()]);
});
after(async () => {
  await stack?.close();
});

test('an API key reaches the workspace through the edge; workspace-api itself refuses that key', async () => {
  const created = await call(stack.url, 'POST', '/api/v1/projects', { bearer: alice.writeKey, body: { name: 'Launch' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.name, 'Launch');
  const list = await call(stack.url, 'GET', '/api/v1/projects', { bearer: alice.readKey });
  assert.equal(list.status, 200);
  assert.deepEqual(
    list.body.items.map((p: any) => p.name),
    ['Launch'],
  );
  // workspace-api is internal only: the key means nothing there, the edge's exchanged token does.
  const direct = await call(stack.workspaceApiUrl, 'GET', '/api/v1/projects', { bearer: alice.writeKey });
  assert.equal(direct.status, 401);
});

test('a read key gets 403 with the forbidden error body on every write, and nothing is written', async () => {
  for (const [method, path] of [
    ['POST', '/api/v1/projects'],
    ['POST', '/api/v1/api-keys'],
  ] as const) {
    const res = await call(stack.url, method, path, { bearer: alice.readKey, body: { name: 'nope', scope: 'read' } });
    assert.equal(res.status, 403, `${method} ${path}`);
    assert.equal(res.body.error, 'forbidden');
    assert.match(res.body.message, /requires the mcp:write scope/);
  }
  const list = await call(stack.url, 'GET', '/api/v1/projects', { bearer: alice.readKey });
  assert.ok(!list.body.items.some((p: any) => p.name === 'nope'));
});

test('no credential, a wrong key, a malformed header or a session token as bearer: 401 JSON', async () => {
  const cases: Record<string, string>[] = [
    {},
    { authorization: 'Bearer fdk_not_a_key' },
    { authorization: 'Basic abc' },
    { authorization: 'Bearer fds_looks_like_a_session' },
  ];
  for (const headers of cases) {
    const res = await call(stack.url, 'GET', '/api/v1/projects', { headers });
    assert.equal(res.status, 401, JSON.stringify(headers));
    assert.equal(res.body.error, 'unauthorized');
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
  }
  const session = await call(stack.url, 'GET', '/api/v1/projects', { headers: { authorization: 'Bearer fds_looks_like_a_session' } });
  assert.match(session.body.message, /cookie/);
});

test("cross-user: Bob never sees Alice's projects, keys or apps through the edge", async () => {
  await call(stack.url, 'POST', '/api/v1/projects', { bearer: alice.writeKey, body: { name: 'Alice only' } });
  const projects = await call(stack.url, 'GET', '/api/v1/projects', { bearer: bob.readKey });
  assert.deepEqual(projects.body.items, []);
  const keys = await call(stack.url, 'GET', '/api/v1/api-keys', { bearer: bob.readKey });
  assert.equal(keys.status, 200);
  assert.deepEqual(keys.body.items.map((k: any) => k.name).sort(), ['read', 'write']);
  const apps = await call(stack.url, 'GET', '/api/v1/connected-apps', { bearer: bob.readKey });
  assert.ok(apps.body.items.every((a: any) => !alice.writeKeyId || a.id !== alice.writeKeyId));
  // Revoking someone else's key by id is refused and the key keeps working.
  const revoke = await call(stack.url, 'DELETE', `/api/v1/api-keys/${alice.writeKeyId}`, { bearer: bob.writeKey });
  assert.equal(revoke.status, 404);
  assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { bearer: alice.writeKey })).status, 200);
});

test('a key created and revoked through the edge: shown once, then the next request gets 401 at once', async () => {
  const created = await call(stack.url, 'POST', '/api/v1/api-keys', { bearer: alice.writeKey, body: { name: 'script', scope: 'read' } });
  assert.equal(created.status, 201);
  assert.equal(created.headers.get('cache-control'), 'no-store');
  const secret: string = created.body.secret;
  assert.match(secret, /^fdk_/);
  assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { bearer: secret })).status, 200);
  const listed = await call(stack.url, 'GET', '/api/v1/api-keys', { bearer: alice.readKey });
  assert.ok(listed.body.items.some((k: any) => k.id === created.body.id && !('secret' in k)));
  const revoked = await call(stack.url, 'DELETE', `/api/v1/connected-apps/${created.body.id}`, { bearer: alice.writeKey });
  assert.equal(revoked.status, 204);
  // The introspection cache is 30 s here: only the revocation event can make this immediate.
  let status = 0;
  for (let i = 0; i < 200; i++) {
    status = (await call(stack.url, 'GET', '/api/v1/projects', { bearer: secret })).status;
    if (status === 401) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(status, 401);
});

test('the OpenAPI document: the public paths and account routes with bearer and cookie+CSRF security, nothing internal', async () => {
  const res = await call(stack.url, 'GET', '/api/v1/openapi.json');
  assert.equal(res.status, 200);
  const doc = res.body;
  assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['bearer', 'csrf', 'session']);
  for (const path of ['/api/v1/projects', '/api/v1/session', '/api/v1/api-keys', '/api/v1/connected-apps/{id}', '/api/v1/setup'])
    assert.ok(doc.paths[path], path);
  // This stack has no workflow engine: the document goes without its routes (fail soft) and says so.
  // The whole document, the engine's routes included, is checked in embedded/test/openapi-coverage.test.ts.
  assert.equal(doc.paths['/api/v1/workflow-runs'], undefined);
  assert.match(doc.info.description, /incomplete: workflow-engine did not give its document/);
  const refs = [...JSON.stringify(doc).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
  assert.deepEqual(
    refs.filter((r) => !doc.components.schemas[r]),
    [],
    'every $ref resolves',
  );
  assert.ok(Object.keys(doc.paths).every((p) => p.startsWith('/api/v1/')));
  assert.ok(!JSON.stringify(doc).includes('internalJwt'));
  assert.equal(doc.servers[0].url, 'http://flowdesk.example.test');
  const page = await fetch(`${stack.url}/api/v1/docs`);
  const html = await page.text();
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.match(html, /src="\/api\/v1\/docs\/swagger-ui-bundle\.js"/);
  assert.ok(!/https?:\/\//.test(html), 'no CDN');
  const bundle = await fetch(`${stack.url}/api/v1/docs/swagger-ui-bundle.js`);
  assert.equal(bundle.status, 200);
  assert.ok((await bundle.arrayBuffer()).byteLength > 100_000);
});

test('the console pages: index.html for app paths, with a CSP; missing files and unknown API paths are JSON 404s', async () => {
  // Every page of the app answers 200 (a reload of /runs/… or /workflows/… is a page, not a 404).
  const id = '0b0f7c4e-2a0c-4a39-9d5e-3f1f3b8d9c11';
  for (const path of [
    '/',
    '/settings/api-keys',
    '/sign-in',
    '/workflows',
    `/workflows/${id}`,
    `/workflows/${id}/runs`,
    '/runs',
    `/runs/${id}`,
    '/projects',
    '/tasks',
    '/calendar',
    '/notes',
  ]) {
    const res = await fetch(`${stack.url}${path}`);
    assert.equal(res.status, 200, path);
    assert.match(await res.text(), /<div id="root">/);
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  }
  const missing = await call(stack.url, 'GET', '/assets/nope.js');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error, 'not_found');
  const unknown = await call(stack.url, 'GET', '/api/v1/nothing-here', { bearer: alice.readKey });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error, 'not_found');
});

test('a cookie that is not a session is refused and cleared; a cross-origin write with a cookie is refused first', async () => {
  const res = await call(stack.url, 'GET', '/api/v1/projects', { headers: { cookie: 'fd_session=fds_forged' } });
  assert.equal(res.status, 401);
  assert.match(res.headers.get('set-cookie') ?? '', /^fd_session=;.*Max-Age=0/);
  const cross = await call(stack.url, 'POST', '/api/v1/projects', {
    headers: { cookie: 'fd_session=fds_forged', origin: 'https://evil.example' },
    body: { name: 'x' },
  });
  assert.equal(cross.status, 403);
  assert.equal(cross.body.error, 'forbidden');
  const site = await call(stack.url, 'POST', '/api/v1/session', {
    headers: { 'sec-fetch-site': 'cross-site' },
    body: { email: alice.email, password: alice.password },
  });
  assert.equal(site.status, 403);
});

test('no credential ever reaches a log line', () => {
  const text = stack.logs.join('\n');
  for (const secret of [alice.readKey, alice.writeKey, bob.readKey, bob.writeKey]) assert.ok(!text.includes(secret));
});

test('paths that are no console page get the app with status 404 (nothing internal answers here)', async () => {
  for (const path of ['/internal/anything', '/nope', '/workflowsx', '/runsy/1']) {
    const res = await fetch(`${stack.url}${path}`);
    assert.equal(res.status, 404, path);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
  }
});
