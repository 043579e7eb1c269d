import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { listen } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';

const SERVICE = 'mcp-gateway';
let app: Awaited<ReturnType<typeof buildApp>>;
let base: string;

before(async () => {
  app = await buildApp({ logLevel: 'silent' });
  base = await listen(app, 0, '127.0.0.1');
});
after(() => app.close());

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
