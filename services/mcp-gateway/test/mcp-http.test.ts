// The MCP endpoint at the HTTP level: Streamable HTTP rules, sessions in the database (expiry with an
// injected clock, two gateway instances), bearer authentication and scopes, and clean logs.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { TOOLS } from '@flowdesk/contracts';
import { listen } from '@flowdesk/service-kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp as buildGateway } from '../src/app.ts';
import { launchChromium } from './helpers/browser.ts';
import {
  MCP_PATH,
  connectClient,
  initializeBody,
  openRawSession,
  rawMcp,
  standaloneGatewayDeps,
  startStack,
  type Stack,
  type TestUser,
} from './helpers/stack.ts';

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
  test('a newer or unknown requested version gets 2025-11-25; a supported one is echoed', async () => {
    assert.equal((await rawMcp(url, initializeBody('2099-01-01'))).body.result.protocolVersion, '2025-11-25');
    assert.equal((await rawMcp(url, initializeBody('2025-11-25'))).body.result.protocolVersion, '2025-11-25');
    assert.equal((await rawMcp(url, initializeBody('2025-06-18'))).body.result.protocolVersion, '2025-06-18');
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
  test('MCP-Protocol-Version: absent means the session’s negotiated version (accepted), unsupported → 400', async () => {
    const session = await openRawSession(url, user.readKey);
    assert.equal((await rawMcp(url, ping(), { ...withSession(user.readKey, session), 'mcp-protocol-version': null })).status, 200);
    // Absent is not 2025-03-26 on a 2025-06-18 session: no batches.
    const batch = await rawMcp(url, [ping(1), ping(2)], { ...withSession(user.readKey, session), 'mcp-protocol-version': null });
    assert.equal(batch.status, 400);
    assert.equal(batch.body.error.code, -32600);
    const bad = await rawMcp(url, ping(), { ...withSession(user.readKey, session), 'mcp-protocol-version': '1999-01-01' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /Unsupported MCP-Protocol-Version/);
  });
  test('the negotiated version holds for the whole session: another revision in MCP-Protocol-Version → 400 (2025-06-18 on), ignored on older sessions', async () => {
    const open = async (version: string) => {
      const init = await rawMcp(url, initializeBody(version), bearer(user.readKey));
      assert.equal(init.body.result.protocolVersion, version);
      return init.headers.get('mcp-session-id')!;
    };
    const modern = await open('2025-11-25');
    // A 2025-11-25 session naming 2025-03-26 got batches back; now the header is refused.
    for (const body of [[ping(1), ping(2)], ping(3)]) {
      const res = await rawMcp(url, body, { ...withSession(user.readKey, modern), 'mcp-protocol-version': '2025-03-26' });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.error.message, /MCP-Protocol-Version 2025-03-26 does not match this session's negotiated version 2025-11-25/);
    }
    const under0618 = await rawMcp(url, ping(4), { ...withSession(user.readKey, modern), 'mcp-protocol-version': '2025-06-18' });
    assert.equal(under0618.status, 400);
    // The negotiated revision's rules apply without the header too: invalid arguments are a tool error (SEP-1303) …
    const call = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'get_task', arguments: { taskId: 'not-a-uuid' } } };
    const asTool = await rawMcp(url, call, { ...withSession(user.readKey, modern), 'mcp-protocol-version': null });
    assert.equal(asTool.status, 200);
    assert.equal(asTool.body.result.isError, true);
    // … and a 2025-06-18 session cannot get them by claiming 2025-11-25.
    const older = await open('2025-06-18');
    const claimed = await rawMcp(url, call, { ...withSession(user.readKey, older), 'mcp-protocol-version': '2025-11-25' });
    assert.equal(claimed.status, 400);
    assert.equal((await rawMcp(url, call, withSession(user.readKey, older))).body.error.code, -32602);
    // 2025-03-26 defines no header: on its sessions a newer one is ignored and batching stays.
    const legacy = await open('2025-03-26');
    const ignored = await rawMcp(url, [ping(6), ping(7)], { ...withSession(user.readKey, legacy), 'mcp-protocol-version': '2025-11-25' });
    assert.equal(ignored.status, 200);
    assert.equal(ignored.body.length, 2);
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
  test('GET with a token → 405 (no server stream); DELETE ends the session, after which it is 404', async () => {
    const get = await rawMcp(url, undefined, { accept: 'text/event-stream', ...bearer(user.readKey) }, 'GET');
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
    assert.equal(list.tools.length, TOOLS.length);
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
  test('a web console session token is no credential at the MCP endpoint (introspection answers inactive to the gateway) → 401', async () => {
    const signIn = await fetch(`${stack.authUrl}/auth/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    assert.equal(signIn.status, 201);
    const { token } = (await signIn.json()) as { token: string };
    assert.match(token, /^fds_/);
    // A session just signed in, so live; a cookie credential of the console only: even auth's /auth/v1
    // takes it as a bearer only beside the console edge's own credential (docs/auth.md) ...
    const current = await fetch(`${stack.authUrl}/auth/v1/sessions/current`, { headers: bearer(token) });
    assert.equal(current.status, 401);
    // ... and the MCP endpoint refuses it, for initialize and for a call in a session.
    const init = await rawMcp(url, initializeBody(), bearer(token));
    assert.equal(init.status, 401, init.text);
    const session = await openRawSession(url, user.readKey);
    const res = await rawMcp(url, ping(), withSession(token, session));
    assert.equal(res.status, 401);
    assert.equal(res.body.error, 'unauthorized');
    assert.ok(!stack.logs.join('\n').includes(token), 'the session token reached a log');
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
  test('a read key may call read tools; a write tool → HTTP 403 with the error body and no step-up challenge (an API key cannot step up)', async () => {
    const session = await openRawSession(url, user.readKey);
    const read = await rawMcp(url, toolCall('list_projects', {}), withSession(user.readKey, session));
    assert.equal(read.status, 200);
    assert.equal(read.body.result.isError, undefined);
    const res = await rawMcp(url, toolCall('create_task', { title: 'x' }), withSession(user.readKey, session));
    assert.equal(res.status, 403);
    assert.deepEqual(Object.keys(res.body).sort(), ['error', 'message']);
    assert.equal(res.body.error, 'forbidden');
    assert.match(res.body.message, /requires the mcp:write scope/);
    // OAuth access tokens keep the insufficient_scope challenge (oauth-e2e.test.ts); an API key gets none.
    assert.equal(res.headers.get('www-authenticate'), null);
    // Through the SDK client the 403 surfaces as an error, and nothing was written.
    const { client } = await connectClient(url, user.readKey);
    await assert.rejects(
      client.callTool({ name: 'delete_project', arguments: { projectId: '00000000-0000-4000-8000-000000000000' } }),
      (e: Error & { code?: number }) => e.code === 403 && /mcp:write scope/.test(e.message),
    );
    const tasks = await client.callTool({ name: 'list_tasks', arguments: {} });
    assert.deepEqual((tasks.structuredContent as { items: unknown[] }).items, []);
    await client.close();
  });
  test('a client holding a read API key and an OAuth provider (as mcp-remote does) meets the 403 and starts no OAuth flow', async () => {
    // mcp-remote passes `--header "Authorization: Bearer <key>"` and always has an auth provider: the
    // step-up challenge used to send it through discovery and registration to a consent page that
    // cannot widen an API key. Every request it makes is recorded; none may leave the MCP endpoint.
    const requested: string[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const target = new URL(input instanceof Request ? input.url : String(input));
      requested.push(`${init?.method ?? 'GET'} ${target.pathname}`);
      if (target.origin !== new URL(url).origin) throw new Error(`the client left the MCP endpoint for ${target.href}`);
      return fetch(input, init);
    };
    const oauthCalls: string[] = [];
    const provider: OAuthClientProvider = {
      redirectUrl: 'http://127.0.0.1:1/callback',
      clientMetadata: { client_name: 'mcp-remote-like', redirect_uris: ['http://127.0.0.1:1/callback'] },
      clientInformation: () => undefined,
      saveClientInformation: () => void oauthCalls.push('saveClientInformation'),
      tokens: () => undefined,
      saveTokens: () => void oauthCalls.push('saveTokens'),
      redirectToAuthorization: () => void oauthCalls.push('redirectToAuthorization'),
      saveCodeVerifier: () => void oauthCalls.push('saveCodeVerifier'),
      codeVerifier: () => '',
    };
    const client = new Client({ name: 'mcp-remote-like', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}${MCP_PATH}`), {
        authProvider: provider,
        requestInit: { headers: bearer(user.readKey) },
        fetch: recordingFetch,
      }),
    );
    try {
      requested.length = 0;
      await assert.rejects(
        client.callTool({ name: 'create_task', arguments: { title: 'x' } }),
        (e: Error & { code?: number }) => e.code === 403 && /mcp:write scope/.test(e.message),
      );
      assert.deepEqual(requested, [`POST ${MCP_PATH}`], 'one request, no discovery');
      assert.deepEqual(oauthCalls, [], 'no registration, no authorization');
    } finally {
      await client.close();
    }
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

// What an outside test of the running gateway found (issue 12): anonymous initialize floods, GET probes
// without a token, JSON-RPC edge cases, text Postgres cannot store, and browser clients (CORS).
const pingWithId = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'ping', params: {} });
const rawToolCall = (name: string, args: unknown, id = 9) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe('requests without a token', () => {
  test('GET, DELETE and any non-initialize POST without a token → 401 with the challenge (mcp-remote starts OAuth on it)', async () => {
    const get = await rawMcp(url, undefined, { accept: 'text/event-stream' }, 'GET');
    assert.equal(get.status, 401);
    assert.equal(get.headers.get('www-authenticate'), `Bearer resource_metadata="${RESOURCE_METADATA}"`);
    assert.equal(get.body.error, 'unauthorized');
    const session = await openRawSession(url);
    assert.equal((await rawMcp(url, undefined, { 'mcp-session-id': session }, 'DELETE')).status, 401);
    const list = await rawMcp(url, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, { 'mcp-session-id': session });
    assert.equal(list.status, 401);
    assert.match(list.headers.get('www-authenticate') ?? '', /resource_metadata=/);
    // initialize stays open (docs/mcp-gateway.md, "Authentication").
    assert.equal((await rawMcp(url, initializeBody())).status, 200);
  });

  test('without a token, the 401 challenge comes before the protocol-version and batch checks; initialize alone stays open', async () => {
    const session = await openRawSession(url);
    const list = (id = 3) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
    for (const [what, body, headers] of [
      ['an unsupported MCP-Protocol-Version', list(), { 'mcp-session-id': session, 'mcp-protocol-version': '2024-10-07' }],
      ['a nonsense MCP-Protocol-Version', list(), { 'mcp-session-id': session, 'mcp-protocol-version': 'x' }],
      ['no MCP-Protocol-Version', list(), { 'mcp-session-id': session, 'mcp-protocol-version': null }],
      ['a batch under 2025-06-18', [list(3), list(4)], { 'mcp-session-id': session }],
      ['a batch without a session', [list(3), list(4)], {}],
      ['a notification with an unsupported version', { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': '1999-01-01' }],
    ] as const) {
      const res = await rawMcp(url, body, headers);
      assert.equal(res.status, 401, `${what}: ${res.text}`);
      assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${RESOURCE_METADATA}"`, what);
      assert.equal(res.body.error, 'unauthorized', what);
    }
    // With a token the same requests still meet those checks.
    assert.equal((await rawMcp(url, list(), { ...withSession(user.readKey, session), 'mcp-protocol-version': '2024-10-07' })).status, 400);
    const batch = await rawMcp(url, [list(3), list(4)], withSession(user.readKey, session));
    assert.equal(batch.status, 400);
    assert.equal(batch.body.error.code, -32600);
    // initialize needs no token, whatever version it asks for; in a batch with anything else it is 400.
    for (const version of ['2025-06-18', '2025-11-25', '1999-01-01'])
      assert.equal((await rawMcp(url, initializeBody(version), { 'mcp-protocol-version': null })).status, 200, version);
    assert.equal((await rawMcp(url, [initializeBody(), list()])).status, 400);
  });

  test('a session nobody used with a token expires after 5 minutes; once bound it has the hour', async () => {
    const stale = await openRawSession(url);
    const fresh = await openRawSession(url);
    stack.advance(4 * 60_000);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, fresh))).status, 200, 'bound at 4 minutes');
    stack.advance(2 * 60_000);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, stale))).status, 404, 'unbound for 6 minutes');
    stack.advance(30 * 60_000);
    assert.equal((await rawMcp(url, ping(), withSession(user.readKey, fresh))).status, 200, 'bound: the idle hour applies');
  });

  test('initialize without a token is limited per client address: 429 with Retry-After', async () => {
    const gw = await buildGateway(standaloneGatewayDeps(stack.db, { anonymousInitializeLimit: { max: 3, windowMs: 60_000 } }));
    const gwUrl = await listen(gw, 0, '127.0.0.1');
    try {
      for (let i = 0; i < 3; i++) assert.equal((await rawMcp(gwUrl, initializeBody())).status, 200, `initialize ${i + 1}`);
      const refused = await rawMcp(gwUrl, initializeBody());
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error, 'rate_limited');
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
    } finally {
      await gw.close();
    }
  });
});

