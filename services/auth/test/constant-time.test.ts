// auth's secret comparisons run through crypto.timingSafeEqual (issue 22 item 24): the service clients'
// secrets, API key hashes, OAuth client secrets and codes. A `===`/`!==` (or Buffer.equals) in their
// place answers the same, so the test looks for the call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timingSafeEqualCalls } from '@flowdesk/service-kit/testing';
import { generateKeySecret, hashKeySecret, secretMatches } from '../src/domain/api-key-secret.ts';
import { sameDigest } from '../src/domain/oauth/secrets.ts';
import { authenticateService } from '../src/domain/service-clients.ts';

test('service secrets, API key hashes and OAuth digests are compared in constant time, right or wrong', async () => {
  const clients = { console: 'c'.repeat(43) };
  const key = generateKeySecret();
  const other = generateKeySecret();
  const digest = hashKeySecret('one');
  const cases: [string, () => unknown, unknown][] = [
    ['service secret right', () => authenticateService(clients, { clientId: 'console', secret: 'c'.repeat(43) }), 'console'],
    ['service secret wrong', () => authenticateService(clients, { clientId: 'console', secret: `${'c'.repeat(42)}d` }), undefined],
    ['unknown service', () => authenticateService(clients, { clientId: 'nobody', secret: 'c'.repeat(43) }), undefined],
    ['API key right', () => secretMatches(key.secret, hashKeySecret(key.secret)), true],
    ['API key wrong', () => secretMatches(other.secret, hashKeySecret(key.secret)), false],
    ['digest same', () => sameDigest(digest, hashKeySecret('one')), true],
    ['digest differs', () => sameDigest(digest, hashKeySecret('two')), false],
  ];
  for (const [name, check, expected] of cases) {
    let answer: unknown;
    const calls = await timingSafeEqualCalls(() => (answer = check()));
    assert.equal(answer, expected, name);
    assert.ok(calls >= 1, `${name}: compared without timingSafeEqual`);
  }
});
