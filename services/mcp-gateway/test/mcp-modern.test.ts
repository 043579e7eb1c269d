// MCP 2026-07-28 (per-request `_meta` envelope, server/discover, no sessions) at the same endpoint as
// the sessionful 2025 serving, through the official SDK 2.x client: pinned and auto mode; and the 2025
// revisions beside it (2025-11-25 negotiated by the SDK 1.x client, 2025-06-18 still echoed).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { RESOURCE_URIS, TOOLS, PROMPTS, RESOURCES, toolIconPath } from '@flowdesk/contracts';
import { connectClient, initializeBody, MCP_PATH, rawMcp, startStack, type Stack, type TestUser } from './helpers/stack.ts';

let stack: Stack;
let user: TestUser;

before(async () => {
  stack = await startStack();
  user = await stack.newUser();
});
after(async () => {
  await stack?.close();
});

/** An SDK 2.x client on the gateway with `key`; every HTTP request it sends is recorded. */
async function connectModern(key: string, mode: 'auto' | { pin: string }) {
  const sent: { method: string; rpc: string | undefined; status: number; headers: Headers }[] = [];
  const recording = async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    let rpc: string | undefined;
    try {
      rpc = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }).method : undefined;
    } catch {
      rpc = undefined;
    }
    sent.push({ method: init?.method ?? 'GET', rpc, status: res.status, headers: new Headers(init?.headers) });
    return res;
  };
  const client = new Client({ name: 'flowdesk-modern-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.gatewayUrl}${MCP_PATH}`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    fetch: recording,
  });
  await client.connect(transport);
  return { client, sent };
}

