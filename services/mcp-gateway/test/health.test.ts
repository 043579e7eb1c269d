import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { listen } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import { migrateGateway } from '../src/adapters/db.ts';
import { standaloneGatewayDeps } from './helpers/stack.ts';

const SERVICE = 'mcp-gateway';
let app: Awaited<ReturnType<typeof buildApp>>;
let base: string;
let database: TestDatabase;

before(async () => {
  database = await createTestDatabase();
  await migrateGateway(database.db);
  app = await buildApp(standaloneGatewayDeps(database.db, { publicBaseUrl: 'https://flowdesk.example.test' }));
  base = await listen(app, 0, '127.0.0.1');
});
after(async () => {
  await app.close();
  await database.close();
});

async function getJson(path: string) {
  const res = await fetch(`${base}${path}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

test('/healthz answers 200 naming the service', async () => {
  assert.deepEqual(await getJson('/healthz'), { status: 200, body: { status: 'ok', service: SERVICE } });
});

test('/readyz answers 200 naming the service', async () => {
  assert.deepEqual(await getJson('/readyz'), { status: 200, body: { status: 'ready', service: SERVICE } });
});

test('an unknown path answers 404 with the JSON error body', async () => {
  const { status, body } = await getJson('/no/such/path');
  assert.equal(status, 404);
  assert.equal(body.error, 'not_found');
  assert.match(String(body.message), /\/no\/such\/path/);
});

test('protected resource metadata (RFC 9728) at the path-suffixed and the bare location', async () => {
  for (const path of ['/.well-known/oauth-protected-resource/functions/v1/mcp-server-v2', '/.well-known/oauth-protected-resource']) {
    const { status, body } = await getJson(path);
    assert.equal(status, 200, path);
    assert.deepEqual(body, {
      resource: 'https://flowdesk.example.test/functions/v1/mcp-server-v2',
      authorization_servers: ['https://flowdesk.example.test'],
      scopes_supported: ['mcp:read', 'mcp:write'],
      bearer_methods_supported: ['header'],
      resource_name: 'Flowdesk MCP server',
    });
  }
});

test('the metadata answers CORS only to the origins of MCP_CORS_ORIGINS: none configured, no Access-Control-Allow-Origin at all', async () => {
  const path = '/.well-known/oauth-protected-resource/functions/v1/mcp-server-v2';
  const origin = 'https://anywhere.example';
  const unconfigured = await fetch(`${base}${path}`, { headers: { origin } });
  assert.equal(unconfigured.status, 200);
  assert.equal(unconfigured.headers.get('access-control-allow-origin'), null, 'no CORS origin is configured');
  const listed = await buildApp(standaloneGatewayDeps(database.db, { publicBaseUrl: 'https://flowdesk.example.test', corsOrigins: [origin] }));
  const listedBase = await listen(listed, 0, '127.0.0.1');
  try {
    for (const p of [path, '/.well-known/oauth-protected-resource']) {
      const res = await fetch(`${listedBase}${p}`, { headers: { origin } });
      assert.equal(res.headers.get('access-control-allow-origin'), origin, p);
      assert.equal(res.headers.get('vary'), 'Origin', p);
      const other = await fetch(`${listedBase}${p}`, { headers: { origin: 'https://evil.example' } });
      assert.equal(other.headers.get('access-control-allow-origin'), null, p);
    }
  } finally {
    await listed.close();
  }
});
