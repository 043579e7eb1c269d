// Revocation events end the gateway's 30-second introspection cache for exactly the revoked
// credential: the very next MCP request after a revoke or Disconnect gets 401, on every gateway
// replica, while other credentials stay cached.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openRawSession, rawMcp, startStack, type Stack, type TestUser } from './helpers/stack.ts';
import { obtainTokens } from '@flowdesk/auth/testing';

let stack: Stack;
let gateways: string[];
const RESOURCE_METADATA = 'https://flowdesk.example.test/.well-known/oauth-protected-resource/functions/v1/mcp-server-v2';
/** revoke answered → eviction logged, per revocation (ms, from the services' log timestamps). */
const latencies: number[] = [];
/** revokedAt (auth, before its transaction) → eviction (gateway), as the gateway logs it. */
const lags: number[] = [];
/** The same through the bus alone (what a gateway in another process gets). */
const busLags: number[] = [];

before(async () => {
  stack = await startStack();
  // Two replicas on one bus: each is its own consumer group, so each evicts.
  gateways = [stack.gatewayUrl, await stack.addGateway()];
});
after(async () => {
  if (latencies.length) {
    console.log(`# revoke answered → gateway evicted (ms, negative: evicted before the answer arrived): ${latencies.join(', ')}`);
    console.log(`# revokedAt → gateway evicted, in-process echo (ms): ${lags.join(', ')}`);
    console.log(`# revokedAt → bus delivery handled (ms): ${busLags.join(', ')}`);
  }
  await stack?.close();
});

const ping = { jsonrpc: '2.0', id: 2, method: 'ping', params: {} };
const listTools = { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} };
const call = (url: string, token: string, session: string, body: unknown = ping) =>
  rawMcp(url, body, { authorization: `Bearer ${token}`, 'mcp-session-id': session });
const introspections = () => stack.logs.filter((l) => l.includes('/oauth/introspect') && l.includes('incoming request')).length;
const authApi = (method: string, path: string, key: string) =>
  fetch(`${stack.authUrl}/auth/v1${path}`, { method, headers: { authorization: `Bearer ${key}` } });

function assertUnauthorized(res: Awaited<ReturnType<typeof rawMcp>>, what: string) {
  assert.equal(res.status, 401, `${what}: ${res.text}`);
  assert.equal(res.body.error, 'unauthorized');
  assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${RESOURCE_METADATA}"`, what);
}

/** When the eviction of `credentialId` was logged, relative to `answeredAt` (epoch ms). */
function recordLatency(answeredAt: number, userId: string) {
  const lines = stack.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'evicted a revoked credential' && l.userId === userId);
  assert.equal(lines.length, gateways.length, 'every replica evicted');
  for (const l of lines) {
    latencies.push(l.time - answeredAt);
    lags.push(l.lagMs);
  }
}

/** Waits (test bookkeeping only, after the assertions) for the bus deliveries and records their lag. */
async function recordBusLag(userId: string) {
  const delivered = () => stack.logs.map((l) => JSON.parse(l)).filter((l) => l.userId === userId && l.inProcess === false && /credential/.test(l.msg));
  for (let i = 0; i < 200 && delivered().length < gateways.length; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(delivered().length, gateways.length, 'the bus delivered to every replica too');
  for (const l of delivered()) busLags.push(l.lagMs);
}

/** A credential in use on every gateway: a session each and a successful call, so it is cached as active. */
async function warm(token: string) {
  const sessions: string[] = [];
  for (const url of gateways) {
    const session = await openRawSession(url, token);
    assert.equal((await call(url, token, session, listTools)).status, 200);
    sessions.push(session);
  }
  return sessions;
}

describe('with the default 30-second introspection cache', () => {
  let other: TestUser;
  let otherSessions: string[];
  before(async () => {
    // "Still cached" below must mean not evicted, not "the 30 s ran out while a loaded machine was slow".
    stack.freezeClock();
    other = await stack.newUser();
    otherSessions = await warm(other.readKey);
  });

  test('an API key revoked through the key API: the very next request gets 401 on every replica', async () => {
    const user = await stack.newUser();
    const sessions = await warm(user.writeKey);
    const sibling = await warm(user.readKey); // same user, another key: must stay cached
    const before = introspections();
    assert.equal((await call(gateways[0]!, user.writeKey, sessions[0]!)).status, 200, 'served from the cache');
    assert.equal(introspections(), before);

    const res = await authApi('DELETE', `/api-keys/${user.writeKeyId}`, user.writeKey);
    const answeredAt = Date.now();
    assert.equal(res.status, 204);
    // Immediately, no wait, no retry.
    for (const [i, url] of gateways.entries()) assertUnauthorized(await call(url, user.writeKey, sessions[i]!), `gateway ${i}`);
    recordLatency(answeredAt, user.id);
    await recordBusLag(user.id);

    // No over-eviction: the user's other key and another user's key are still answered from the cache.
    const cached = introspections();
    for (const [i, url] of gateways.entries()) {
      assert.equal((await call(url, user.readKey, sibling[i]!)).status, 200);
      assert.equal((await call(url, other.readKey, otherSessions[i]!)).status, 200);
    }
    assert.equal(introspections(), cached, 'no introspection: still cached');
  });

  test('an OAuth grant disconnected through Connected Apps: the very next request with its token gets 401', async () => {
    const user = await stack.newUser();
    const tokens = await obtainTokens(stack.authUrl, user);
    const sessions = await warm(tokens.access);
    // The same user's API key stays cached.
    const keySessions = await warm(user.readKey);
    const apps = (await (await authApi('GET', '/connected-apps', user.writeKey)).json()) as { items: { id: string; type: string }[] };
    const grant = apps.items.find((i) => i.type === 'oauth_client')!;

    const res = await authApi('DELETE', `/connected-apps/${grant.id}`, user.writeKey);
    const answeredAt = Date.now();
    assert.equal(res.status, 204);
    for (const [i, url] of gateways.entries()) assertUnauthorized(await call(url, tokens.access, sessions[i]!), `gateway ${i}`);
    recordLatency(answeredAt, user.id);
    await recordBusLag(user.id);

    const cached = introspections();
    for (const [i, url] of gateways.entries()) {
      assert.equal((await call(url, user.readKey, keySessions[i]!)).status, 200);
      assert.equal((await call(url, other.readKey, otherSessions[i]!)).status, 200);
    }
    assert.equal(introspections(), cached, 'no introspection: still cached');
  });

  test('RFC 7009 revocation of one access token: that token 401 at once, a sibling token of the same grant still cached', async () => {
    const user = await stack.newUser();
    const first = await obtainTokens(stack.authUrl, user);
    const second = await obtainTokens(stack.authUrl, user, first.clientId); // same grant, another family
    const sessions = await warm(first.access);
    const siblingSessions = await warm(second.access);
    const res = await fetch(`${stack.authUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: first.access, client_id: first.clientId }),
    });
    assert.equal(res.status, 200);
    for (const [i, url] of gateways.entries()) assertUnauthorized(await call(url, first.access, sessions[i]!), `gateway ${i}`);
    const cached = introspections();
    for (const [i, url] of gateways.entries()) assert.equal((await call(url, second.access, siblingSessions[i]!)).status, 200);
    assert.equal(introspections(), cached);
  });
});
