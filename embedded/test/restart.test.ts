import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createPrismaClient, verifyPassword } from '@flowdesk/auth';
import { createTestDatabase, openDatabase } from '@flowdesk/db';
import { signInternalToken } from '@flowdesk/service-kit';
import { loadConfig } from '../src/config.ts';
import { startEmbedded, type Embedded } from '../src/start.ts';

test('a second start on the same home keeps the user and keys and does not seed twice', async (t) => {
  const home = await mkdtemp(path.join(tmpdir(), 'flowdesk-restart-'));
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const running: Embedded[] = [];
  t.after(async () => {
    for (const e of running) await e.close();
    await database?.close();
    await rm(home, { recursive: true, force: true });
  });
  const config = { ...loadConfig({ FLOWDESK_HOME: home, PORT: '0', LOG_LEVEL: 'silent' }), databaseUrl: database?.url };
  const read = async (file: string) => readFile(path.join(home, file), 'utf8');

  const first = await startEmbedded(config);
  running.push(first);
  const keysAfterFirst = await read('keys.json');
  const demo = JSON.parse(await read('dev.json')) as Record<string, string>;
  assert.equal(demo.email, 'demo@flowdesk.local');
  assert.ok(typeof demo.password === 'string' && demo.password.length >= 16);
  assert.match(demo.readKey ?? '', /^fdk_[0-9A-Za-z]{43}$/);
  assert.match(demo.writeKey ?? '', /^fdk_[0-9A-Za-z]{43}$/);
  await first.close();
  // Later features keep their own entries in dev.json; a restart must not drop them.
  const dev = JSON.parse(await read('dev.json')) as Record<string, unknown>;
  await writeFile(path.join(home, 'dev.json'), JSON.stringify({ ...dev, apiKeys: ['kept'] }));

  const second = await startEmbedded(config);
  running.push(second);
  assert.equal(second.userId, first.userId);
  assert.equal(await read('keys.json'), keysAfterFirst);
  assert.equal((await stat(path.join(home, 'keys.json'))).mode & 0o777, 0o600);
  const devAfter = JSON.parse(await read('dev.json')) as Record<string, unknown>;
  assert.deepEqual(devAfter.apiKeys, ['kept']);
  assert.deepEqual(
    [devAfter.email, devAfter.password, devAfter.readKey, devAfter.writeKey],
    [demo.email, demo.password, demo.readKey, demo.writeKey],
    'the restart reused the demo credentials',
  );

  // Through the front: the demo keys work with their scopes, and the restart made no new ones.
  const keyCall = (key: string | undefined, method = 'GET', body?: unknown) =>
    fetch(`${second.baseUrl}/auth/v1/api-keys`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const listed = (await (await keyCall(demo.writeKey)).json()) as { items: { name: string; scope: string }[] };
  assert.deepEqual(listed.items.map((k) => k.scope).sort(), ['mcp:read', 'mcp:write']);
  assert.equal((await keyCall(demo.readKey)).status, 200);
  assert.equal((await keyCall(demo.readKey, 'POST', { name: 'x', scope: 'write' })).status, 403);
  assert.equal((await keyCall(undefined)).status, 401);
  const { serviceClients } = JSON.parse(keysAfterFirst) as { serviceClients: Record<string, string> };
  const introspection = await fetch(`${second.baseUrl}/oauth/introspect`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`mcp-gateway:${serviceClients['mcp-gateway']}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token: demo.readKey! }),
  });
  assert.deepEqual((({ active, sub, scope }) => ({ active, sub, scope }))((await introspection.json()) as Record<string, unknown>), {
    active: true,
    sub: second.userId,
    scope: 'mcp:read',
  });
  assert.equal((await fetch(`${second.baseUrl}/internal/anything`)).status, 404, 'nothing internal is public');

  // The public API takes the user's key (the console edge exchanges it); an internal token, which
  // only workspace-api accepts, means nothing at the public edge.
  const keys = JSON.parse(keysAfterFirst) as { signing: { privateKeyPem: string; kid: string } };
  const internal = signInternalToken(keys.signing, { sub: second.userId, aud: 'workspace-api', scope: 'mcp:read' });
  assert.equal((await fetch(`${second.baseUrl}/api/v1/projects`, { headers: { authorization: `Bearer ${internal}` } })).status, 401);
  const get = async (p: string) => {
    const res = await fetch(`${second.baseUrl}${p}`, { headers: { authorization: `Bearer ${demo.readKey}` } });
    assert.equal(res.status, 200, p);
    return (await res.json()) as { items: { id: string; name: string; title: string }[] };
  };
  const projects = await get('/api/v1/projects');
  assert.deepEqual(
    projects.items.map((p) => p.name),
    ['Welcome to Flowdesk'],
  );
  const tasks = await get(`/api/v1/tasks?projectId=${projects.items[0]!.id}`);
  assert.equal(tasks.items.length, 3);

  if (!config.databaseUrl) {
    // PGlite is single-process: a second start on the same data would corrupt it.
    await assert.rejects(startEmbedded(config), /Another Flowdesk/);
  }

  // The password in dev.json is the demo user's, and there is exactly one demo user.
  await second.close();
  const db = await openDatabase(config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: path.join(home, 'pglite') });
  const prisma = createPrismaClient(db);
  try {
    assert.equal((await verifyPassword(prisma, 'demo@flowdesk.local', demo.password))?.id, second.userId);
    const { rows } = await db.exec('SELECT count(*)::int AS n FROM auth."user"');
    assert.equal(rows[0]?.n, 1);
  } finally {
    await prisma.$disconnect();
    await db.close();
  }
});
