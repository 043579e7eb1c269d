// Accounts and console sessions over HTTP, as the console edge uses them: first-run setup, sign-in,
// the current session, sign-out (here and everywhere), password change, expiry, sessions as bearer
// credentials of /auth/v1, introspection and token exchange for the console client only, sign-up
// modes, invitations, the owner's users, and the revocation events of all of it.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { CONSOLE_CLIENT_HEADER, CREDENTIAL_REVOKED_TOPIC, CredentialRevoked, SessionCreated, type EventPublisher } from '@flowdesk/contracts';
import { Check } from 'typebox/value';
import { createUser } from '../src/domain/users.ts';
import { basic, startTestAuth, type TestAuth } from './helpers/app.ts';

const TOKEN = /^fds_[A-Za-z0-9_-]{43}$/;
const published: { topic: string; value: CredentialRevoked }[] = [];
const events: EventPublisher = {
  async publish(topic, messages) {
    for (const m of messages) published.push({ topic, value: m.value as CredentialRevoked });
  },
};
/** Every token and password of this file: none may reach a log line or an event. */
const secrets: string[] = [];
const sha256 = (s: string) => createHash('sha256').update(s).digest('base64url');

let auth: TestAuth;
const owner = { email: 'Owner@Example.test', name: 'Olive Owner', password: 'owner password 1' };

before(async () => {
  auth = await startTestAuth({ events });
  secrets.push(owner.password);
});
after(async () => {
  const logs = auth.logs.join('\n');
  for (const s of secrets) assert.ok(!logs.includes(s), 'a token or password reached the log');
  const sent = JSON.stringify(published);
  for (const s of secrets) assert.ok(!sent.includes(s), 'a token or password reached an event');
  await auth.close();
});
beforeEach(() => {
  auth.setNow(undefined);
  published.length = 0;
});

async function signIn(email: string, password: string) {
  const res = await auth.call('POST', '/auth/v1/sessions', { body: { email, password } });
  if (res.status === 201) secrets.push(res.body.token);
  return res;
}
async function member(name = 'Mia Member') {
  const password = `pw ${Math.random().toString(36).slice(2)} long`;
  const email = `m-${Math.random().toString(36).slice(2, 8)}@example.test`;
  secrets.push(password);
  const user = await createUser(auth.prisma, { email, password, name });
  const session = await signIn(email, password);
  assert.equal(session.status, 201);
  return { ...user, password, token: session.body.token as string };
}
const current = (token: string) => auth.call('GET', '/auth/v1/sessions/current', { token });
const introspect = (token: string, service = 'console') => auth.form('/oauth/introspect', { token }, { service });

describe('first run', () => {
  test('GET /setup says an owner is needed; the demo account (a member) does not count; the first setup wins, later ones get 409', async () => {
    // What `npm start` writes on its first start: a member with API keys.
    await createUser(auth.prisma, { email: 'demo@flowdesk.local', password: 'demo password 123' });
    const before = await auth.call('GET', '/auth/v1/setup');
    assert.equal(before.status, 200);
    assert.deepEqual(before.body, { needsOwner: true, signup: 'invite' });

    const weak = await auth.call('POST', '/auth/v1/setup', { body: { ...owner, password: 'short' } });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.error, 'validation_failed');

    // Several browsers at once: exactly one becomes the owner.
    const attempts = await Promise.all(
      [owner, { ...owner, email: 'other@example.test' }, { ...owner, email: 'third@example.test' }].map((body) =>
        auth.call('POST', '/auth/v1/setup', { body }),
      ),
    );
    const won = attempts.filter((r) => r.status === 201);
    assert.equal(won.length, 1, JSON.stringify(attempts.map((a) => a.body)));
    for (const lost of attempts.filter((r) => r.status !== 201)) assert.deepEqual([lost.status, lost.body.error], [409, 'conflict']);
    const created = won[0]!;
    secrets.push(created.body.token);
    assert.ok(Check(SessionCreated, created.body));
    assert.match(created.body.token, TOKEN);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    assert.equal(created.body.user.role, 'owner');
    // The winner signs in with its own email from now on.
    owner.email = created.body.user.email;

    assert.deepEqual((await auth.call('GET', '/auth/v1/setup')).body, { needsOwner: false, signup: 'invite' });
    const again = await auth.call('POST', '/auth/v1/setup', { body: { ...owner, email: 'late@example.test' } });
    assert.deepEqual([again.status, again.body.error], [409, 'conflict']);
    // The demo account still signs in.
    assert.equal((await signIn('demo@flowdesk.local', 'demo password 123')).status, 201);
  });
});

