import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { decodeBase62, generateKeySecret, RANDOM_BYTES } from '../src/domain/api-key-secret.ts';
import { createUser, verifyPassword } from '../src/domain/users.ts';
import { startTestAuth, type TestAuth } from './helpers/app.ts';

const KEY = /^fdk_[0-9A-Za-z]{43}$/;
let auth: TestAuth;
/** Every secret and password this file handles: none may ever reach a log line. */
const secrets: string[] = [];

before(async () => {
  auth = await startTestAuth();
});
after(() => auth.close());

describe('service basics', () => {
  test('/healthz and /readyz answer 200 naming the service', async () => {
    assert.deepEqual((await auth.call('GET', '/healthz')).body, { status: 'ok', service: 'auth' });
    assert.deepEqual((await auth.call('GET', '/readyz')).body, { status: 'ready', service: 'auth' });
  });

  test('an unknown path answers 404 with the JSON error body', async () => {
    const res = await auth.call('GET', '/no/such/path');
    assert.equal(res.status, 404);
    assert.equal(res.body.error, 'not_found');
  });
});

describe('key secrets', () => {
  test('have the fdk_ prefix and 256 bits of randomness, each one different', () => {
    const generated = Array.from({ length: 2000 }, () => generateKeySecret());
    const unique = new Set(generated.map((g) => g.secret));
    assert.equal(unique.size, generated.length);
    let ones = 0;
    for (const { secret, prefix, hash } of generated) {
      assert.match(secret, KEY);
      assert.equal(prefix, secret.slice(0, 12));
      assert.deepEqual(hash, createHash('sha256').update(secret).digest());
      // The random part is exactly 32 bytes re-encoded: nothing lost, nothing derived.
      const bytes = decodeBase62(secret.slice(4), RANDOM_BYTES);
      assert.equal(bytes.length, 32);
      for (const b of bytes) for (let i = 0; i < 8; i++) ones += (b >> i) & 1;
    }
    // Uniform random bits: half of them set, to within a few standard deviations (σ ≈ 358 here).
    const bits = generated.length * 256;
    assert.ok(Math.abs(ones - bits / 2) < 2000, `${ones} of ${bits} bits set`);
    // And every base62 character shows up at a given position.
    assert.equal(new Set(generated.map((g) => g.secret[20])).size, 62);
  });
});

