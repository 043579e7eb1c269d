// The console session through the edge, over real HTTP on the real auth: cookie flags, CSRF, origin
// checks, session fixation, sign-out, and that a session token is never a bearer credential.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { buildApp } from '../src/app.ts';
import { csrfTokenFor } from '../src/domain/csrf.ts';
import { call, startConsoleStack, type ConsoleStack } from './helpers/stack.ts';

let stack: ConsoleStack;
const ORIGIN = 'https://flowdesk.example.test';
const owner = { email: `owner-${randomBytes(3).toString('hex')}@example.test`, name: 'Owner', password: randomBytes(12).toString('base64url') };

before(async () => {
  stack = await startConsoleStack({ publicBaseUrl: ORIGIN });
});
after(async () => {
  await stack?.close();
});

const cookieOf = (setCookie: string | null) => /^fd_session=([^;]*)/.exec(setCookie ?? '')?.[1];
const withCookie = (token: string, extra: Record<string, string> = {}) => ({ cookie: `fd_session=${token}`, ...extra });

async function signIn(): Promise<{ token: string; csrf: string; setCookie: string }> {
  const res = await call(stack.url, 'POST', '/api/v1/session', { headers: { origin: ORIGIN }, body: { email: owner.email, password: owner.password } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const setCookie = res.headers.get('set-cookie')!;
  return { token: cookieOf(setCookie)!, csrf: res.body.csrfToken, setCookie };
}

test('first run through the edge: setup opens a session in an HttpOnly, SameSite=Lax, Secure cookie; the token is never in the body', async () => {
  assert.deepEqual((await call(stack.url, 'GET', '/api/v1/setup')).body.needsOwner, true);
  const res = await call(stack.url, 'POST', '/api/v1/setup', { headers: { origin: ORIGIN }, body: owner });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const setCookie = res.headers.get('set-cookie') ?? '';
  assert.match(setCookie, /^fd_session=fds_[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.ok(!JSON.stringify(res.body).includes('fds_'));
  const token = cookieOf(setCookie)!;
  assert.equal(res.body.csrfToken, csrfTokenFor(token));
  assert.equal(res.body.user.email, owner.email);
  assert.equal((await call(stack.url, 'GET', '/api/v1/setup')).body.needsOwner, false);
});

test('GET /api/v1/session: the user, the session and its CSRF token; a bearer session token is refused', async () => {
  const { token } = await signIn();
  const res = await call(stack.url, 'GET', '/api/v1/session', { headers: withCookie(token) });
  assert.equal(res.status, 200);
  assert.equal(res.body.user.email, owner.email);
  assert.equal(res.body.csrfToken, csrfTokenFor(token));
  assert.ok(res.body.session.expiresAt);
  const bearer = await call(stack.url, 'GET', '/api/v1/api-keys', { bearer: token });
  assert.equal(bearer.status, 401);
});

test('GET /api/v1/session hands the editor SSRF_ALLOWLIST (signed in only): its URL warning stays quiet for what the guard opens', async () => {
  const allowing = await startConsoleStack({ publicBaseUrl: ORIGIN, ssrfAllowlist: ' localhost:3000  10.1.0.0/16,' });
  try {
    const person = { ...owner, email: `allow-${owner.email}` };
    assert.equal((await call(allowing.url, 'POST', '/api/v1/setup', { headers: { origin: ORIGIN }, body: person })).status, 201);
    const signedIn = await call(allowing.url, 'POST', '/api/v1/session', {
      headers: { origin: ORIGIN },
      body: { email: person.email, password: person.password },
    });
    const token = cookieOf(signedIn.headers.get('set-cookie'))!;
    const res = await call(allowing.url, 'GET', '/api/v1/session', { headers: withCookie(token) });
    assert.equal(res.status, 200);
    assert.equal(res.body.ssrfAllowlist, 'localhost:3000,10.1.0.0/16');
    assert.equal((await call(allowing.url, 'GET', '/api/v1/session')).status, 401, 'not without a session');
  } finally {
    await allowing.close();
  }
  const { token } = await signIn();
  assert.equal((await call(stack.url, 'GET', '/api/v1/session', { headers: withCookie(token) })).body.ssrfAllowlist, '', 'none set: empty');
  // A malformed allowlist fails the start, before anything is opened (as at the engine).
  const bad = { publicBaseUrl: ORIGIN, authUrl: 'http://127.0.0.1:9', workspaceApiUrl: 'http://127.0.0.1:9', engineUrl: 'http://127.0.0.1:9' };
  await assert.rejects(buildApp({ ...bad, serviceClientSecret: 'x'.repeat(32), ssrfAllowlist: '10.0.0.0/99' }), /invalid prefix length/);
});

test('CSRF: with the cookie, a write needs the token and this origin; reads need neither', async () => {
  const { token, csrf } = await signIn();
  const body = { name: 'from the console', scope: 'read' };
  assert.equal((await call(stack.url, 'GET', '/api/v1/api-keys', { headers: withCookie(token) })).status, 200);
  const missing = await call(stack.url, 'POST', '/api/v1/api-keys', { headers: withCookie(token, { origin: ORIGIN }), body });
  assert.equal(missing.status, 403);
  assert.deepEqual(Object.keys(missing.body).sort(), ['error', 'message']);
  assert.match(missing.body.message, /X-CSRF-Token/);
  const wrong = await call(stack.url, 'POST', '/api/v1/api-keys', {
    headers: withCookie(token, { origin: ORIGIN, 'x-csrf-token': csrfTokenFor('fds_other') }),
    body,
  });
  assert.equal(wrong.status, 403);
  const foreign = await call(stack.url, 'POST', '/api/v1/api-keys', {
    headers: withCookie(token, { origin: 'https://evil.example', 'x-csrf-token': csrf }),
    body,
  });
  assert.equal(foreign.status, 403);
  assert.match(foreign.body.message, /Cross-origin/);
  const crossSite = await call(stack.url, 'POST', '/api/v1/api-keys', {
    headers: withCookie(token, { 'sec-fetch-site': 'cross-site', 'x-csrf-token': csrf }),
    body,
  });
  assert.equal(crossSite.status, 403);
  const keys = await call(stack.url, 'GET', '/api/v1/api-keys', { headers: withCookie(token) });
  assert.ok(!keys.body.items.some((k: any) => k.name === 'from the console'), 'nothing refused was created');
  const ok = await call(stack.url, 'POST', '/api/v1/api-keys', {
    headers: withCookie(token, { origin: ORIGIN, 'x-csrf-token': csrf, 'sec-fetch-site': 'same-origin' }),
    body,
  });
  assert.equal(ok.status, 201);
  const project = await call(stack.url, 'POST', '/api/v1/projects', {
    headers: withCookie(token, { origin: ORIGIN, 'x-csrf-token': csrf }),
    body: { name: 'Console project' },
  });
  assert.equal(project.status, 201, JSON.stringify(project.body));
});

test('sign-in from another site is refused (login CSRF); a wrong password is 401', async () => {
  const cross = await call(stack.url, 'POST', '/api/v1/session', {
    headers: { origin: 'https://evil.example' },
    body: { email: owner.email, password: owner.password },
  });
  assert.equal(cross.status, 403);
  assert.equal(cross.headers.get('set-cookie'), null);
  const wrong = await call(stack.url, 'POST', '/api/v1/session', { headers: { origin: ORIGIN }, body: { email: owner.email, password: 'wrong password' } });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.headers.get('set-cookie'), null);
});

test('session fixation: signing in with an old session cookie gives a new token and ends the old session', async () => {
  const first = await signIn();
  const res = await call(stack.url, 'POST', '/api/v1/session', {
    headers: withCookie(first.token, { origin: ORIGIN }),
    body: { email: owner.email, password: owner.password },
  });
  assert.equal(res.status, 201);
  const second = cookieOf(res.headers.get('set-cookie'))!;
  assert.notEqual(second, first.token);
  assert.equal((await call(stack.url, 'GET', '/api/v1/session', { headers: withCookie(first.token) })).status, 401);
  assert.equal((await call(stack.url, 'GET', '/api/v1/session', { headers: withCookie(second) })).status, 200);
});

test('sign out clears the cookie and kills the session at once (cached introspection included)', async () => {
  const { token, csrf } = await signIn();
  // Warm the edge's introspection cache (30 s) first: only the eviction makes the next refusal immediate.
  assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { headers: withCookie(token) })).status, 200);
  const noToken = await call(stack.url, 'DELETE', '/api/v1/session', { headers: withCookie(token, { origin: ORIGIN }) });
  assert.equal(noToken.status, 403, 'signing out needs the CSRF token too');
  const out = await call(stack.url, 'DELETE', '/api/v1/session', { headers: withCookie(token, { origin: ORIGIN, 'x-csrf-token': csrf }) });
  assert.equal(out.status, 204);
  assert.match(out.headers.get('set-cookie') ?? '', /^fd_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
  assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { headers: withCookie(token) })).status, 401);
});

test('sign out everywhere ends every session of the user', async () => {
  const a = await signIn();
  const b = await signIn();
  assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { headers: withCookie(b.token) })).status, 200);
  const out = await call(stack.url, 'DELETE', '/api/v1/session/all', { headers: withCookie(a.token, { origin: ORIGIN, 'x-csrf-token': a.csrf }) });
  assert.equal(out.status, 204);
  for (const t of [a.token, b.token]) assert.equal((await call(stack.url, 'GET', '/api/v1/projects', { headers: withCookie(t) })).status, 401);
});

test('no session token or password reaches a log line', () => {
  const text = stack.logs.join('\n');
  assert.ok(!text.includes(owner.password));
  assert.ok(!/fds_[A-Za-z0-9_-]{20,}/.test(text));
});
