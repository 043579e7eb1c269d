// Conformance mode's safety limits: off unless asked for, loopback only, and otherwise the same
// HTTP, session and error handling as production.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { listen, type Service } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import { migrateGateway } from '../src/adapters/db.ts';
import { loadConfig } from '../src/config.ts';
import { isLoopbackAddress, isLoopbackHost } from '../src/conformance/mode.ts';
import { connectClient, initializeBody, MCP_PATH, openRawSession, rawMcp, standaloneGatewayDeps, startStack, type Stack } from './helpers/stack.ts';

const FIXTURE_TOOLS = ['test_simple_text', 'test_image_content', 'test_tool_with_progress', 'test_sampling'];
const ping = (id = 2) => ({ jsonrpc: '2.0', id, method: 'ping', params: {} });
const call = (name: string, id = 3) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

const conformanceDeps = (database: TestDatabase) => standaloneGatewayDeps(database.db, { conformanceMode: true });

describe('off by default', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  test('an unauthenticated call gets 401 and initialize names Flowdesk, not the fixtures', async () => {
    const init = await rawMcp(stack.gatewayUrl, initializeBody());
    assert.equal(init.status, 200);
    assert.equal(init.body.result.serverInfo.name, 'flowdesk');
    const session = init.headers.get('mcp-session-id')!;
    for (const body of [call('test_simple_text'), { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} }]) {
      const res = await rawMcp(stack.gatewayUrl, body, { 'mcp-session-id': session });
      assert.equal(res.status, 401, res.text);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata=/);
    }
  });

  test('an authenticated client sees the Flowdesk catalogue: no fixture tool, resource or prompt', async () => {
    const user = await stack.newUser();
    const { client } = await connectClient(stack.gatewayUrl, user.readKey);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const fixture of FIXTURE_TOOLS) assert.ok(!names.includes(fixture), fixture);
      assert.ok(names.includes('get_agenda'));
      assert.ok(!(await client.listPrompts()).prompts.some((p) => p.name.startsWith('test_')));
      assert.ok(!(await client.listResources()).resources.some((r) => r.uri.startsWith('test://')));
      await assert.rejects(client.callTool({ name: 'test_simple_text', arguments: {} }), /Unknown tool: test_simple_text/);
      await assert.rejects(client.readResource({ uri: 'test://static-text' }), /Resource not found/);
    } finally {
      await client.close();
    }
  });

  test('the environment flag: unset, empty or 0 is off; 1 is on (loopback HOST only); anything else is refused', () => {
    const env = {
      DATABASE_URL: 'postgres://x@127.0.0.1/db',
      PUBLIC_BASE_URL: 'https://f.example',
      AUTH_URL: 'http://a',
      WORKSPACE_API_URL: 'http://w',
      WORKFLOW_ENGINE_URL: 'http://e',
      MCP_GATEWAY_CLIENT_SECRET: 's'.repeat(32),
    };
    for (const flag of [undefined, '', '0']) assert.equal(loadConfig({ ...env, MCP_CONFORMANCE_MODE: flag }).conformanceMode, false, String(flag));
    const on = loadConfig({ DATABASE_URL: env.DATABASE_URL, MCP_CONFORMANCE_MODE: '1' });
    assert.equal(on.conformanceMode, true);
    assert.equal(on.host, '127.0.0.1');
    assert.equal(on.publicBaseUrl, 'http://127.0.0.1:3003');
    assert.equal(loadConfig({ DATABASE_URL: env.DATABASE_URL, MCP_CONFORMANCE_MODE: '1', HOST: '::1', PORT: '4000' }).publicBaseUrl, 'http://[::1]:4000');
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'flowdesk.example']) {
      assert.throws(() => loadConfig({ ...env, MCP_CONFORMANCE_MODE: '1', HOST: host }), /loopback only/, host);
    }
    for (const flag of ['true', 'yes', '2']) assert.throws(() => loadConfig({ ...env, MCP_CONFORMANCE_MODE: flag }), /MCP_CONFORMANCE_MODE must be 1/, flag);
  });
});

