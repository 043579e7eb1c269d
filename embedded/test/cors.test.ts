// MCP_CORS_ORIGINS (and MCP_ALLOWED_ORIGINS) on `npm start`'s stack, through the one base URL: a browser-based MCP client on a
// configured origin gets CORS answers from the MCP endpoint (mcp-gateway) and from every OAuth
// endpoint it calls itself (auth: discovery, registration, token, revocation); other origins do not.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { loadConfig } from '../src/config.ts';
import { startEmbedded, type Embedded } from '../src/start.ts';

const CLIENT = 'https://inspector.example';
const OTHER = 'https://elsewhere.example';
/** MCP_ALLOWED_ORIGINS: accepted by the MCP endpoint (DNS-rebinding check), but given no CORS answers. */
const ALLOWED = 'https://desktop-app.example';
const MCP = '/functions/v1/mcp-server-v2';
const PATHS = [
  MCP,
  `/.well-known/oauth-protected-resource${MCP}`,
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-authorization-server',
  '/oauth/register',
  '/oauth/token',
  '/oauth/revoke',
];

let home: string;
let database: TestDatabase | undefined;
let flowdesk: Embedded;

before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'flowdesk-cors-'));
  database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const config = loadConfig({ FLOWDESK_HOME: home, PORT: '0', LOG_LEVEL: 'silent', MCP_CORS_ORIGINS: CLIENT, MCP_ALLOWED_ORIGINS: ALLOWED });
  flowdesk = await startEmbedded({ ...config, databaseUrl: database?.url });
});

after(async () => {
  await flowdesk?.close();
  await database?.close();
  await rm(home, { recursive: true, force: true });
});

const preflight = (p: string, origin: string) =>
  fetch(`${flowdesk.localUrl}${p}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
  });

test('MCP_CORS_ORIGINS reaches the gateway and auth: a preflight from the configured origin is 204 with Allow-* headers on the MCP endpoint and the OAuth endpoints', async () => {
  for (const p of PATHS) {
    const res = await preflight(p, CLIENT);
    assert.equal(res.status, 204, p);
    assert.equal(res.headers.get('access-control-allow-origin'), CLIENT, p);
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/, p);
    const headers = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const h of ['authorization', 'content-type', 'mcp-protocol-version']) assert.ok(headers.includes(h), `${p}: ${h}`);
  }
});

test('any other origin gets no CORS headers', async () => {
  for (const p of PATHS) {
    const res = await preflight(p, OTHER);
    assert.notEqual(res.status, 204, p);
    assert.equal(res.headers.get('access-control-allow-origin'), null, p);
  }
  const meta = await fetch(`${flowdesk.localUrl}/.well-known/oauth-authorization-server`, { headers: { origin: OTHER } });
  assert.equal(meta.headers.get('access-control-allow-origin'), null);
});

test('the requests themselves: discovery and registration at auth, initialize at the gateway, readable by the configured origin', async () => {
  const meta = await fetch(`${flowdesk.localUrl}/.well-known/oauth-authorization-server`, { headers: { origin: CLIENT } });
  assert.equal(meta.status, 200);
  assert.equal(meta.headers.get('access-control-allow-origin'), CLIENT);
  const reg = await fetch(`${flowdesk.localUrl}/oauth/register`, {
    method: 'POST',
    headers: { origin: CLIENT, 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'browser', redirect_uris: [`${CLIENT}/cb`], token_endpoint_auth_method: 'none' }),
  });
  assert.equal(reg.status, 201);
  assert.equal(reg.headers.get('access-control-allow-origin'), CLIENT);
  const init = await fetch(`${flowdesk.localUrl}${MCP}`, {
    method: 'POST',
    headers: { origin: CLIENT, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } },
    }),
  });
  assert.equal(init.status, 200);
  assert.equal(init.headers.get('access-control-allow-origin'), CLIENT);
  assert.match(init.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/i);
  assert.ok(init.headers.get('mcp-session-id'));
  await init.body?.cancel();
});

test('MCP_ALLOWED_ORIGINS reaches the gateway: initialize from that origin is accepted (without CORS), from an unlisted one refused 403', async () => {
  const initialize = (origin: string) =>
    fetch(`${flowdesk.localUrl}${MCP}`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'app', version: '1' } },
      }),
    });
  const allowed = await initialize(ALLOWED);
  assert.equal(allowed.status, 200, await allowed.clone().text());
  assert.equal(allowed.headers.get('access-control-allow-origin'), null);
  await allowed.body?.cancel();
  const other = await initialize(OTHER);
  assert.equal(other.status, 403);
  await other.body?.cancel();
});
