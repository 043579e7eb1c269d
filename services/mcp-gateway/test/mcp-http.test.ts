// The MCP endpoint at the HTTP level: Streamable HTTP rules, sessions in the database (expiry with an
// injected clock, two gateway instances), bearer authentication and scopes, and clean logs.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { connectClient, initializeBody, openRawSession, rawMcp, startStack, type Stack, type TestUser } from './helpers/stack.ts';

let stack: Stack;
let user: TestUser;
let url: string;
const RESOURCE_METADATA = 'https://flowdesk.example.test/.well-known/oauth-protected-resource/functions/v1/mcp-server-v2';

before(async () => {
  stack = await startStack();
  user = await stack.newUser();
  url = stack.gatewayUrl;
});
after(async () => {
  await stack?.close();
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const ping = (id = 2) => ({ jsonrpc: '2.0', id, method: 'ping', params: {} });
const withSession = (key: string, session: string) => ({ ...bearer(key), 'mcp-session-id': session });

describe('Streamable HTTP', () => {
  test('initialize without a token: 200, a ≥128-bit Mcp-Session-Id, protocol 2025-06-18, JSON by default', async () => {
    const res = await rawMcp(url, initializeBody());
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(res.headers.get('mcp-session-id') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(res.body.result.protocolVersion, '2025-06-18');
    assert.equal(res.body.result.serverInfo.name, 'flowdesk');
  });
  test('a newer requested version gets 2025-06-18; an older supported one is echoed', async () => {
    assert.equal((await rawMcp(url, initializeBody('2099-01-01'))).body.result.protocolVersion, '2025-06-18');
    assert.equal((await rawMcp(url, initializeBody('2025-11-25'))).body.result.protocolVersion, '2025-06-18');
    assert.equal((await rawMcp(url, initializeBody('2025-03-26'))).body.result.protocolVersion, '2025-03-26');
  });
  test('Accept preferring SSE gets text/event-stream', async () => {
    const session = await openRawSession(url, user.readKey);
    const res = await rawMcp(url, ping(), { ...withSession(user.readKey, session), accept: 'text/event-stream, application/json' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.match(res.text, /event: message\ndata: \{"result":\{\},"jsonrpc":"2.0","id":2\}/);
  });
  test('notifications and responses: 202 with no body', async () => {
    const session = await openRawSession(url, user.readKey);
    const res = await rawMcp(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, withSession(user.readKey, session));
    assert.equal(res.status, 202);
    assert.equal(res.text, '');
    const response = await rawMcp(url, { jsonrpc: '2.0', id: 7, result: {} }, withSession(user.readKey, session));
    assert.equal(response.status, 202);
  });
  test('406 unless Accept lists JSON and SSE; 415 unless the body is JSON; 400 for bad JSON', async () => {
    for (const accept of ['application/json', 'text/event-stream', '*/*']) {
      assert.equal((await rawMcp(url, initializeBody(), { accept })).status, 406, accept);
    }
    assert.equal((await rawMcp(url, initializeBody(), { accept: null })).status, 406);
    assert.equal((await rawMcp(url, 'x=1', { 'content-type': 'application/x-www-form-urlencoded' })).status, 415);
    assert.equal((await rawMcp(url, 'hello', { 'content-type': 'text/plain' })).status, 415);
    const bad = await rawMcp(url, '{"jsonrpc": "2.0",');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, -32700);
    assert.equal((await rawMcp(url, { hello: 'world' })).body.error.code, -32600);
  });
  test('MCP-Protocol-Version: absent means 2025-03-26 (accepted), unsupported → 400', async () => {
    const session = await openRawSession(url, user.readKey);
    assert.equal((await rawMcp(url, ping(), { ...withSession(user.readKey, session), 'mcp-protocol-version': null })).status, 200);
    const bad = await rawMcp(url, ping(), { ...withSession(user.readKey, session), 'mcp-protocol-version': '1999-01-01' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /Unsupported MCP-Protocol-Version/);
  });
  test('missing session id → 400; unknown session id → 404', async () => {
    const missing = await rawMcp(url, ping(), bearer(user.readKey));
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /Mcp-Session-Id/);
    for (const id of ['x'.repeat(43), 'nonsense']) {
      const unknown = await rawMcp(url, ping(), withSession(user.readKey, id));
      assert.equal(unknown.status, 404, id);
      assert.equal(unknown.body.error.code, -32001);
    }
  });
  test('unknown method → -32601', async () => {
    const session = await openRawSession(url, user.readKey);
    const res = await rawMcp(url, { jsonrpc: '2.0', id: 3, method: 'tasks/explode', params: {} }, withSession(user.readKey, session));
    assert.equal(res.status, 200);
    assert.equal(res.body.error.code, -32601);
  });
  test('GET → 405 (no server stream); DELETE ends the session, after which it is 404', async () => {
    const get = await rawMcp(url, undefined, { accept: 'text/event-stream' }, 'GET');
    assert.equal(get.status, 405);
    assert.match(get.headers.get('allow') ?? '', /POST/);
    const session = await openRawSession(url, user.readKey);
    assert.equal((await rawMcp(url, undefined, withSession(user.readKey, session), 'DELETE')).status, 204);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, session))).status, 404);
    assert.equal((await rawMcp(url, undefined, withSession(user.readKey, session), 'DELETE')).status, 404);
  });
  test('an Origin outside the allowlist is refused (DNS rebinding); our own origin and none are fine', async () => {
    const evil = await rawMcp(url, initializeBody(), { origin: 'http://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal((await rawMcp(url, undefined, { origin: 'http://127.0.0.1:1' }, 'GET')).status, 403);
    assert.equal((await rawMcp(url, initializeBody(), { origin: 'https://flowdesk.example.test' })).status, 200);
  });
});

describe('sessions in the database', () => {
  test('59 minutes idle still works, 61 minutes idle → 404, and a new initialize works', async () => {
    const session = await openRawSession(url, user.readKey);
    stack.advance(59 * 60_000);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, session))).status, 200, '59 min idle');
    stack.advance(59 * 60_000);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, session))).status, 200, 'each use restarts the hour');
    stack.advance(61 * 60_000);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, session))).status, 404, '61 min idle');
    const fresh = await openRawSession(url, user.readKey);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, fresh))).status, 200);
  });
  test('two gateway instances on one database: a session moves between them, and DELETE on one ends it on both', async () => {
    const second = await stack.addGateway();
    const session = await openRawSession(url, user.readKey);
    assert.equal((await rawMcp(second, ping(), withSession(user.readKey, session))).status, 200);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, session))).status, 200);
    const { client } = await connectClient(url, user.writeKey);
    const list = await client.listTools();
    assert.equal(list.tools.length, 52);
    assert.equal((await rawMcp(second, undefined, withSession(user.readKey, session), 'DELETE')).status, 204);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, session))).status, 404);
    await client.close();
  });
  test('a session is bound to the credential that first used it: another token on it → 404', async () => {
    const other = await stack.newUser();
    const bound = await openRawSession(url, user.readKey);
    assert.equal((await rawMcp(url, ping(), withSession(other.readKey, bound))).status, 404, 'another user');
    assert.equal((await rawMcp(url, ping(), withSession(user.writeKey, bound))).status, 404, 'another key of the same user');
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, bound))).status, 200, 'the owner still can');
    const unbound = await openRawSession(url);
    assert.equal((await rawMcp(url, ping(), withSession(other.readKey, unbound))).status, 200, 'first use binds');
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, unbound))).status, 404);
  });
});