describe('loopback only', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
    await migrateGateway(database.db);
  });
  after(async () => {
    await database?.close();
  });

  test('listening on a non-loopback address is refused before binding', async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.1', 'example.com']) {
      const app = await buildApp(conformanceDeps(database));
      try {
        await assert.rejects(listen(app, 0, host), /Conformance mode refuses to listen/, host);
        assert.equal(app.server.listening, false, host);
      } finally {
        await app.close();
      }
    }
  });

  test('a non-loopback client or a non-loopback Host is refused with 403', async () => {
    const app = await buildApp(conformanceDeps(database));
    try {
      const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
      const payload = JSON.stringify(initializeBody());
      const remote = await app.inject({ method: 'POST', url: MCP_PATH, headers, payload, remoteAddress: '192.0.2.10' });
      assert.equal(remote.statusCode, 403);
      assert.match(remote.body, /loopback clients only/);
      assert.equal((await app.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.1.2.3' })).statusCode, 403);
      const rebinding = await app.inject({
        method: 'POST',
        url: MCP_PATH,
        headers: { ...headers, host: 'evil.example.com' },
        payload,
        remoteAddress: '127.0.0.1',
      });
      assert.equal(rebinding.statusCode, 403);
      for (const remoteAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
        const ok = await app.inject({ method: 'POST', url: MCP_PATH, headers: { ...headers, host: '127.0.0.1:3003' }, payload, remoteAddress });
        assert.equal(ok.statusCode, 200, remoteAddress);
      }
    } finally {
      await app.close();
    }
  });

  test('address and host classification', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '[::1]']) assert.ok(isLoopbackAddress(a), a);
    for (const a of [undefined, '', '0.0.0.0', '::', '10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1', 'localhost']) assert.ok(!isLoopbackAddress(a), String(a));
    for (const h of ['localhost', 'LOCALHOST:80', '127.0.0.1', '127.0.0.1:3003', '[::1]:3003', '::1']) assert.ok(isLoopbackHost(h), h);
    for (const h of [undefined, '', 'evil.example.com', 'localhost.evil.com', '127.0.0.1.nip.io', '0.0.0.0', '[::]:80', '10.0.0.1:3003'])
      assert.ok(!isLoopbackHost(h), String(h));
  });
});

describe('conformance mode keeps the production session and error handling', () => {
  let database: TestDatabase;
  let app: Service;
  let url: string;
  before(async () => {
    database = await createTestDatabase();
    await migrateGateway(database.db);
    app = await buildApp(conformanceDeps(database));
    url = await listen(app, 0, '127.0.0.1');
  });
  after(async () => {
    await app?.close();
    await database?.close();
  });

  test('no token needed; sessions live in the database: missing → 400, unknown → 404, DELETE ends one', async () => {
    const session = await openRawSession(url);
    const { rows } = await database.db.exec(`SELECT count(*)::int AS n FROM "gateway"."mcp_session"`);
    assert.equal(Number(rows[0]!.n), 1);
    const res = await rawMcp(url, call('test_simple_text'), { 'mcp-session-id': session });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.match(res.text, /This is a simple text response for testing\./);
    assert.equal((await rawMcp(url, ping())).status, 400);
    assert.equal((await rawMcp(url, ping(), { 'mcp-session-id': 'x'.repeat(43) })).status, 404);
    assert.equal((await rawMcp(url, undefined, { 'mcp-session-id': session }, 'DELETE')).status, 204);
    assert.equal((await rawMcp(url, ping(), { 'mcp-session-id': session })).status, 404);
  });

  test('the same HTTP refusals: 406, 415, 400 for bad JSON, unsupported protocol version, foreign Origin', async () => {
    assert.equal((await rawMcp(url, initializeBody(), { accept: 'application/json' })).status, 406);
    assert.equal((await rawMcp(url, 'x=1', { 'content-type': 'application/x-www-form-urlencoded' })).status, 415);
    assert.equal((await rawMcp(url, '{"jsonrpc":')).status, 400);
    const session = await openRawSession(url);
    assert.equal((await rawMcp(url, ping(), { 'mcp-session-id': session, 'mcp-protocol-version': '1999-01-01' })).status, 400);
    assert.equal((await rawMcp(url, initializeBody(), { origin: 'http://evil.example' })).status, 403);
  });

  test('unknown tool → -32602; unknown resource → -32002 (the fixtures answer errors the production way)', async () => {
    const session = await openRawSession(url);
    const tool = await rawMcp(url, call('get_agenda'), { 'mcp-session-id': session, accept: 'application/json, text/event-stream' });
    assert.match(tool.text, /"code":-32602/);
    const read = await rawMcp(url, { jsonrpc: '2.0', id: 5, method: 'resources/read', params: { uri: 'flowdesk://overview' } }, { 'mcp-session-id': session });
    assert.match(read.text, /"code":-32002/);
  });
});