describe('JSON-RPC edge cases', () => {
  test('a batch in a 2025-06-18 session → -32600; in a 2025-03-26 session batching still works', async () => {
    const session = await openRawSession(url, user.readKey);
    const batch = [ping(1), ping(2)];
    const refused = await rawMcp(url, batch, withSession(user.readKey, session));
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, -32600);
    assert.match(refused.body.error.message, /batch/);
    const legacy = (await rawMcp(url, initializeBody('2025-03-26'), bearer(user.readKey))).headers.get('mcp-session-id')!;
    const old = await rawMcp(url, batch, { ...withSession(user.readKey, legacy), 'mcp-protocol-version': '2025-03-26' });
    assert.equal(old.status, 200);
    assert.equal(old.body.length, 2);
  });

  test('id: null → -32600 Invalid Request (not a parse error)', async () => {
    const session = await openRawSession(url, user.readKey);
    const res = await rawMcp(url, pingWithId(null), withSession(user.readKey, session));
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, -32600);
    assert.match(res.body.error.message, /id must be a string or a number/);
  });

  test('arguments that are not an object → -32602 with a plain message', async () => {
    const session = await openRawSession(url, user.readKey);
    for (const args of ['x', [1], 5, null]) {
      const res = await rawMcp(url, rawToolCall('list_projects', args), withSession(user.readKey, session));
      assert.equal(res.status, 200, JSON.stringify(args));
      assert.equal(res.body.id, 9);
      assert.equal(res.body.error.code, -32602, JSON.stringify(args));
      assert.match(res.body.error.message, /^Invalid params: arguments must be an object/);
    }
  });

  test('error messages on the wire carry no "MCP error <code>: " prefix (the client adds its own): raw, and once through the SDK client', async () => {
    const session = await openRawSession(url, user.readKey);
    for (const [body, code, message] of [
      [rawToolCall('list_projects', { colour: 1 }), -32602, /^Invalid arguments for tool list_projects: colour is not a known property/],
      [rawToolCall('no_such_tool', {}), -32602, /^Unknown tool: no_such_tool$/],
      [
        { jsonrpc: '2.0', id: 9, method: 'resources/read', params: { uri: 'flowdesk://nothing/here' } },
        -32002,
        /^Resource not found: flowdesk:\/\/nothing\/here$/,
      ],
      [{ jsonrpc: '2.0', id: 9, method: 'prompts/get', params: { name: 'no_such_prompt' } }, -32602, /^Unknown prompt: no_such_prompt$/],
    ] as const) {
      const res = await rawMcp(url, body, withSession(user.readKey, session));
      assert.equal(res.status, 200);
      assert.equal(res.body.id, 9);
      assert.equal(res.body.error.code, code);
      assert.match(res.body.error.message, message);
    }
    const { client } = await connectClient(url, user.readKey);
    try {
      await assert.rejects(
        client.callTool({ name: 'no_such_tool', arguments: {} }),
        (e: Error) => e.message === 'MCP error -32602: Unknown tool: no_such_tool',
      );
    } finally {
      await client.close();
    }
  });

  test("HTTP-level JSON-RPC errors answer the request's id when it is known (null only when it is not)", async () => {
    const session = await openRawSession(url, user.readKey);
    const list = { jsonrpc: '2.0', id: 'req-7', method: 'tools/list' };
    for (const [what, body, headers, status] of [
      ['unknown session', list, withSession(user.readKey, 'x'.repeat(43)), 404],
      ['no session id', list, bearer(user.readKey), 400],
      ['unsupported MCP-Protocol-Version', list, { ...withSession(user.readKey, session), 'mcp-protocol-version': '1999-01-01' }, 400],
      ['Accept without SSE', list, { ...withSession(user.readKey, session), accept: 'application/json' }, 406],
      ['params not an object', { ...list, params: [] }, withSession(user.readKey, session), 400],
    ] as const) {
      const res = await rawMcp(url, body, headers);
      assert.equal(res.status, status, `${what}: ${res.text}`);
      assert.equal(res.body.id, 'req-7', what);
    }
    const numeric = await rawMcp(url, ping(42), withSession(user.readKey, 'x'.repeat(43)));
    assert.equal(numeric.body.id, 42);
    // Not known: a body that is not JSON, a batch, a notification.
    assert.equal((await rawMcp(url, '{"id": 5,', withSession(user.readKey, session))).body.id, null);
    assert.equal((await rawMcp(url, [ping(1), ping(2)], withSession(user.readKey, session))).body.id, null);
    assert.equal((await rawMcp(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, withSession(user.readKey, 'x'.repeat(43)))).body.id, null);
  });

  test('validation messages name the property (a tool error from 2025-11-25 on, which the SDK 1.x client negotiates)', async () => {
    const { client } = await connectClient(url, user.writeKey);
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const res = await client.callTool({ name, arguments: args });
        assert.equal(res.isError, true, `${name} succeeded`);
        return { message: (res.content as { text: string }[])[0]!.text };
      };
      const extra = await call('create_project', { name: 'p', colour: '#ff0000' });
      assert.match(extra.message, /colour is not a known property/);
      assert.match((await call('create_task', {})).message, /title is required/);
      assert.match((await call('update_task', { taskId: '00000000-0000-4000-8000-000000000000', status: 'someday' })).message, /status must be one of: "todo"/);
      assert.match((await call('get_upcoming', { days: 40 })).message, /days must be <= 31/);
      assert.match((await call('update_project', { projectId: 'nope', name: 'x' })).message, /projectId must match format "uuid"/);
    } finally {
      await client.close();
    }
  });

  test('NUL or a lone surrogate in any argument → a tool error naming the field (2025-11-25), nothing stored', async () => {
    const { client } = await connectClient(url, user.writeKey);
    try {
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ['create_project', { name: 'a\u0000b' }, /name must not contain the NUL character/],
        ['create_task', { title: 'ok', notes: 'x\ud800y' }, /notes must not contain a lone UTF-16 surrogate/],
        ['create_task', { title: 'ok', tags: ['fine', 'b\udc00'] }, /tags\[1\] must not contain a lone UTF-16 surrogate/],
        [
          'create_workflow',
          {
            name: 'w',
            triggerType: 'manual',
            graph: { nodes: [{ id: 'n1', type: 'http_request', params: JSON.stringify({ method: 'POST', url: 'https://x.example/\u0000' }) }], edges: [] },
          },
          /graph\.nodes\[0\]\.params\.url must not contain the NUL character/,
        ],
        ['update_profile', { displayName: 'ok', 'k\u0000': 1 }, /property name "k\\\\u0000" in arguments must not contain the NUL character/],
      ];
      for (const [name, args, expected] of cases) {
        const res = await client.callTool({ name, arguments: args });
        assert.equal(res.isError, true, name);
        assert.match((res.content as { text: string }[])[0]!.text, expected, name);
      }
      const projects = await client.callTool({ name: 'list_projects', arguments: {} });
      assert.deepEqual((projects.structuredContent as { items: unknown[] }).items, []);
    } finally {
      await client.close();
    }
  });
});

