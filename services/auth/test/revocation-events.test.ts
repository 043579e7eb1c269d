// Every path that revokes a credential announces it once on CREDENTIAL_REVOKED_TOPIC, after the
// revocation committed, with ids and token hashes only; a bus that fails does not fail the revoke.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { CREDENTIAL_REVOKED_TOPIC, CredentialRevoked, type EventPublisher } from '@flowdesk/contracts';
import { Check, Errors } from 'typebox/value';
import { revocationNotifier } from '../src/domain/revocations.ts';
import { startTestAuth, type TestAuth } from './helpers/app.ts';
import { authorizationCode, obtainTokens, sha256, tokenRequest } from './helpers/oauth-flow.ts';

let auth: TestAuth;
let failing = false;
const published: { topic: string; key: string; value: any }[] = [];
const events: EventPublisher = {
  async publish(topic, messages) {
    if (failing) throw new Error('bus down');
    for (const m of messages) published.push({ topic, key: m.key, value: m.value });
  },
};
/** Every secret a test handled: none may appear in an event. */
const secrets: string[] = [];

before(async () => {
  auth = await startTestAuth({ events });
});
after(async () => {
  await auth.close();
});
beforeEach(() => {
  published.length = 0;
  failing = false;
  auth.setNow(undefined);
});

async function newUserWithKey() {
  const user = await auth.newUser();
  const key = await auth.newKey(user.id, 'mcp:write');
  secrets.push(user.password, key.secret);
  return { user, key };
}
async function tokensFor(user: { email: string; password: string }, clientId?: string) {
  const t = await obtainTokens(auth.baseUrl, user, clientId);
  secrets.push(t.access, t.refresh);
  return t;
}
/** The one event published since the test began, checked against the contract. */
function onlyEvent() {
  assert.equal(published.length, 1, JSON.stringify(published));
  const [e] = published;
  assert.equal(e!.topic, CREDENTIAL_REVOKED_TOPIC);
  assert.ok(Check(CredentialRevoked, e!.value), JSON.stringify([...Errors(CredentialRevoked, e!.value)]));
  assert.equal(e!.key, e!.value.userId, 'keyed by user');
  const text = JSON.stringify(e);
  for (const s of secrets) assert.ok(!text.includes(s), 'an event carries a secret');
  return e!.value;
}
const grantIdOf = async (key: string, clientName = 'Revocation test client') => {
  const items = (await auth.call('GET', '/auth/v1/connected-apps', { token: key })).body.items as { id: string; type: string; name: string }[];
  return items.find((i) => i.type === 'oauth_client' && i.name === clientName)!.id;
};

describe('API keys', () => {
  test('DELETE /auth/v1/api-keys/:id → one api_key event naming the key id (introspection client_id)', async () => {
    const { user, key } = await newUserWithKey();
    const other = await auth.newKey(user.id, 'mcp:read');
    assert.equal((await auth.call('DELETE', `/auth/v1/api-keys/${other.id}`, { token: key.secret })).status, 204);
    const e = onlyEvent();
    assert.deepEqual(
      { kind: e.kind, userId: e.userId, clientId: e.clientId, tokenSha256: e.tokenSha256 },
      { kind: 'api_key', userId: user.id, clientId: other.id, tokenSha256: undefined },
    );
    assert.equal((await auth.form('/oauth/introspect', { token: other.secret })).body.active, false);
    // Already revoked: 404 and nothing announced.
    published.length = 0;
    assert.equal((await auth.call('DELETE', `/auth/v1/api-keys/${other.id}`, { token: key.secret })).status, 404);
    assert.equal(published.length, 0);
  });

  test('Connected Apps revoke of a key → one api_key event', async () => {
    const { user, key } = await newUserWithKey();
    const other = await auth.newKey(user.id, 'mcp:read');
    assert.equal((await auth.call('DELETE', `/auth/v1/connected-apps/${other.id}`, { token: key.secret })).status, 204);
    const e = onlyEvent();
    assert.equal(e.kind, 'api_key');
    assert.equal(e.clientId, other.id);
    assert.equal(e.userId, user.id);
  });

  test('a bus that fails: the revoke still answers 204 and holds; the failure is logged with ids only', async () => {
    const { user, key } = await newUserWithKey();
    const other = await auth.newKey(user.id, 'mcp:read');
    failing = true;
    assert.equal((await auth.call('DELETE', `/auth/v1/api-keys/${other.id}`, { token: key.secret })).status, 204);
    assert.equal((await auth.form('/oauth/introspect', { token: other.secret })).body.active, false);
    const line = auth.logs.find((l) => l.includes('credential revocation NOT published') && l.includes(other.id));
    assert.ok(line, 'error logged');
    assert.equal(JSON.parse(line).level, 50);
    assert.ok(!line.includes(other.secret));
  });
});

