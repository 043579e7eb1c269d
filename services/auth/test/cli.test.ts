import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createUser } from '../src/domain/users.ts';
import { startTestAuth, type TestAuth } from './helpers/app.ts';

// The CLI as a person runs it (`npx flowdesk` runs this file), against the auth service over HTTP.
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../scripts/flowdesk.mjs');

let auth: TestAuth;
let home: string;
let writeKey: string;
let readKey: string;

before(async () => {
  auth = await startTestAuth();
  home = await mkdtemp(path.join(tmpdir(), 'flowdesk-cli-'));
  const user = await auth.newUser();
  writeKey = (await auth.newKey(user.id, 'mcp:write', 'bootstrap')).secret;
  readKey = (await auth.newKey(user.id, 'mcp:read', 'reader')).secret;
  // What `npm start` leaves behind: the CLI finds the URL and the write key here by default.
  await writeFile(path.join(home, 'dev.json'), JSON.stringify({ baseUrl: auth.baseUrl, writeKey, readKey }));
});
after(async () => {
  await auth.close();
  await rm(home, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env, FLOWDESK_HOME: home };
  delete base.FLOWDESK_URL;
  delete base.FLOWDESK_API_KEY;
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...base, ...env }, stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  if (stdin !== undefined) child.stdin!.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

test('create prints the secret once; list shows it by prefix only; revoke makes it stop working', async () => {
  const created = await cli(['keys', 'create', '--name', 'ci', '--scope', 'write']);
  assert.equal(created.code, 0, created.stderr);
  const secret = /fdk_[0-9A-Za-z]{43}/.exec(created.stdout)?.[0];
  assert.ok(secret, created.stdout);
  assert.match(created.stdout, /shown only this once/);
  const id = /id ([0-9a-f-]{36})/.exec(created.stdout)?.[1];
  assert.ok(id);
  const introspected = await auth.form('/oauth/introspect', { token: secret });
  assert.deepEqual([introspected.body.active, introspected.body.scope], [true, 'mcp:read mcp:write']);

  const listed = await cli(['keys', 'list']);
  assert.equal(listed.code, 0, listed.stderr);
  const [header, ...rows] = listed.stdout.trim().split('\n');
  assert.match(header!, /^ID\s+NAME\s+SCOPE\s+KEY\s+CREATED\s+LAST USED$/);
  const ciRow = rows.find((r) => r.startsWith(id));
  assert.ok(ciRow, listed.stdout);
  assert.match(ciRow, new RegExp(`ci\\s+mcp:write\\s+${secret.slice(0, 12)}…`));
  // Introspected once above: the use is recorded.
  assert.match(ciRow, /\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
  assert.ok(!listed.stdout.includes(secret.slice(12)), 'the list shows no secret');
  assert.equal(rows.length, 3);

  const revoked = await cli(['keys', 'revoke', id]);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, new RegExp(`Revoked API key ${id}`));
  assert.deepEqual((await auth.form('/oauth/introspect', { token: secret })).body, { active: false });
  assert.ok(!(await cli(['keys', 'list'])).stdout.includes(id));

  const again = await cli(['keys', 'revoke', id]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /404 API key not found/);
});

test('FLOWDESK_API_KEY and FLOWDESK_URL override dev.json; a read key is told it needs mcp:write', async () => {
  const listed = await cli(['keys', 'list'], { FLOWDESK_API_KEY: readKey, FLOWDESK_URL: auth.baseUrl });
  assert.equal(listed.code, 0, listed.stderr);
  const create = await cli(['keys', 'create', '--name', 'x', '--scope', 'write'], { FLOWDESK_API_KEY: readKey });
  assert.equal(create.code, 1);
  assert.match(create.stderr, /403 This operation requires the mcp:write scope/);
  assert.doesNotMatch(create.stdout, /fdk_/);
  const wrong = await cli(['keys', 'list'], { FLOWDESK_API_KEY: `fdk_${'0'.repeat(43)}` });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /401 Invalid or revoked API key/);
});