describe('workflow tools in strict-schema shape', () => {
  test("a node's params as JSON text are stored as the API's object (what get_workflow returns); params that are not an object's JSON text → a tool error naming the node and the catalogue", async () => {
    const { client } = await connectClient(url, user.writeKey);
    try {
      const params = { method: 'POST', url: 'https://hooks.example/x', headers: { 'x-team': '{{trigger.team}}' }, body: { text: '{{trigger.message}}', n: 1 } };
      const graph = { nodes: [{ id: 'post', type: 'http_request', params: JSON.stringify(params) }], edges: [{ from: 'trigger', to: 'post' }] };
      const created = (await client.callTool({ name: 'create_workflow', arguments: { name: 'strict', triggerType: 'manual', graph } })).structuredContent as {
        id: string;
        graph: { nodes: { params: Record<string, unknown> }[] };
      };
      assert.deepEqual(created.graph.nodes[0]!.params, params);
      // What get_workflow returns goes back into update_workflow as it is (JSON text of the same object).
      const read = (await client.callTool({ name: 'get_workflow', arguments: { workflowId: created.id } })).structuredContent as typeof created;
      const again = {
        nodes: [{ id: 'post', type: 'http_request', params: JSON.stringify({ ...read.graph.nodes[0]!.params, url: 'https://hooks.example/y' }) }],
        edges: graph.edges,
      };
      const updated = (await client.callTool({ name: 'update_workflow', arguments: { workflowId: created.id, graph: again } }))
        .structuredContent as typeof created;
      assert.equal(updated.graph.nodes[0]!.params.url, 'https://hooks.example/y');
      for (const text of ['{method: oops', '[1]', '"text"', 'null']) {
        const bad = { ...graph, nodes: [{ ...graph.nodes[0]!, params: text }] };
        const result = await client.callTool({ name: 'update_workflow', arguments: { workflowId: created.id, graph: bad } });
        assert.equal(result.isError, true, text);
        assert.match(
          (result.content as { text: string }[])[0]!.text,
          /graph\.nodes\[0\]\.params must be the JSON text of an object \(the params of http_request: see flowdesk:\/\/docs\/workflow-nodes\)/,
          text,
        );
      }
      // A param the type does not have: workspace-api's 400 names it.
      const unknown = { ...graph, nodes: [{ ...graph.nodes[0]!, params: JSON.stringify({ ...params, colour: 'red' }) }] };
      const refused = await client.callTool({ name: 'update_workflow', arguments: { workflowId: created.id, graph: unknown } });
      assert.equal(refused.isError, true);
      assert.match((refused.content as { text: string }[])[0]!.text, /colour/);
      // The workflow's own run history retention; {} gives it back to the global setting.
      const kept = (await client.callTool({ name: 'update_workflow', arguments: { workflowId: created.id, retention: { days: 7 } } })).structuredContent as {
        retention: unknown;
      };
      assert.deepEqual(kept.retention, { days: 7 });
      const tooLong = await client.callTool({ name: 'update_workflow', arguments: { workflowId: created.id, retention: { days: 4000 } } });
      assert.equal(tooLong.isError, true);
      const global = (await client.callTool({ name: 'update_workflow', arguments: { workflowId: created.id, retention: {} } })).structuredContent as {
        retention: unknown;
      };
      assert.equal(global.retention, null);
    } finally {
      await client.close();
    }
  });
});

