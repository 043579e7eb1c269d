// Internal-token verification across a signing-key rotation: a verifier configured with the old and
// the new public key accepts tokens of both (so auth can switch keys with no window of 401s), and
// still refuses a token from any other key, or one whose kid names a key it was not signed with.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { requiredScopeOf } from '@flowdesk/contracts';
import { createService, generateSigningKeys, internalAuth, signInternalToken, VerifiedTokenCache, type SigningKeys } from '../src/index.ts';
import type { InternalClaims } from '@flowdesk/contracts';

const AUD = 'workspace-api';

async function verifier(publicKeyPem: string, options: { clockToleranceSeconds?: number } = {}) {
  const app = createService({ name: 'verifier', logLevel: 'silent' });
  await app.register(internalAuth, { publicKeyPem, audience: AUD, ...options });
  app.get('/me', { preHandler: app.requireAccess('read') }, async (req) => ({ userId: req.identity.userId }));
  await app.ready();
  return app;
}

const userId = randomUUID();
const token = (keys: Pick<SigningKeys, 'privateKeyPem' | 'kid'>) => signInternalToken(keys, { sub: userId, aud: AUD, scope: requiredScopeOf('read') });
const call = async (app: Awaited<ReturnType<typeof verifier>>, bearer: string) =>
  (await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${bearer}` } })).statusCode;

test('during a rotation both keys verify; any other key, or a kid pointing at the other key, is refused', async () => {
  const [oldKeys, newKeys, stranger] = [generateSigningKeys(), generateSigningKeys(), generateSigningKeys()];
  const app = await verifier(`${oldKeys.publicKeyPem}${newKeys.publicKeyPem}`);
  try {
    assert.equal(await call(app, token(oldKeys)), 200, 'tokens of the old key, still in flight');
    assert.equal(await call(app, token(newKeys)), 200, 'tokens of the new key');
    assert.equal(await call(app, token(stranger)), 401, 'a key it was never given');
    assert.equal(await call(app, token({ privateKeyPem: stranger.privateKeyPem, kid: newKeys.kid })), 401, 'a forged kid does not pick the key');
    assert.equal(await call(app, token({ privateKeyPem: newKeys.privateKeyPem, kid: 'unknown' })), 401, 'an unknown kid');
  } finally {
    await app.close();
  }
});

test('after the rotation (old key removed) the old key is refused; one key verifies whatever the kid', async () => {
  const [oldKeys, newKeys] = [generateSigningKeys(), generateSigningKeys()];
  const app = await verifier(newKeys.publicKeyPem);
  try {
    assert.equal(await call(app, token(newKeys)), 200);
    assert.equal(await call(app, token({ privateKeyPem: newKeys.privateKeyPem, kid: 'any' })), 200);
    assert.equal(await call(app, token(oldKeys)), 401);
  } finally {
    await app.close();
  }
});

test('a configuration without an Ed25519 PEM public key is refused at start', async () => {
  await assert.rejects(verifier('not a key'), /no PEM public key/);
});

// Verified tokens are cached (an Ed25519 verification per request was 9 % of workspace-api's CPU);
// the cache must never accept what verification would refuse.
test('a cached token is still checked byte for byte: a changed signature or payload is refused after the real one was accepted', async () => {
  const keys = generateSigningKeys();
  const app = await verifier(keys.publicKeyPem);
  try {
    const good = token(keys);
    assert.equal(await call(app, good), 200);
    assert.equal(await call(app, good), 200, 'the cached token, again');
    const [h, p, sig] = good.split('.') as [string, string, string];
    const flipped = `${h}.${p}.${sig.slice(0, -2)}${sig.at(-2) === 'A' ? 'B' : 'A'}${sig.at(-1)}`;
    assert.equal(await call(app, flipped), 401, 'another signature');
    const otherUser = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: randomUUID() })).toString('base64url');
    assert.equal(await call(app, `${h}.${otherUser}.${sig}`), 401, 'another payload under the cached signature');
    const forOther = signInternalToken(keys, { sub: userId, aud: 'auth', scope: requiredScopeOf('read') });
    assert.equal(await call(app, forOther), 401, 'another audience');
  } finally {
    await app.close();
  }
});

test('a cached token stops working at its exp', async () => {
  const keys = generateSigningKeys();
  const app = await verifier(keys.publicKeyPem, { clockToleranceSeconds: 0 });
  try {
    const short = signInternalToken(keys, { sub: userId, aud: AUD, scope: requiredScopeOf('read') }, { ttlSeconds: 1 });
    const exp = (JSON.parse(Buffer.from(short.split('.')[1]!, 'base64url').toString()) as InternalClaims).exp * 1000;
    assert.equal(await call(app, short), 200, 'accepted (and cached) while valid');
    while (Date.now() <= exp) await new Promise((r) => setImmediate(r));
    assert.equal(await call(app, short), 401, 'refused once expired, although it was cached');
  } finally {
    await app.close();
  }
});

test('VerifiedTokenCache: entries die at exp, with their key, and the least recently used go first', () => {
  let now = 1_000_000;
  const configured = new Set(['k1', 'k2']);
  const cache = new VerifiedTokenCache(
    2,
    (k) => configured.has(k),
    () => now,
  );
  const claims = (expSeconds: number) => ({ sub: userId, exp: expSeconds }) as InternalClaims;

  cache.set('t1', claims(now / 1000 + 10), 'k1');
  assert.equal(cache.get('t1')?.sub, userId);
  now += 9_999;
  assert.ok(cache.get('t1'), 'served until its exp');
  now += 1;
  assert.equal(cache.get('t1'), undefined, 'not at its exp');
  cache.set('expired', claims(now / 1000 - 1), 'k1');
  assert.equal(cache.get('expired'), undefined, 'an expired token is never stored');

  cache.set('t2', claims(now / 1000 + 60), 'k2');
  configured.delete('k2');
  assert.equal(cache.get('t2'), undefined, 'its key was removed from the configuration (revoked): not served');
  configured.add('k2');
  assert.equal(cache.get('t2'), undefined, 'and gone for good: it is verified afresh');

  cache.set('a', claims(now / 1000 + 60), 'k1');
  cache.set('b', claims(now / 1000 + 60), 'k1');
  assert.ok(cache.get('a'), 'a is now the most recently used');
  cache.set('c', claims(now / 1000 + 60), 'k1');
  assert.equal(cache.size, 2, 'bounded');
  assert.equal(cache.get('b'), undefined, 'the least recently used was evicted');
  assert.ok(cache.get('a') && cache.get('c'));
});
