import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timingSafeEqualCalls } from '@flowdesk/service-kit/testing';
import { csrfTokenFor, csrfTokenMatches, isCrossOrigin } from '../src/domain/csrf.ts';

const allowed = new Set(['https://flowdesk.example.com']);

test('the CSRF token is derived from the session token: stable for one session, different for another, compared exactly', () => {
  const a = csrfTokenFor('fds_a');
  assert.equal(a, csrfTokenFor('fds_a'));
  assert.notEqual(a, csrfTokenFor('fds_b'));
  assert.match(a, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(csrfTokenMatches('fds_a', a));
  for (const wrong of [undefined, '', a.slice(1), `${a}x`, csrfTokenFor('fds_b')]) assert.equal(csrfTokenMatches('fds_a', wrong), false);
});

test('cross-origin writes: another site, a null origin or a foreign Origin are refused; the public origin, the addressed host and non-browsers pass', () => {
  assert.equal(isCrossOrigin({ secFetchSite: 'cross-site' }, allowed), true);
  assert.equal(isCrossOrigin({ secFetchSite: 'same-site', origin: 'https://flowdesk.example.com' }, allowed), true);
  assert.equal(isCrossOrigin({ origin: 'null' }, allowed), true);
  assert.equal(isCrossOrigin({ origin: 'https://evil.example', host: 'flowdesk.example.com' }, allowed), true);
  assert.equal(isCrossOrigin({ origin: 'not a url' }, allowed), true);
  assert.equal(isCrossOrigin({ origin: 'https://flowdesk.example.com', secFetchSite: 'same-origin' }, allowed), false);
  assert.equal(isCrossOrigin({ origin: 'http://localhost:8080', host: 'localhost:8080' }, allowed), false);
  // Another port is another origin: a page on localhost:9999 may not write to the console on :8080.
  assert.equal(isCrossOrigin({ origin: 'http://localhost:9999', host: 'localhost:8080' }, allowed), true);
  assert.equal(isCrossOrigin({ origin: 'http://localhost', host: 'localhost:8080' }, allowed), true);
  assert.equal(isCrossOrigin({ origin: 'https://flowdesk.example.com:8443', host: 'flowdesk.example.com:8443' }, allowed), false);
  assert.equal(isCrossOrigin({ origin: 'https://flowdesk.example.com:8443' }, allowed), true);
  assert.equal(isCrossOrigin({ secFetchSite: 'none' }, allowed), false);
  assert.equal(isCrossOrigin({}, allowed), false);
});

test('the CSRF token is compared through timingSafeEqual, right or wrong (a `!==` in its place answers the same)', async () => {
  const right = csrfTokenFor('fds_a');
  for (const given of [right, `${right.slice(0, -1)}x`]) {
    const calls = await timingSafeEqualCalls(() => csrfTokenMatches('fds_a', given));
    assert.ok(calls >= 1, `compared without timingSafeEqual: ${given}`);
  }
});
