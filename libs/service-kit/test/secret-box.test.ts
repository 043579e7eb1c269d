// SecretBox: AES-256-GCM sealing shared by webhook secrets (v1, no key id) and workflow credentials
// (v2, with a key id for rotation, bound to the ciphertext).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { SecretBox } from '../src/secret-box.ts';

test('v1 (no key id) and v2 (key id) round trip; the sealed text is not the plaintext and differs each time', () => {
  const key = randomBytes(32);
  const plain = 'sk_live_abcdef123456';
  for (const box of [new SecretBox(key), new SecretBox(key, { keyId: 'k1' })]) {
    const a = box.seal(plain);
    const b = box.seal(plain);
    assert.notEqual(a, b, 'a fresh IV each time');
    assert.ok(!a.includes(plain) && !a.includes(Buffer.from(plain).toString('base64url')));
    assert.equal(box.open(a), plain);
  }
  assert.match(new SecretBox(key).seal(plain), /^v1\./);
  assert.match(new SecretBox(key, { keyId: 'k1' }).seal(plain), /^v2\.k1\./);
});

test('rotation: a value sealed under the old key opens with it as a previous key, and is flagged for re-sealing', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  const sealedOld = new SecretBox(oldKey, { keyId: 'k1' }).seal('v');
  const rotated = new SecretBox(newKey, { keyId: 'k2', previous: { k1: oldKey } });
  assert.equal(rotated.open(sealedOld), 'v');
  assert.equal(rotated.needsReseal(sealedOld), true);
  assert.equal(rotated.needsReseal(rotated.seal('v')), false);
  assert.throws(() => new SecretBox(newKey, { keyId: 'k2' }).open(sealedOld), /key "k1", which is not configured/);
});

test('tampering is detected: another key id on the same ciphertext, or a changed byte, does not open', () => {
  const key = randomBytes(32);
  const box = new SecretBox(key, { keyId: 'k1', previous: { k0: key } });
  const sealed = box.seal('secret');
  assert.throws(() => box.open(sealed.replace(/^v2\.k1\./, 'v2.k0.')), 'the key id is authenticated data');
  const parts = sealed.split('.');
  parts[4] = Buffer.from(Buffer.from(parts[4]!, 'base64url').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64url');
  assert.throws(() => box.open(parts.join('.')));
  assert.throws(() => box.open('plain text'), /unknown sealed secret format/);
  assert.throws(() => new SecretBox(randomBytes(16)), /32 bytes/);
});