test('usage mistakes exit 2 with the usage; an unreachable server exits 1 saying so', async () => {
  for (const args of [
    ['keys', 'create'],
    ['keys', 'create', '--name', 'x', '--scope', 'admin'],
    ['keys', 'revoke'],
    ['keys', 'frobnicate'],
    ['nope'],
    ['keys', 'list', '--bogus'],
  ]) {
    const res = await cli(args);
    assert.equal(res.code, 2, args.join(' '));
    assert.match(res.stderr, /Usage:/, args.join(' '));
  }
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  const down = await cli(['keys', 'list'], { FLOWDESK_URL: `http://127.0.0.1:${port}` });
  assert.equal(down.code, 1);
  assert.match(down.stderr, /Cannot reach Flowdesk at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  const noHome = await cli(['keys', 'list'], { FLOWDESK_HOME: path.join(home, 'missing') });
  assert.equal(noHome.code, 1);
  assert.match(noHome.stderr, /No Flowdesk URL/);
});

test("users create|list|disable|enable with the owner's key; anyone else's key is told it is not the owner", async () => {
  const owner = await createUser(auth.prisma, { email: 'owner@example.test', name: 'Owner', password: 'owner password', role: 'owner' });
  const ownerKey = (await auth.newKey(owner.id, 'mcp:write', 'owner cli')).secret;
  const asOwner = { FLOWDESK_API_KEY: ownerKey };
  const signIn = (email: string, password: string) => auth.call('POST', '/auth/v1/sessions', { body: { email, password } });

  const created = await cli(['users', 'create', '--email', 'Nia@Example.test', '--name', 'Nia N'], asOwner);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /Created member nia@example\.test \("Nia N"\), id [0-9a-f-]{36}\./);
  const password = /First password: (\S+)/.exec(created.stdout)?.[1];
  assert.ok(password && password.length >= 10, created.stdout);
  assert.match(created.stdout, /shown only this once/);
  assert.equal((await signIn('nia@example.test', password)).status, 201);

  const chosen = await cli(['users', 'create', '--email', 'omar@example.test', '--name', 'Omar', '--password-stdin'], asOwner, 'omar chose this\n');
  assert.equal(chosen.code, 0, chosen.stderr);
  assert.doesNotMatch(chosen.stdout, /First password/);
  assert.equal((await signIn('omar@example.test', 'omar chose this')).status, 201);
  const weak = await cli(['users', 'create', '--email', 'w@example.test', '--name', 'W', '--password-stdin'], asOwner, 'short');
  assert.equal(weak.code, 1);
  assert.match(weak.stderr, /400 body\.password must NOT have fewer than 10 characters|at least 10/);

  const listed = await cli(['users', 'list'], asOwner);
  assert.equal(listed.code, 0, listed.stderr);
  const [header, ...rows] = listed.stdout.trim().split('\n');
  assert.match(header!, /^ID\s+EMAIL\s+NAME\s+ROLE\s+STATUS\s+CREATED$/);
  assert.ok(
    rows.some((r) => /owner@example\.test\s+Owner\s+owner\s+active/.test(r)),
    listed.stdout,
  );
  assert.ok(
    rows.some((r) => /nia@example\.test\s+Nia N\s+member\s+active/.test(r)),
    listed.stdout,
  );

  const disabled = await cli(['users', 'disable', 'nia@example.test'], asOwner);
  assert.equal(disabled.code, 0, disabled.stderr);
  assert.equal((await signIn('nia@example.test', password)).status, 401);
  assert.match((await cli(['users', 'list'], asOwner)).stdout, /nia@example\.test\s+Nia N\s+member\s+disabled/);
  assert.equal((await cli(['users', 'enable', 'nia@example.test'], asOwner)).code, 0);
  assert.equal((await signIn('nia@example.test', password)).status, 201);

  // dev.json's key belongs to an ordinary member (like the demo account's).
  const notOwner = await cli(['users', 'list']);
  assert.equal(notOwner.code, 1);
  assert.match(notOwner.stderr, /403 Only the owner of this Flowdesk can manage people/);
  const nobody = await cli(['users', 'disable', 'ghost@example.test'], asOwner);
  assert.equal(nobody.code, 1);
  assert.match(nobody.stderr, /No user with the email ghost@example\.test/);
  for (const args of [
    ['users', 'create', '--name', 'x'],
    ['users', 'create', '--email', 'x@example.test'],
    ['users', 'disable'],
    ['users', 'frobnicate'],
  ]) {
    const res = await cli(args, asOwner);
    assert.equal(res.code, 2, args.join(' '));
    assert.match(res.stderr, /Usage:/);
  }
});