describe('users', () => {
  test('email is unique case-insensitively; the password verifies and is stored only as a salted scrypt hash', async () => {
    const password = 'correct horse battery staple';
    secrets.push(password);
    const user = await createUser(auth.prisma, { email: 'Ann@Example.TEST', password });
    assert.equal(user.email, 'ann@example.test');
    await assert.rejects(createUser(auth.prisma, { email: 'ANN@example.test', password: 'another password' }), { code: 'conflict' });
    assert.equal((await verifyPassword(auth.prisma, 'ann@EXAMPLE.test', password))?.id, user.id);
    assert.equal(await verifyPassword(auth.prisma, 'ann@example.test', `${password}!`), null);
    assert.equal(await verifyPassword(auth.prisma, 'nobody@example.test', password), null);
    await assert.rejects(createUser(auth.prisma, { email: 'bob@example.test', password: 'short' }), { code: 'validation_failed' });

    const other = await createUser(auth.prisma, { email: 'carl@example.test', password });
    const { rows } = await auth.db.exec('SELECT id, password_hash FROM auth."user" WHERE id IN ($1, $2)', [user.id, other.id]);
    const hashes = rows.map((r) => String(r.password_hash));
    for (const h of hashes) {
      assert.match(h, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
      assert.ok(!h.includes(password));
    }
    assert.notEqual(hashes[0], hashes[1], 'same password, different salt, different hash');
  });
});

describe('key management over HTTP', () => {
  let user: { id: string; password: string };
  let writeKey: string;
  let readKey: string;

  before(async () => {
    user = await auth.newUser();
    writeKey = (await auth.newKey(user.id, 'mcp:write', 'bootstrap')).secret;
    readKey = (await auth.newKey(user.id, 'mcp:read', 'reader')).secret;
    secrets.push(writeKey, readKey, user.password);
  });

  test('create answers 201 with the secret once; the database holds only its SHA-256', async () => {
    const res = await auth.call('POST', '/auth/v1/api-keys', { token: writeKey, body: { name: 'ci', scope: 'write' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const { secret, id, name, scope, prefix, createdAt, lastUsedAt } = res.body;
    secrets.push(secret);
    assert.match(secret, KEY);
    assert.deepEqual({ name, scope, prefix, lastUsedAt }, { name: 'ci', scope: 'mcp:write', prefix: secret.slice(0, 12), lastUsedAt: null });
    assert.ok(!Number.isNaN(Date.parse(createdAt)));

    const dump = JSON.stringify((await auth.db.exec('SELECT * FROM auth.api_key')).rows);
    assert.ok(!dump.includes(secret.slice(4)), 'the random part of the key is stored nowhere');
    assert.ok(!dump.includes(secret.slice(12)), 'not even past the visible prefix');
    const { rows } = await auth.db.exec(`SELECT encode(secret_hash, 'hex') AS hash FROM auth.api_key WHERE id = $1`, [id]);
    assert.equal(rows[0]?.hash, createHash('sha256').update(secret).digest('hex'));

    // The new key works as a credential right away.
    assert.equal((await auth.call('GET', '/auth/v1/api-keys', { token: secret })).status, 200);
  });

  test('a read key creates a read-only key when asked; the list never carries a secret', async () => {
    const created = await auth.call('POST', '/auth/v1/api-keys', { token: writeKey, body: { name: 'dashboard', scope: 'read' } });
    assert.equal(created.body.scope, 'mcp:read');
    secrets.push(created.body.secret);

    const list = await auth.call('GET', '/auth/v1/api-keys', { token: readKey });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.items.map((k: { name: string }) => k.name).sort(), ['bootstrap', 'ci', 'dashboard', 'reader']);
    for (const k of list.body.items) assert.deepEqual(Object.keys(k).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'prefix', 'scope']);
    for (const s of secrets) assert.ok(!list.text.includes(s.slice(12)));
    assert.ok(list.text.includes(created.body.prefix));
  });

  test('bad requests are refused with the field named', async () => {
    const res = await auth.call('POST', '/auth/v1/api-keys', { token: writeKey, body: { name: 'x', scope: 'admin' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'validation_failed');
    assert.match(res.body.message, /scope/);
    assert.equal((await auth.call('POST', '/auth/v1/api-keys', { token: writeKey, body: { name: '  ', scope: 'read' } })).status, 400);
  });

  test('a read key may list but not create or revoke: 403 with the forbidden error body and a step-up challenge', async () => {
    const create = await auth.call('POST', '/auth/v1/api-keys', { token: readKey, body: { name: 'escalate', scope: 'write' } });
    assert.equal(create.status, 403);
    assert.equal(create.body.error, 'forbidden');
    assert.match(create.body.message, /requires the mcp:write scope/);
    assert.match(create.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="mcp:write"/);
    const victim = await auth.newKey(user.id, 'mcp:read');
    assert.equal((await auth.call('DELETE', `/auth/v1/api-keys/${victim.id}`, { token: readKey })).status, 403);
    assert.equal((await auth.call('DELETE', `/auth/v1/connected-apps/${victim.id}`, { token: readKey })).status, 403);
  });

  test('missing, wrong, truncated or non-key credentials get 401 with the unauthorized error body', async () => {
    const attempts: Record<string, string | undefined> = {
      missing: undefined,
      wrong: `fdk_${'A'.repeat(43)}`,
      truncated: writeKey.slice(0, -1),
      extended: `${writeKey}x`,
      jwt: 'eyJhbGciOiJFZERTQSJ9.e30.sig',
    };
    for (const [what, token] of Object.entries(attempts)) {
      const res = await auth.call('GET', '/auth/v1/api-keys', { token });
      assert.equal(res.status, 401, what);
      assert.equal(res.body.error, 'unauthorized', what);
      assert.equal(typeof res.body.message, 'string');
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /, what);
    }
    // Authentication comes before the body: an anonymous caller learns nothing from validation.
    assert.equal((await auth.call('POST', '/auth/v1/api-keys', { body: { bad: true } })).status, 401);
  });

  test('revoke: the key stops working on the very next request and leaves the list', async () => {
    const doomed = await auth.newKey(user.id, 'mcp:write', 'doomed');
    secrets.push(doomed.secret);
    assert.equal((await auth.call('GET', '/auth/v1/api-keys', { token: doomed.secret })).status, 200);
    assert.equal((await auth.call('DELETE', `/auth/v1/api-keys/${doomed.id}`, { token: writeKey })).status, 204);
    assert.equal((await auth.call('GET', '/auth/v1/api-keys', { token: doomed.secret })).status, 401);
    const list = await auth.call('GET', '/auth/v1/api-keys', { token: writeKey });
    assert.ok(!list.body.items.some((k: { id: string }) => k.id === doomed.id));
    // Revoking twice: it is gone.
    assert.equal((await auth.call('DELETE', `/auth/v1/api-keys/${doomed.id}`, { token: writeKey })).status, 404);
  });

  test("another user's key answers 404 like an unknown one, and keeps working", async () => {
    const stranger = await auth.newUser();
    const theirs = await auth.newKey(stranger.id, 'mcp:read', 'theirs');
    secrets.push(theirs.secret);
    const res = await auth.call('DELETE', `/auth/v1/api-keys/${theirs.id}`, { token: writeKey });
    const unknown = await auth.call('DELETE', '/auth/v1/api-keys/00000000-0000-4000-8000-000000000000', { token: writeKey });
    assert.deepEqual([res.status, res.body], [unknown.status, unknown.body]);
    assert.equal(res.status, 404);
    assert.equal((await auth.call('GET', '/auth/v1/api-keys', { token: theirs.secret })).status, 200);
    const theirList = await auth.call('GET', '/auth/v1/api-keys', { token: theirs.secret });
    assert.deepEqual(
      theirList.body.items.map((k: { name: string }) => k.name),
      ['theirs'],
    );
    assert.equal((await auth.call('DELETE', '/auth/v1/api-keys/not-a-uuid', { token: writeKey })).status, 400);
  });

  test('Connected Apps lists the keys with type, scope and dates, and revokes them', async () => {
    const app = await auth.newKey(user.id, 'mcp:read', 'cursor');
    const res = await auth.call('GET', '/auth/v1/connected-apps', { token: readKey });
    assert.equal(res.status, 200);
    const entry = res.body.items.find((i: { id: string }) => i.id === app.id);
    assert.deepEqual(
      { ...entry, createdAt: typeof entry.createdAt },
      { id: app.id, type: 'api_key', name: 'cursor', scope: 'mcp:read', createdAt: 'string', lastUsedAt: null },
    );
    assert.equal((await auth.call('DELETE', `/auth/v1/connected-apps/${app.id}`, { token: writeKey })).status, 204);
    assert.equal((await auth.call('GET', '/auth/v1/connected-apps', { token: app.secret })).status, 401);
  });

  test('last used is recorded on use, at most once a minute', async () => {
    const probe = await auth.newKey(user.id, 'mcp:read', 'probe');
    const lastUsed = async () => {
      const list = await auth.call('GET', '/auth/v1/api-keys', { token: writeKey });
      return list.body.items.find((k: { id: string }) => k.id === probe.id).lastUsedAt as string | null;
    };
    const t0 = new Date('2030-01-01T10:00:00.000Z');
    auth.setNow(t0);
    try {
      assert.equal(await lastUsed(), null);
      await auth.call('GET', '/auth/v1/api-keys', { token: probe.secret });
      assert.equal(await lastUsed(), t0.toISOString());
      auth.setNow(new Date(t0.getTime() + 59_000));
      await auth.call('GET', '/auth/v1/api-keys', { token: probe.secret });
      assert.equal(await lastUsed(), t0.toISOString(), 'not rewritten within the minute');
      const t2 = new Date(t0.getTime() + 61_000);
      auth.setNow(t2);
      await auth.call('GET', '/auth/v1/api-keys', { token: probe.secret });
      assert.equal(await lastUsed(), t2.toISOString());
    } finally {
      auth.setNow(undefined);
    }
  });
});

test('no key or password ever reaches the logs', () => {
  const text = auth.logs.join('');
  assert.ok(auth.logs.length > 20 && text.includes('/auth/v1/api-keys'), 'the logs were captured');
  assert.ok(secrets.length >= 8);
  for (const s of secrets) {
    assert.ok(!text.includes(s), 'a secret is in the logs');
    if (s.startsWith('fdk_')) assert.ok(!text.includes(s.slice(12)), 'part of a secret is in the logs');
  }
});
