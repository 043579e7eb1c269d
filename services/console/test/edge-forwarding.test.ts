// What the edge passes on to the services behind it, seen from their side: the Idempotency-Key of Run
// now, the internal token and nothing of the caller's own (no cookie, CSRF token, API key or
// X-Forwarded-For the caller wrote), the client address auth throttles sign-ins by; and sign out
// everywhere on a replica no revocation event has reached yet.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { call, startConsoleStack, type ConsoleStack, type Received, type TestUser } from './helpers/stack.ts';

const ORIGIN = 'https://flowdesk.example.test';
const WORKFLOW = '00000000-0000-4000-8000-00000000000a';
// This test talks to the edge over loopback, which the edge trusts as its front proxy (TRUST_PROXY's
// default, the embedded start's front): the client is the rightmost entry of X-Forwarded-For, and
// whatever a caller wrote further left must never get further than the edge.
const FORWARDED_CHAIN = '203.0.113.9, 198.51.100.7';
const CLIENT = '198.51.100.7';

let stack: ConsoleStack;
let alice: TestUser;
let engine: http.Server;
/** What the stand-in engine received. */
const engineReceived: Received[] = [];

before(async () => {
  engine = http.createServer((req, res) => {
    engineReceived.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    req.resume();
    res.writeHead(202, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: '00000000-0000-4000-8000-0000000000ff', status: 'queued' }));
  });
  await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
  // No revocation events reach this edge: what it does itself on sign-out is all there is.
  stack = await startConsoleStack({
    publicBaseUrl: ORIGIN,
    engineUrl: `http://127.0.0.1:${(engine.address() as AddressInfo).port}`,
    revocationEvents: false,
  });
  alice = await stack.newUser();
});
after(async () => {
  await stack?.close();
  engine?.closeAllConnections();
  await new Promise((resolve) => engine?.close(resolve));
});

const withCookie = (token: string, extra: Record<string, string> = {}) => ({ cookie: `fd_session=${token}`, ...extra });

async function signIn(user: TestUser, headers: Record<string, string> = {}): Promise<{ token: string; csrf: string }> {
  const res = await call(stack.url, 'POST', '/api/v1/session', {
    headers: { origin: ORIGIN, ...headers },
    body: { email: user.email, password: user.password },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { token: /^fd_session=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')![1]!, csrf: res.body.csrfToken };
}

test('Run now through the edge: the Idempotency-Key reaches the engine, so a retried request can start one run', async () => {
  engineReceived.length = 0;
  for (let i = 0; i < 2; i++) {
    const res = await call(stack.url, 'POST', `/api/v1/workflows/${WORKFLOW}/runs`, {
      bearer: alice.writeKey,
      headers: { 'idempotency-key': 'double-click-1' },
      body: { payload: { n: 1 } },
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
  }
  assert.deepEqual(
    engineReceived.map((r) => [r.method, r.url, r.headers['idempotency-key']]),
    [
      ['POST', `/api/v1/workflows/${WORKFLOW}/runs`, 'double-click-1'],
      ['POST', `/api/v1/workflows/${WORKFLOW}/runs`, 'double-click-1'],
    ],
  );
});

test('an upstream gets the internal token only: no cookie, CSRF token, API key or caller-written X-Forwarded-For', async () => {
  const session = await signIn(alice);
  engineReceived.length = 0;
  const byCookie = await call(stack.url, 'POST', `/api/v1/workflows/${WORKFLOW}/runs`, {
    headers: withCookie(session.token, { origin: ORIGIN, 'x-csrf-token': session.csrf, 'x-forwarded-for': FORWARDED_CHAIN }),
    body: {},
  });
  assert.equal(byCookie.status, 202, JSON.stringify(byCookie.body));
  const byKey = await call(stack.url, 'POST', `/api/v1/workflows/${WORKFLOW}/runs`, {
    bearer: alice.writeKey,
    headers: { 'x-forwarded-for': FORWARDED_CHAIN },
    body: {},
  });
  assert.equal(byKey.status, 202);
  assert.equal(engineReceived.length, 2);
  for (const { headers } of engineReceived) {
    assert.equal(headers.cookie, undefined, 'the browser cookie stays at the edge');
    assert.equal(headers['x-csrf-token'], undefined);
    assert.match(headers.authorization ?? '', /^Bearer ey[\w-]+\.[\w-]+\.[\w-]+$/, 'an internal JWT');
    const raw = JSON.stringify(headers);
    for (const secret of [session.token, alice.writeKey]) assert.ok(!raw.includes(secret), 'no caller credential reaches the engine');
    assert.equal(headers['x-forwarded-for'], CLIENT, 'one entry: the client the edge saw, nothing the caller wrote');
  }
});

test('auth hears the client address the edge saw, never one the caller wrote (the per-address sign-in throttle cannot be dodged), and no cookie', async () => {
  stack.authReceived.length = 0;
  const session = await signIn(alice, { 'x-forwarded-for': FORWARDED_CHAIN });
  const wrong = await call(stack.url, 'POST', '/api/v1/session', {
    headers: { origin: ORIGIN, 'x-forwarded-for': FORWARDED_CHAIN },
    body: { email: alice.email, password: 'not the password' },
  });
  assert.equal(wrong.status, 401);
  assert.equal((await call(stack.url, 'GET', '/api/v1/api-keys', { headers: withCookie(session.token, { 'x-forwarded-for': FORWARDED_CHAIN }) })).status, 200);
  const signIns = stack.authReceived.filter((r) => r.method === 'POST' && r.url === '/auth/v1/sessions');
  assert.equal(signIns.length, 2);
  for (const r of signIns) assert.equal(r.headers['x-forwarded-for'], CLIENT);
  const keys = stack.authReceived.find((r) => r.url === '/auth/v1/api-keys');
  assert.ok(keys, 'the key list went to auth');
  assert.equal(keys.headers.cookie, undefined);
  assert.equal(keys.headers['x-forwarded-for'], CLIENT);
  assert.equal(keys.headers.authorization, `Bearer ${session.token}`);
  assert.ok(keys.headers['x-flowdesk-console-authorization'], "the console's own credential goes beside the session token");
});

test('sign out everywhere: on this replica the other sessions stop at once, before any revocation event; API keys keep working', async () => {
  const bob = await stack.newUser();
  const a = await signIn(bob);
  const b = await signIn(bob);
  // Warm this edge's caches (introspection and exchange, 30 s) for the other session.
  assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { headers: withCookie(b.token) })).status, 200);
  const key = await call(stack.url, 'POST', '/api/v1/api-keys', {
    headers: withCookie(a.token, { origin: ORIGIN, 'x-csrf-token': a.csrf }),
    body: { name: 'made in the console', scope: 'read' },
  });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { bearer: key.body.secret })).status, 200);

  const out = await call(stack.url, 'DELETE', '/api/v1/session/all', { headers: withCookie(a.token, { origin: ORIGIN, 'x-csrf-token': a.csrf }) });
  assert.equal(out.status, 204);
  for (const t of [a.token, b.token]) assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { headers: withCookie(t) })).status, 401);
  // Sessions only: the keys the user made (here, in the console) are revoked under API keys, not by signing out.
  assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { bearer: key.body.secret })).status, 200);
  assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { bearer: bob.writeKey })).status, 200);
});