describe('2026-07-28 (SDK 2.x client pinned)', () => {
  test('tools, resources and prompts: the same catalogue, answered without a session', async () => {
    const { client, sent } = await connectModern(user.writeKey, { pin: '2026-07-28' });
    try {
      const tools = await client.listTools();
      assert.deepEqual(
        tools.tools.map((t) => t.name),
        TOOLS.map((t) => t.name),
        'the same tools in the catalogue order',
      );
      // MCP 2025-11-25 icons on every tool, under the public base URL (the console serves them).
      assert.equal(tools.tools.find((t) => t.name === 'create_project')?.icons?.[0]?.src, `${stack.publicBaseUrl}/icons/project.svg`);
      // … but the workspace-wide ones, whose icon is the server's own.
      assert.deepEqual(
        tools.tools.filter((t) => !t.icons?.[0]?.src.startsWith(`${stack.publicBaseUrl}/icons/`)).map((t) => t.name),
        TOOLS.filter((t) => toolIconPath(t.name) === '/favicon.svg').map((t) => t.name),
      );
      assert.ok(tools.tools.every((t) => t.icons === undefined || t.icons[0]!.src.startsWith(`${stack.publicBaseUrl}/icons/`)));
      const created = await client.callTool({ name: 'create_project', arguments: { name: 'Modern project' } });
      assert.notEqual(created.isError, true, JSON.stringify(created.content));
      const project = created.structuredContent as { id: string; name: string };
      assert.equal(project.name, 'Modern project');
      const listed = await client.callTool({ name: 'list_projects', arguments: {} });
      assert.ok((listed.structuredContent as { items: { id: string }[] }).items.some((p) => p.id === project.id));

      const resources = await client.listResources();
      assert.deepEqual(
        resources.resources.map((r) => r.uri),
        RESOURCES.map((r) => r.uri),
      );
      const read = await client.readResource({ uri: RESOURCE_URIS.projects });
      assert.match((read.contents[0] as { text: string }).text, /Modern project/);
      const prompts = await client.listPrompts();
      assert.deepEqual(
        prompts.prompts.map((p) => p.name),
        PROMPTS.map((p) => p.name),
      );

      // Invalid arguments are a tool error the model can act on (as from 2025-11-25 on).
      const bad = await client.callTool({ name: 'create_project', arguments: { colour: 1 } });
      assert.equal(bad.isError, true);
      assert.match((bad.content as { text: string }[])[0]!.text, /Invalid arguments for tool create_project: .*colour is not a known property/);

      // Every request went out with the standard headers and came back without a session id.
      assert.ok(sent.length >= 7);
      for (const s of sent) {
        assert.equal(s.headers.get('mcp-protocol-version'), '2026-07-28');
        assert.equal(s.headers.get('mcp-method'), s.rpc);
        assert.equal(s.headers.get('mcp-session-id'), null);
      }
      const { rows } = await stack.db.exec(`SELECT count(*)::int AS n FROM "gateway"."mcp_session" WHERE "credential_id" = $1`, [user.writeKeyId]);
      assert.equal(Number(rows[0]!.n), 0, 'no session row was written for the 2026-07-28 client');
    } finally {
      await client.close();
    }
  });

  test('list results carry ttlMs and cacheScope; server/discover names 2026-07-28 and the server with its icon', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const headers = (method: string) => ({ authorization: `Bearer ${user.readKey}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method });
    const list = await rawMcp(stack.gatewayUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }, headers('tools/list'));
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.result.ttlMs, 300_000);
    assert.equal(list.body.result.cacheScope, 'public');
    assert.equal(list.headers.get('mcp-session-id'), null);
    const discover = await rawMcp(
      stack.gatewayUrl,
      { jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: envelope } },
      headers('server/discover'),
    );
    assert.equal(discover.status, 200, discover.text);
    assert.ok(discover.body.result.supportedVersions.includes('2026-07-28'), discover.text);
    assert.ok(discover.body.result.capabilities.tools);
    const serverInfo = discover.body.result._meta['io.modelcontextprotocol/serverInfo'];
    assert.equal(serverInfo.name, 'flowdesk');
    assert.match(serverInfo.icons[0].src, /^data:image\/svg\+xml;base64,/);
  });

  test('the tasks extension: advertised; tasks/get, tasks/update, tasks/cancel → 400 -32021 without it in the client capabilities, -32602 (unknown task) with it', async () => {
    const TASKS = 'io.modelcontextprotocol/tasks';
    const envelope = (capabilities: object) => ({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': capabilities,
    });
    const send = (method: string, params: object, capabilities: object) =>
      rawMcp(
        stack.gatewayUrl,
        { jsonrpc: '2.0', id: 9, method, params: { ...params, _meta: envelope(capabilities) } },
        { authorization: `Bearer ${user.readKey}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': 'no-such-task' },
      );
    const discover = await send('server/discover', {}, {});
    assert.deepEqual(discover.body.result.capabilities.extensions, { [TASKS]: {} }, discover.text);
    for (const [method, params] of [
      ['tasks/get', { taskId: 'no-such-task' }],
      ['tasks/update', { taskId: 'no-such-task', inputResponses: {} }],
      ['tasks/cancel', { taskId: 'no-such-task' }],
    ] as const) {
      // Was 404 -32601 (method not found).
      const gated = await send(method, params, {});
      assert.equal(gated.status, 400, `${method}: ${gated.text}`);
      assert.equal(gated.body.error.code, -32021, method);
      assert.deepEqual(gated.body.error.data.requiredCapabilities, { extensions: { [TASKS]: {} } }, method);
      const unknown = await send(method, params, { extensions: { [TASKS]: {} } });
      assert.equal(unknown.body.error.code, -32602, `${method}: ${unknown.text}`);
      assert.match(unknown.body.error.message, /Unknown task: no-such-task/, method);
    }
  });

  test('a write tool with a read key → 403 before dispatch, nothing written; without a token → 401 with the challenge', async () => {
    const { client } = await connectModern(user.readKey, { pin: '2026-07-28' });
    try {
      await assert.rejects(client.callTool({ name: 'create_project', arguments: { name: 'Refused' } }), (e: Error & { data?: { status?: number } }) => {
        assert.match(e.message, /"error":"forbidden".*requires the mcp:write scope/);
        return true;
      });
      const listed = await client.callTool({ name: 'list_projects', arguments: {} });
      assert.ok(!(listed.structuredContent as { items: { name: string }[] }).items.some((p) => p.name === 'Refused'));
    } finally {
      await client.close();
    }
    const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    const anonymous = await rawMcp(
      stack.gatewayUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    );
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="/);
  });

  test('a bad Origin → 403 on this path too', async () => {
    const res = await rawMcp(
      stack.gatewayUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } },
      { authorization: `Bearer ${user.readKey}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list', origin: 'https://evil.example' },
    );
    assert.equal(res.status, 403);
  });
});

describe('auto mode and the 2025 revisions', () => {
  test('SDK 2.x in auto mode: server/discover is answered, no initialize and no fallback round trip', async () => {
    const { client, sent } = await connectModern(user.readKey, 'auto');
    try {
      await client.listTools();
      assert.deepEqual(
        sent.map((s) => `${s.rpc}:${s.status}`),
        ['server/discover:200', 'tools/list:200'],
      );
    } finally {
      await client.close();
    }
  });

  test('SDK 1.x client: negotiates 2025-11-25 in a session, sees the server icon and tool errors for bad arguments', async () => {
    const { client } = await connectClient(stack.gatewayUrl, user.writeKey);
    try {
      assert.equal(client.getServerVersion()?.name, 'flowdesk');
      assert.match(client.getServerVersion()?.icons?.[0]?.src ?? '', /^data:image\/svg\+xml;base64,/);
      const bad = await client.callTool({ name: 'create_task', arguments: {} });
      assert.equal(bad.isError, true);
      assert.match((bad.content as { text: string }[])[0]!.text, /^Invalid arguments for tool create_task: title is required/);
      const prompts = await client.listPrompts();
      assert.ok(prompts.prompts.every((p) => p.icons?.length === 1));
      const tools = await client.listTools();
      assert.equal(tools.tools.find((t) => t.name === 'get_agenda')?.icons?.[0]?.src, `${stack.publicBaseUrl}/icons/calendar.svg`);
    } finally {
      await client.close();
    }
    const init = await rawMcp(stack.gatewayUrl, initializeBody('2025-11-25'));
    assert.equal(init.body.result.protocolVersion, '2025-11-25');
    const session = init.headers.get('mcp-session-id')!;
    const after = await rawMcp(
      stack.gatewayUrl,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { authorization: `Bearer ${user.readKey}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    );
    assert.equal(after.status, 200, after.text);
    assert.equal((await rawMcp(stack.gatewayUrl, initializeBody('2025-06-18'))).body.result.protocolVersion, '2025-06-18');
    assert.equal((await rawMcp(stack.gatewayUrl, initializeBody('2099-01-01'))).body.result.protocolVersion, '2025-11-25');
  });
});