describe('sessions', () => {
  test('sign-in hands out a new unguessable token every time; the current session describes it', async () => {
    const a = await signIn(owner.email, owner.password);
    const b = await signIn(owner.email.toUpperCase(), owner.password);
    assert.deepEqual([a.status, b.status], [201, 201]);
    assert.match(a.body.token, TOKEN);
    assert.notEqual(a.body.token, b.body.token, 'a new token on every sign-in (no session fixation)');
    assert.equal(a.body.user.email, owner.email.toLowerCase());
    // Only the hash is stored.
    const { rows } = await auth.db.exec('SELECT token_hash FROM auth.console_session');
    assert.ok(rows.length >= 2);
    assert.ok(!JSON.stringify(rows).includes(a.body.token.slice(4, 20)));

    const res = await current(a.body.token);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['session', 'user']);
    assert.deepEqual(res.body.user, a.body.user);
    assert.equal(res.body.session.expiresAt, a.body.expiresAt);
    const created = Date.parse(res.body.session.createdAt);
    assert.equal(Date.parse(res.body.session.expiresAt) - created, 30 * 86_400_000);
    assert.equal(Date.parse(res.body.session.idleExpiresAt) - created, 7 * 86_400_000);
  });

  test('wrong password, unknown email and disabled user get the same 401', async () => {
    const m = await member();
    await auth.db.exec('UPDATE auth."user" SET disabled_at = now() WHERE id = $1', [m.id]);
    const answers = await Promise.all([signIn(owner.email, 'wrong password!!'), signIn('nobody@example.test', owner.password), signIn(m.email, m.password)]);
    for (const res of answers) assert.deepEqual([res.status, res.body], [401, { error: 'unauthorized', message: 'Wrong email or password' }]);
    // And the disabled user's session stopped working with the user.
    assert.equal((await current(m.token)).status, 401);
    const bad = await auth.call('POST', '/auth/v1/sessions', { body: { email: owner.email } });
    assert.deepEqual([bad.status, bad.body.error], [400, 'validation_failed']);
  });

  test('unknown, malformed and missing tokens get 401; an API key is not a session', async () => {
    const m = await member();
    const key = await auth.newKey(m.id, 'mcp:write');
    secrets.push(key.secret);
    for (const token of [`fds_${'A'.repeat(43)}`, 'fds_short', key.secret]) {
      const res = await current(token);
      assert.deepEqual([res.status, res.body.error], [401, 'unauthorized'], token);
    }
    assert.equal((await auth.call('GET', '/auth/v1/sessions/current')).status, 401);
  });

  test('sign-out kills that session only; sign-out everywhere kills all of them; both are announced', async () => {
    const m = await member();
    const second = (await signIn(m.email, m.password)).body.token as string;
    const third = (await signIn(m.email, m.password)).body.token as string;

    const out = await auth.call('DELETE', '/auth/v1/sessions/current', { token: m.token });
    assert.equal(out.status, 204);
    assert.equal((await current(m.token)).status, 401);
    assert.equal((await auth.call('DELETE', '/auth/v1/sessions/current', { token: m.token })).status, 401, 'dead stays dead');
    assert.equal((await current(second)).status, 200);
    assert.equal(published.length, 1);
    assert.equal(published[0]!.topic, CREDENTIAL_REVOKED_TOPIC);
    assert.ok(Check(CredentialRevoked, published[0]!.value));
    assert.deepEqual(
      { kind: published[0]!.value.kind, userId: published[0]!.value.userId, clientId: published[0]!.value.clientId, hashes: published[0]!.value.tokenSha256 },
      { kind: 'console_session', userId: m.id, clientId: 'console', hashes: [sha256(m.token)] },
    );

    published.length = 0;
    assert.equal((await auth.call('DELETE', '/auth/v1/sessions', { token: second })).status, 204);
    assert.equal((await current(second)).status, 401);
    assert.equal((await current(third)).status, 401);
    assert.equal(published.length, 1);
    assert.deepEqual(published[0]!.value.tokenSha256?.sort(), [sha256(second), sha256(third)].sort());
    assert.equal((await introspect(third)).body.active, false);
  });

  test('idle expiry after 7 days without use, absolute expiry after 30 days whatever the use; use is written at most once a minute', async () => {
    const start = new Date('2031-01-01T00:00:00Z');
    auth.setNow(start);
    const m = await member();
    const idle = (await signIn(m.email, m.password)).body.token as string;
    const at = (ms: number) => auth.setNow(new Date(start.getTime() + ms));
    const lastUsed = async () =>
      (
        await auth.db.exec(`SELECT last_used_at FROM auth.console_session WHERE token_hash = decode($1, 'hex')`, [
          createHash('sha256').update(m.token).digest('hex'),
        ])
      ).rows[0]!.last_used_at;

    at(30_000);
    assert.equal((await current(m.token)).status, 200);
    assert.equal(new Date(String(await lastUsed())).getTime(), start.getTime(), 'not written within the minute');
    at(61_000);
    const used = await current(m.token);
    assert.equal(new Date(String(await lastUsed())).getTime(), start.getTime() + 61_000);
    assert.equal(Date.parse(used.body.session.idleExpiresAt), start.getTime() + 61_000 + 7 * 86_400_000);

    // Used every 6 days, the first session lives on; the unused one dies after 7.
    const DAY = 86_400_000;
    for (let day = 6; day < 30; day += 6) {
      at(day * DAY);
      assert.equal((await current(m.token)).status, 200, `day ${day}`);
    }
    at(7 * DAY + 1000);
    assert.equal((await current(idle)).status, 401, 'idle for 7 days');
    at(30 * DAY - 1000);
    assert.equal((await current(m.token)).status, 200);
    at(30 * DAY + 1000);
    assert.equal((await current(m.token)).status, 401, 'absolute expiry');
    assert.equal((await introspect(m.token)).body.active, false);
    // Back to the present: the throttle's rows written "in 2031" would otherwise hold every sign-in.
    await auth.db.exec('DELETE FROM auth.login_throttle');
  });

  test('password change: the current password is checked, the policy applies, the other sessions end', async () => {
    const m = await member();
    const other = (await signIn(m.email, m.password)).body.token as string;
    const change = (body: unknown, token = m.token) => auth.call('POST', '/auth/v1/account/password', { token, body });

    const wrong = await change({ currentPassword: 'not my password', newPassword: 'a brand new password' });
    assert.deepEqual([wrong.status, wrong.body.error], [401, 'unauthorized']);
    const weak = await change({ currentPassword: m.password, newPassword: 'short' });
    assert.deepEqual([weak.status, weak.body.error], [400, 'validation_failed']);
    const long = await change({ currentPassword: m.password, newPassword: 'x'.repeat(201) });
    assert.equal(long.status, 400);
    assert.equal((await current(other)).status, 200, 'failed changes end nothing');

    const newPassword = 'a brand new password';
    secrets.push(newPassword);
    assert.equal((await change({ currentPassword: m.password, newPassword })).status, 204);
    assert.equal((await current(m.token)).status, 200, 'this browser stays signed in');
    assert.equal((await current(other)).status, 401, 'every other session ends');
    assert.deepEqual(
      published.map((e) => [e.value.kind, e.value.tokenSha256]),
      [['console_session', [sha256(other)]]],
    );
    assert.equal((await signIn(m.email, m.password)).status, 401);
    assert.equal((await signIn(m.email, newPassword)).status, 201);
    // Only a session may change the password, not an API key.
    const key = await auth.newKey(m.id, 'mcp:write');
    secrets.push(key.secret);
    assert.equal((await change({ currentPassword: newPassword, newPassword: 'yet another password' }, key.secret)).status, 401);
  });
});

