// The webhook secret and the Standard Webhooks signature are compared through crypto.timingSafeEqual
// (issue 22 item 24): a `!==` in their place answers the same, so the test looks for the call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timingSafeEqualCalls } from '@flowdesk/service-kit/testing';
import { checkSecretHeader, checkStandardWebhook, signStandardWebhook } from '../src/domain/signatures.ts';

test('x-webhook-secret and webhook-signature are checked in constant time, right or wrong', async () => {
  const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
  const body = Buffer.from('{"n":1}');
  const now = 1_800_000_000;
  const signed = (s: string) => ({ 'webhook-id': 'msg_1', 'webhook-timestamp': String(now), 'webhook-signature': signStandardWebhook(s, 'msg_1', now, body) });
  const other = 'whsec_' + Buffer.alloc(32, 8).toString('base64');
  const cases: [string, () => { ok: boolean }, boolean][] = [
    ['secret right', () => checkSecretHeader(secret, secret), true],
    ['secret wrong, same length', () => checkSecretHeader(secret, `${secret.slice(0, -1)}x`), false],
    ['signature right', () => checkStandardWebhook(secret, signed(secret), body, now * 1000), true],
    ['signature wrong', () => checkStandardWebhook(secret, signed(other), body, now * 1000), false],
  ];
  for (const [name, check, ok] of cases) {
    let verdict: { ok: boolean } | undefined;
    const calls = await timingSafeEqualCalls(() => (verdict = check()));
    assert.equal(verdict?.ok, ok, name);
    assert.ok(calls >= 1, `${name}: compared without timingSafeEqual`);
  }
});
