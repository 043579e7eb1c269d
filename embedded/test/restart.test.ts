import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createTestDatabase } from '@flowdesk/db';
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
  await first.close();
  // Later features keep their own entries in dev.json; a restart must not drop them.
  const dev = JSON.parse(await read('dev.json')) as Record<string, unknown>;
  await writeFile(path.join(home, 'dev.json'), JSON.stringify({ ...dev, apiKeys: ['kept'] }));

  const second = await startEmbedded(config);
  running.push(second);
  assert.equal(second.userId, first.userId);
  assert.equal(await read('keys.json'), keysAfterFirst);
  assert.equal((await stat(path.join(home, 'keys.json'))).mode & 0o777, 0o600);
  assert.deepEqual(JSON.parse(await read('dev.json')).apiKeys, ['kept']);

  const keys = JSON.parse(keysAfterFirst) as { signing: { privateKeyPem: string; kid: string } };
  const token = signInternalToken(keys.signing, { sub: second.userId, aud: 'workspace-api', scope: 'mcp:read' });
  const get = async (p: string) => {
    const res = await fetch(`${second.baseUrl}${p}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200, p);
    return (await res.json()) as { items: { id: string; name: string; title: string }[] };
  };
  const projects = await get('/api/v1/projects');
  assert.deepEqual(projects.items.map((p) => p.name), ['Welcome to Flowdesk']);
  const tasks = await get(`/api/v1/tasks?projectId=${projects.items[0]!.id}`);
  assert.equal(tasks.items.length, 3);

  if (!config.databaseUrl) {
    // PGlite is single-process: a second start on the same data would corrupt it.
    await assert.rejects(startEmbedded(config), /Another Flowdesk/);
  }
});