describe('CORS for browser-based clients (MCP_CORS_ORIGINS)', () => {
  test('in chromium, a page on a configured origin speaks MCP as a 2026 client does (Mcp-Method, Mcp-Name on every request)', async () => {
    // The page's own origin: a loopback server on another port (a different origin from the gateway's).
    const page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title>'));
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    const gwUrl = await stack.addGateway({ corsOrigins: [origin] });
    const browser = await launchChromium();
    try {
      const tab = await browser.context.newPage();
      const pageErrors: Error[] = [];
      tab.on('pageerror', (e) => pageErrors.push(e));
      await tab.goto(origin);
      // Each request is the page's own fetch (an anonymous function: tsx would wrap a named one in a helper the page lacks).
      const post = (body: object, headers: Record<string, string>) =>
        tab.evaluate(
          async ({ endpoint, body, headers }) => {
            const res = await fetch(endpoint, {
              method: 'POST',
              headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
              body: JSON.stringify(body),
            });
            const json = res.status === 202 ? null : ((await res.json()) as { result?: { structuredContent?: { items?: unknown[] } } });
            return { status: res.status, session: res.headers.get('mcp-session-id'), items: json?.result?.structuredContent?.items };
          },
          { endpoint: `${gwUrl}${MCP_PATH}`, body, headers },
        );
      const base = { authorization: `Bearer ${user.readKey}`, 'mcp-protocol-version': '2025-06-18' };
      const init = await post(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
        },
        { ...base, 'mcp-method': 'initialize' },
      );
      const session = { ...base, 'mcp-session-id': init.session ?? '' };
      assert.equal(
        (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { ...session, 'mcp-method': 'notifications/initialized' })).status,
        202,
      );
      const call = await post(
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_projects', arguments: {} } },
        { ...session, 'mcp-method': 'tools/call', 'mcp-name': 'list_projects' },
      );
      const result = { init: init.status, session: init.session, call: call.status, items: call.items };
      assert.equal(result.init, 200);
      assert.match(result.session ?? '', /^[A-Za-z0-9_-]{43}$/, 'the page reads Mcp-Session-Id');
      assert.equal(result.call, 200);
      assert.ok(Array.isArray(result.items));
      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await new Promise((resolve) => page.close(resolve));
    }
  });

  test('a configured origin gets the preflight and Mcp-Session-Id exposed; others are refused', async () => {
    const gw = await buildGateway(standaloneGatewayDeps(stack.db, { corsOrigins: ['https://inspector.example'] }));
    const gwUrl = await listen(gw, 0, '127.0.0.1');
    try {
      // What a browser client sends before its requests: a 2025-06-18 one (the SDK 1.x), a 2025-11-25
      // one resuming a stream, and a 2026 one (SEP-2243's Mcp-Method and Mcp-Name on every request; the
      // AI SDK in Chromium failed with "Request header field mcp-method is not allowed").
      for (const requested of [
        'authorization, mcp-protocol-version, content-type',
        'authorization, content-type, last-event-id, mcp-protocol-version, mcp-session-id',
        'authorization, content-type, mcp-method, mcp-name, mcp-protocol-version, mcp-session-id',
      ]) {
        const preflight = await fetch(`${gwUrl}/functions/v1/mcp-server-v2`, {
          method: 'OPTIONS',
          headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST', 'access-control-request-headers': requested },
        });
        assert.equal(preflight.status, 204);
        assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://inspector.example');
        // As the browser checks it: every requested header is one of the allowed names (case-insensitive).
        const allowed = new Set((preflight.headers.get('access-control-allow-headers') ?? '').split(',').map((h) => h.trim().toLowerCase()));
        for (const h of requested.split(', ')) assert.ok(allowed.has(h), `${h} is not allowed: ${[...allowed].join(', ')}`);
        assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
      }

      const init = await rawMcp(gwUrl, initializeBody(), { origin: 'https://inspector.example' });
      assert.equal(init.status, 200);
      assert.equal(init.headers.get('access-control-allow-origin'), 'https://inspector.example');
      assert.match(init.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/i);
      // A 401 challenge must be readable by the page too.
      const get = await rawMcp(gwUrl, undefined, { origin: 'https://inspector.example' }, 'GET');
      assert.equal(get.status, 401);
      assert.equal(get.headers.get('access-control-allow-origin'), 'https://inspector.example');
      assert.match(get.headers.get('access-control-expose-headers') ?? '', /WWW-Authenticate/i);
      assert.match(get.headers.get('access-control-expose-headers') ?? '', /Retry-After/i, 'a 429 or 503 says when to retry');

      const evil = await fetch(`${gwUrl}/functions/v1/mcp-server-v2`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(evil.status, 403);
      assert.equal(evil.headers.get('access-control-allow-origin'), null);
      assert.equal((await rawMcp(gwUrl, initializeBody(), { origin: 'https://evil.example' })).status, 403);
    } finally {
      await gw.close();
    }
  });
});