describe('authentication and scopes', () => {
  const toolCall = (name: string, args: object) => ({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name, arguments: args } });
  test('missing, wrong, truncated or malformed token → 401 with the body and the discovery header', async () => {
    const session = await openRawSession(url, user.readKey);
    const cases: Record<string, Record<string, string | null>> = {
      missing: { 'mcp-session-id': session },
      wrong: { ...withSession('fdk_' + 'A'.repeat(43 - 4), session) },
      truncated: { ...withSession(user.readKey.slice(0, -3), session) },
      'not bearer': { authorization: `Basic ${Buffer.from('a:b').toString('base64')}`, 'mcp-session-id': session },
      'bad initialize token': { authorization: 'Bearer nope' },
    };
    for (const [label, headers] of Object.entries(cases)) {
      const res = await rawMcp(url, label === 'bad initialize token' ? initializeBody() : ping(), headers);
      assert.equal(res.status, 401, label);
      assert.equal(res.body.error, 'unauthorized', label);
      assert.equal(typeof res.body.message, 'string');
      assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${RESOURCE_METADATA}"`, label);
    }
  });
  test('a revoked key → 401 once the 30-second introspection cache has passed', async () => {
    const victim = await stack.newUser();
    const session = await openRawSession(url, victim.writeKey);
    assert.equal((await rawMcp(url, ping(), withSession(victim.writeKey, session))).status, 200);
    await stack.revoke(victim.id, victim.writeKeyId);
    stack.advance(31_000);
    const res = await rawMcp(url, ping(), withSession(victim.writeKey, session));
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /resource_metadata=/);
  });
  test('a read key may call read tools; a write tool → HTTP 403 with the SPEC body and insufficient_scope', async () => {
    const session = await openRawSession(url, user.readKey);
    const read = await rawMcp(url, toolCall('list_projects', {}), withSession(user.readKey, session));
    assert.equal(read.status, 200);
    assert.equal(read.body.result.isError, undefined);
    const res = await rawMcp(url, toolCall('create_task', { title: 'x' }), withSession(user.readKey, session));
    assert.equal(res.status, 403);
    assert.deepEqual(Object.keys(res.body).sort(), ['error', 'message']);
    assert.equal(res.body.error, 'forbidden');
    assert.match(res.body.message, /requires the mcp:write scope/);
    assert.equal(res.headers.get('www-authenticate'), `Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="${RESOURCE_METADATA}"`);
    // Through the SDK client the 403 surfaces as an error, and nothing was written.
    const { client } = await connectClient(url, user.readKey);
    await assert.rejects(client.callTool({ name: 'delete_project', arguments: { projectId: '00000000-0000-4000-8000-000000000000' } }), (e: Error & { code?: number }) => e.code === 403 && /mcp:write scope/.test(e.message));
    const tasks = await client.callTool({ name: 'list_tasks', arguments: {} });
    assert.deepEqual((tasks.structuredContent as { items: unknown[] }).items, []);
    await client.close();
  });
  test('no credential, service secret or internal token ever appears in the logs', async () => {
    const { client } = await connectClient(url, user.writeKey);
    await client.callTool({ name: 'create_task', arguments: { title: 'logged?' } });
    await client.close();
    const logs = stack.logs.join('\n');
    assert.ok(logs.length > 0, 'the services did log');
    for (const secret of [user.readKey, user.writeKey, user.readKey.slice(4)]) assert.equal(logs.includes(secret), false);
    assert.doesNotMatch(logs, /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/, 'no JWT');
    assert.doesNotMatch(logs, /fdk_[A-Za-z0-9]{20,}/, 'no API key');
  });
});