describe('OAuth', () => {
  test('Disconnect → one oauth_grant event naming the user and the OAuth client id', async () => {
    const { user, key } = await newUserWithKey();
    const t = await tokensFor(user);
    const grantId = await grantIdOf(key.secret);
    assert.equal((await auth.call('DELETE', `/auth/v1/connected-apps/${grantId}`, { token: key.secret })).status, 204);
    const e = onlyEvent();
    assert.deepEqual({ kind: e.kind, userId: e.userId, clientId: e.clientId }, { kind: 'oauth_grant', userId: user.id, clientId: t.clientId });
    assert.equal(e.tokenSha256, undefined);
    assert.equal((await auth.form('/oauth/introspect', { token: t.access })).body.active, false);
  });

  test('RFC 7009, access token → one oauth_tokens event with exactly its hash; a second revoke announces nothing', async () => {
    const { user } = await newUserWithKey();
    const t = await tokensFor(user);
    assert.equal((await tokenRequest(auth.baseUrl, { token: t.access, client_id: t.clientId }, '/oauth/revoke')).status, 200);
    const e = onlyEvent();
    assert.deepEqual(
      { kind: e.kind, userId: e.userId, clientId: e.clientId, tokenSha256: e.tokenSha256 },
      { kind: 'oauth_tokens', userId: user.id, clientId: t.clientId, tokenSha256: [sha256(t.access)] },
    );
    published.length = 0;
    await tokenRequest(auth.baseUrl, { token: t.access, client_id: t.clientId }, '/oauth/revoke');
    assert.equal(published.length, 0);
  });

  test('RFC 7009, refresh token → one oauth_tokens event with the live access tokens of its family', async () => {
    const { user } = await newUserWithKey();
    const t = await tokensFor(user);
    const refreshed = await tokenRequest(auth.baseUrl, { grant_type: 'refresh_token', refresh_token: t.refresh, client_id: t.clientId });
    assert.equal(refreshed.status, 200);
    secrets.push(refreshed.body.access_token, refreshed.body.refresh_token);
    // Another family of the same grant must not be named.
    const sibling = await tokensFor(user, t.clientId);
    assert.equal((await tokenRequest(auth.baseUrl, { token: refreshed.body.refresh_token, client_id: t.clientId }, '/oauth/revoke')).status, 200);
    const e = onlyEvent();
    assert.equal(e.kind, 'oauth_tokens');
    assert.deepEqual(new Set(e.tokenSha256), new Set([sha256(t.access), sha256(refreshed.body.access_token)]));
    assert.ok(!e.tokenSha256!.includes(sha256(sibling.access)));
    assert.equal((await auth.form('/oauth/introspect', { token: sibling.access })).body.active, true);
  });

  test('a replayed refresh token revokes the grant → one oauth_grant event', async () => {
    const { user } = await newUserWithKey();
    const t = await tokensFor(user);
    const first = await tokenRequest(auth.baseUrl, { grant_type: 'refresh_token', refresh_token: t.refresh, client_id: t.clientId });
    assert.equal(first.status, 200);
    secrets.push(first.body.access_token, first.body.refresh_token);
    auth.setNow(new Date(Date.now() + 60_000)); // past the 5-second reuse grace
    const replay = await tokenRequest(auth.baseUrl, { grant_type: 'refresh_token', refresh_token: t.refresh, client_id: t.clientId });
    assert.equal(replay.body.error, 'invalid_grant');
    const e = onlyEvent();
    assert.deepEqual({ kind: e.kind, userId: e.userId, clientId: e.clientId }, { kind: 'oauth_grant', userId: user.id, clientId: t.clientId });
  });

  test('a reused authorization code revokes what it issued → one oauth_tokens event', async () => {
    const { user } = await newUserWithKey();
    const code = await authorizationCode(auth.baseUrl, user);
    secrets.push(code.code);
    const first = await tokenRequest(auth.baseUrl, code.fields);
    assert.equal(first.status, 200);
    secrets.push(first.body.access_token, first.body.refresh_token);
    const again = await tokenRequest(auth.baseUrl, code.fields);
    assert.equal(again.body.error, 'invalid_grant');
    const e = onlyEvent();
    assert.equal(e.kind, 'oauth_tokens');
    assert.deepEqual(e.tokenSha256, [sha256(first.body.access_token)]);
  });
});

test('a bus that hangs: the notifier gives up after its timeout and logs an error, so a revoke never hangs', async () => {
  const errors: object[] = [];
  const notify = revocationNotifier({ publish: () => new Promise(() => {}) }, { error: (o) => void errors.push(o), debug: () => {} }, 50);
  const started = Date.now();
  await notify({ userId: '00000000-0000-4000-8000-000000000001', kind: 'api_key', clientId: 'k', revokedAt: new Date() });
  assert.ok(Date.now() - started < 1_000);
  assert.equal(errors.length, 1);
  assert.match(JSON.stringify(errors[0]), /within 50 ms/);
});