describe('a session as the bearer of /auth/v1 and towards other services', () => {
  test('a session manages API keys with full scope, and is listed nowhere in Connected Apps', async () => {
    const m = await member();
    const created = await auth.call('POST', '/auth/v1/api-keys', { token: m.token, body: { name: 'from the console', scope: 'write' } });
    assert.equal(created.status, 201);
    secrets.push(created.body.secret);
    const keys = await auth.call('GET', '/auth/v1/api-keys', { token: m.token });
    assert.deepEqual(
      keys.body.items.map((k: { name: string }) => k.name),
      ['from the console'],
    );
    const apps = await auth.call('GET', '/auth/v1/connected-apps', { token: m.token });
    assert.equal(apps.status, 200);
    assert.deepEqual(
      apps.body.items.map((a: { type: string; name: string }) => [a.type, a.name]),
      [['api_key', 'from the console']],
    );
    assert.equal((await auth.call('DELETE', `/auth/v1/connected-apps/${created.body.id}`, { token: m.token })).status, 204);
    // Another user's session sees none of it.
    const other = await member('Other');
    assert.deepEqual((await auth.call('GET', '/auth/v1/connected-apps', { token: other.token })).body.items, []);
    // Signed out: refused.
    await auth.call('DELETE', '/auth/v1/sessions/current', { token: m.token });
    assert.equal((await auth.call('GET', '/auth/v1/api-keys', { token: m.token })).status, 401);
  });

  test('a session token outside the console edge is refused everywhere under /auth/v1 (401 JSON): a leaked one mints no key', async () => {
    const m = await member();
    const routes: [string, string, unknown?][] = [
      ['POST', '/auth/v1/api-keys', { name: 'stolen', scope: 'write' }],
      ['GET', '/auth/v1/api-keys'],
      ['GET', '/auth/v1/connected-apps'],
      ['GET', '/auth/v1/sessions/current'],
      ['DELETE', '/auth/v1/sessions'],
      ['POST', '/auth/v1/account/password', { currentPassword: m.password, newPassword: 'a new password 123' }],
    ];
    // Bare, with another service's credential, or with a wrong console secret: the same 401.
    const notTheConsole: Record<string, string>[] = [
      {},
      { [CONSOLE_CLIENT_HEADER]: basic('mcp-gateway', auth.serviceClients['mcp-gateway']!) },
      { [CONSOLE_CLIENT_HEADER]: basic('console', 'x'.repeat(43)) },
    ];
    for (const headers of notTheConsole) {
      for (const [method, path, body] of routes) {
        const res = await auth.call(method, path, { token: m.token, body, headers, asConsole: false });
        assert.equal(res.status, 401, `${method} ${path} ${JSON.stringify(headers)}: ${res.text}`);
        assert.equal(res.body.error, 'unauthorized');
        assert.match(res.body.message, /only from its cookie/);
        assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      }
    }
    // Nothing happened: no key, the session and its password live on, through the console edge.
    assert.deepEqual((await auth.call('GET', '/auth/v1/api-keys', { token: m.token })).body.items, []);
    assert.equal((await current(m.token)).status, 200);
    assert.equal((await signIn(m.email, m.password)).status, 201);
  });

  test('introspection and token exchange accept a session only from the console client', async () => {
    const m = await member();
    const res = await introspect(m.token);
    assert.equal(res.status, 200);
    const { exp, iat, ...rest } = res.body;
    assert.deepEqual(rest, { active: true, sub: m.id, scope: 'mcp:write', client_id: 'console', token_type: 'console_session' });
    assert.ok(Number.isInteger(exp) && Number.isInteger(iat) && exp > iat);
    for (const service of ['mcp-gateway', 'webhook-ingest', 'workflow-engine']) {
      assert.deepEqual((await introspect(m.token, service)).body, { active: false }, service);
    }

    const exchange = (service: string) =>
      auth.form(
        '/oauth/token',
        {
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: m.token,
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          audience: 'workspace-api',
        },
        { service },
      );
    const ok = await exchange('console');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const claims = JSON.parse(Buffer.from(ok.body.access_token.split('.')[1], 'base64url').toString('utf8'));
    assert.deepEqual([claims.sub, claims.azp, claims.client_id, claims.scope], [m.id, 'console', 'console', 'mcp:read mcp:write']);
    const refused = await exchange('mcp-gateway');
    assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_grant']);
  });
});

