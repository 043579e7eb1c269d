// Internal-token verification across a signing-key rotation: a verifier configured with the old and
// the new public key accepts tokens of both (so auth can switch keys with no window of 401s), and
// still refuses a token from any other key, or one whose kid names a key it was not signed with.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { requiredScopeOf } from '@flowdesk/contracts';
import { createService, generateSigningKeys, internalAuth, signInternalToken, type SigningKeys } from '../src/index.ts';

const AUD = 'workspace-api';

async function verifier(publicKeyPem: string) {
  const app = createService({ name: 'verifier', logLevel: 'silent' });
  await app.register(internalAuth, { publicKeyPem, audience: AUD });
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
