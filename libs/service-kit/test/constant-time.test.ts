// Secret comparisons run through crypto.timingSafeEqual (issue 22 item 24): replacing one with
// `===`/`!==` gives the same answers, so only the call itself tells them apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { constantTimeEqual, hmacSha256Hex, verifyHmacSha256 } from '../src/constant-time.ts';
import { timingSafeEqualCalls } from '../src/testing.ts';

test('constantTimeEqual and verifyHmacSha256 compare through timingSafeEqual, whatever the inputs', async () => {
  const secret = 'a'.repeat(40);
  const cases: [string, () => boolean, boolean][] = [
    ['equal', () => constantTimeEqual(secret, secret), true],
    ['differs at the end', () => constantTimeEqual(secret, `${'a'.repeat(39)}b`), false],
    ['another length', () => constantTimeEqual(secret, 'a'), false],
    ['signature right', () => verifyHmacSha256('body', 'key', `sha256=${hmacSha256Hex('key', 'body')}`), true],
    ['signature wrong', () => verifyHmacSha256('body', 'key', `sha256=${hmacSha256Hex('key', 'other')}`), false],
  ];
  for (const [name, check, expected] of cases) {
    let answer: boolean | undefined;
    const calls = await timingSafeEqualCalls(() => (answer = check()));
    assert.equal(answer, expected, name);
    assert.ok(calls >= 1, `${name}: compared without timingSafeEqual`);
  }
});