describe('sign-up, invitations and the owner', () => {
  let ownerToken: string;
  before(async () => {
    ownerToken = (await signIn(owner.email, owner.password)).body.token;
  });

  test('invite mode: without a valid unused invitation for that very email, 403; with one, a member', async () => {
    const body = { email: 'invited@example.test', name: 'Ivy', password: 'invited password' };
    secrets.push(body.password);
    const none = await auth.call('POST', '/auth/v1/signup', { body });
    assert.deepEqual([none.status, none.body.error], [403, 'forbidden']);

    const m = await member();
    const byMember = await auth.call('POST', '/auth/v1/invites', { token: m.token, body: { email: body.email } });
    assert.deepEqual([byMember.status, byMember.body.error], [403, 'forbidden']);
    const invite = await auth.call('POST', '/auth/v1/invites', { token: ownerToken, body: { email: 'Invited@Example.test' } });
    assert.equal(invite.status, 201);
    secrets.push(invite.body.token);
    assert.equal(invite.body.email, 'invited@example.test');
    assert.ok(Date.parse(invite.body.expiresAt) > Date.now());

    const otherEmail = await auth.call('POST', '/auth/v1/signup', { body: { ...body, email: 'someone@example.test', inviteToken: invite.body.token } });
    assert.equal(otherEmail.status, 403);
    const bogus = await auth.call('POST', '/auth/v1/signup', { body: { ...body, inviteToken: 'fdi_nope' } });
    assert.equal(bogus.status, 403);
    const ok = await auth.call('POST', '/auth/v1/signup', { body: { ...body, inviteToken: invite.body.token } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    secrets.push(ok.body.token);
    assert.deepEqual([ok.body.user.email, ok.body.user.name, ok.body.user.role], ['invited@example.test', 'Ivy', 'member']);
    assert.equal((await current(ok.body.token)).status, 200);
    const reused = await auth.call('POST', '/auth/v1/signup', { body: { ...body, email: 'invited@example.test', inviteToken: invite.body.token } });
    assert.equal(reused.status, 403);
    const existing = await auth.call('POST', '/auth/v1/invites', { token: ownerToken, body: { email: 'invited@example.test' } });
    assert.equal(existing.status, 409);
  });

  test('an invitation past its lifetime (7 days) creates no account', async () => {
    const body = { email: 'late@example.test', name: 'Late', password: 'late password 12' };
    secrets.push(body.password);
    const invite = await auth.call('POST', '/auth/v1/invites', { token: ownerToken, body: { email: body.email } });
    assert.equal(invite.status, 201);
    secrets.push(invite.body.token);
    const expiresAt = Date.parse(invite.body.expiresAt);
    assert.ok(Math.abs(expiresAt - Date.now() - 7 * 86_400_000) < 60_000, invite.body.expiresAt);
    auth.setNow(new Date(expiresAt + 1000));
    const late = await auth.call('POST', '/auth/v1/signup', { body: { ...body, inviteToken: invite.body.token } });
    assert.deepEqual([late.status, late.body.error], [403, 'forbidden']);
    assert.equal(await auth.prisma.user.count({ where: { email: body.email } }), 0);
    // The same invitation a second before its end still works (so the refusal above was its age).
    auth.setNow(new Date(expiresAt - 1000));
    const inTime = await auth.call('POST', '/auth/v1/signup', { body: { ...body, inviteToken: invite.body.token } });
    assert.equal(inTime.status, 201, inTime.text);
    secrets.push(inTime.body.token);
  });

  test("owner-only routes refuse a member's API keys, write ones included; the owner's keys work (read to list, write to change)", async () => {
    const m = await member('Keyed Member');
    const memberWrite = await auth.newKey(m.id, 'mcp:write');
    const ownerId = (await current(ownerToken)).body.user.id as string;
    const ownerRead = await auth.newKey(ownerId, 'mcp:read');
    const ownerWrite = await auth.newKey(ownerId, 'mcp:write');
    secrets.push(memberWrite.secret, ownerRead.secret, ownerWrite.secret);
    const newUser = { email: 'by-key@example.test', name: 'By Key', password: 'by key password 1' };
    secrets.push(newUser.password);

    for (const [method, path, body] of [
      ['POST', '/auth/v1/invites', { email: 'via-member@example.test' }],
      ['GET', '/auth/v1/users'],
      ['POST', '/auth/v1/users', newUser],
      ['POST', `/auth/v1/users/${ownerId}/disable`],
    ] as [string, string, unknown?][]) {
      const res = await auth.call(method, path, { token: memberWrite.secret, body });
      assert.deepEqual([res.status, res.body.error], [403, 'forbidden'], `${method} ${path}: ${res.text}`);
    }
    assert.equal(await auth.prisma.invite.count({ where: { email: 'via-member@example.test' } }), 0);

    assert.equal((await auth.call('GET', '/auth/v1/users', { token: ownerRead.secret })).status, 200);
    assert.equal((await auth.call('POST', '/auth/v1/invites', { token: ownerRead.secret, body: { email: 'x@example.test' } })).status, 403);
    const invite = await auth.call('POST', '/auth/v1/invites', { token: ownerWrite.secret, body: { email: 'via-owner-key@example.test' } });
    assert.equal(invite.status, 201, invite.text);
    secrets.push(invite.body.token);
    assert.equal((await auth.call('POST', '/auth/v1/users', { token: ownerWrite.secret, body: newUser })).status, 201);
  });

  test('the owner lists users, adds and disables them; a disabled user loses every session, key and sign-in', async () => {
    const m = await member('Disabled Dan');
    const key = await auth.newKey(m.id, 'mcp:read');
    secrets.push(key.secret);
    const list = await auth.call('GET', '/auth/v1/users', { token: ownerToken });
    assert.equal(list.status, 200);
    const row = list.body.items.find((u: { id: string }) => u.id === m.id);
    assert.deepEqual(Object.keys(row).sort(), ['createdAt', 'disabled', 'email', 'id', 'name', 'role']);
    assert.deepEqual([row.name, row.role, row.disabled], ['Disabled Dan', 'member', false]);
    assert.equal((await auth.call('GET', '/auth/v1/users', { token: m.token })).status, 403);
    assert.equal((await auth.call('GET', '/auth/v1/users')).status, 401);

    published.length = 0;
    assert.equal((await auth.call('POST', `/auth/v1/users/${m.id}/disable`, { token: ownerToken })).status, 204);
    assert.equal((await current(m.token)).status, 401);
    assert.deepEqual((await auth.form('/oauth/introspect', { token: key.secret })).body, { active: false });
    assert.equal((await signIn(m.email, m.password)).status, 401);
    assert.deepEqual(published.map((e) => e.value.kind).sort(), ['api_key', 'console_session']);
    const listed = (await auth.call('GET', '/auth/v1/users', { token: ownerToken })).body.items.find((u: { id: string }) => u.id === m.id);
    assert.equal(listed.disabled, true);
    const self = (await current(ownerToken)).body.user.id;
    assert.equal((await auth.call('POST', `/auth/v1/users/${self}/disable`, { token: ownerToken })).status, 409, 'the owner cannot lock themself out');

    assert.equal((await auth.call('POST', `/auth/v1/users/${m.id}/enable`, { token: ownerToken })).status, 204);
    assert.equal((await signIn(m.email, m.password)).status, 201);
    assert.equal((await auth.form('/oauth/introspect', { token: key.secret })).body.active, true);

    const added = await auth.call('POST', '/auth/v1/users', {
      token: ownerToken,
      body: { email: 'added@example.test', name: 'Added', password: 'added password 1' },
    });
    assert.equal(added.status, 201);
    assert.deepEqual([added.body.role, added.body.disabled], ['member', false]);
    const dup = await auth.call('POST', '/auth/v1/users', {
      token: ownerToken,
      body: { email: 'added@example.test', name: 'Added', password: 'added password 1' },
    });
    assert.equal(dup.status, 409);
    const secondOwner = await auth.call('POST', '/auth/v1/users', {
      token: ownerToken,
      body: { email: 'o2@example.test', name: 'O2', password: 'added password 1', role: 'owner' },
    });
    assert.equal(secondOwner.status, 409);
  });
});

describe('sign-up modes', () => {
  test('open: anyone signs up as a member; off: nobody, even with an invitation', async () => {
    const [open, off] = await Promise.all([startTestAuth({ deps: { signupMode: 'open' } }), startTestAuth({ deps: { signupMode: 'off' } })]);
    try {
      assert.deepEqual((await open.call('GET', '/auth/v1/setup')).body, { needsOwner: true, signup: 'open' });
      const body = { email: 'new@example.test', name: 'New', password: 'a good password' };
      const res = await open.call('POST', '/auth/v1/signup', { body });
      assert.equal(res.status, 201);
      assert.equal(res.body.user.role, 'member');
      assert.equal((await open.call('POST', '/auth/v1/signup', { body })).status, 409);
      const weak = await open.call('POST', '/auth/v1/signup', { body: { ...body, email: 'x@example.test', password: 'short' } });
      assert.equal(weak.status, 400);

      const refused = await off.call('POST', '/auth/v1/signup', { body: { ...body, inviteToken: `fdi_${'a'.repeat(43)}` } });
      assert.deepEqual([refused.status, refused.body.error], [403, 'forbidden']);
      assert.equal((await off.call('GET', '/auth/v1/setup')).body.signup, 'off');
    } finally {
      await open.close();
      await off.close();
    }
  });
});

describe('configuration', () => {
  test('SIGNUP_MODE, SESSION_IDLE_TTL and SESSION_ABSOLUTE_TTL: defaults, units, and clear errors', async () => {
    const { parseSignupMode } = await import('../src/domain/accounts.ts');
    const { sessionPolicyFrom } = await import('../src/config.ts');
    assert.equal(parseSignupMode(undefined), 'invite');
    assert.equal(parseSignupMode('open'), 'open');
    assert.throws(() => parseSignupMode('maybe'), /SIGNUP_MODE must be open, invite or off/);
    assert.deepEqual(sessionPolicyFrom({}), { idleTtlMs: 7 * 86_400_000, absoluteTtlMs: 30 * 86_400_000 });
    assert.deepEqual(sessionPolicyFrom({ SESSION_IDLE_TTL: '30m', SESSION_ABSOLUTE_TTL: '12h' }), { idleTtlMs: 30 * 60_000, absoluteTtlMs: 12 * 3_600_000 });
    assert.deepEqual(sessionPolicyFrom({ SESSION_IDLE_TTL: '3600', SESSION_ABSOLUTE_TTL: '2d' }), { idleTtlMs: 3_600_000, absoluteTtlMs: 2 * 86_400_000 });
    assert.throws(() => sessionPolicyFrom({ SESSION_IDLE_TTL: '31d' }), /SESSION_IDLE_TTL must not be longer than SESSION_ABSOLUTE_TTL/);
    assert.throws(() => sessionPolicyFrom({ SESSION_ABSOLUTE_TTL: 'a month' }), /SESSION_ABSOLUTE_TTL must be a duration/);
  });
});
