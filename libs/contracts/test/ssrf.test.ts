import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { test } from 'node:test';
import { blockedReason, ipVersion, parseAllowlist, parseIp, privateUrlWarning } from '../src/ssrf.ts';

test('the editor warns under an HTTP Request URL the SSRF guard will refuse, with the SSRF_ALLOWLIST hint', () => {
  const cases: Array<[string, RegExp]> = [
    ['http://localhost:3000/hook', /^localhost is a loopback address.*SSRF_ALLOWLIST=localhost:3000/],
    ['http://127.0.0.1:9000/x', /127\.0\.0\.1 is a loopback address.*SSRF_ALLOWLIST=127\.0\.0\.1:9000/],
    ['https://api.localhost/', /loopback/],
    ['http://[::1]:8080/', /\[::1\] is a loopback address/],
    ['http://192.168.1.20/api', /private address.*SSRF_ALLOWLIST=192\.168\.1\.20,/],
    ['http://10.0.0.5/', /private/],
    ['http://169.254.169.254/latest/meta-data/', /link-local \(cloud metadata\)/],
    ['http://0x7f.1/', /127\.0\.0\.1 is a loopback/], // the URL parser's forms, as the engine sees them
    ['http://[::ffff:127.0.0.1]/', /loopback \(IPv4 127\.0\.0\.1 embedded in IPv6\)/],
  ];
  for (const [url, expected] of cases) assert.match(privateUrlWarning(url) ?? '(none)', expected, url);
});

test('no warning for what SSRF_ALLOWLIST already opens, as the guard matches it; the rest still warns', () => {
  const allow = parseAllowlist('localhost:3000, 127.0.0.1:9000 10.1.0.0/16 hooks.internal [::1]:8080 192.168.1.20');
  for (const url of [
    'http://localhost:3000/hook',
    'http://127.0.0.1:9000/x',
    'http://[::1]:8080/',
    'http://10.1.2.3/',
    'http://[::ffff:10.1.2.3]/', // the mapped form of an allowed address
    'http://192.168.1.20/api',
    'https://hooks.internal/x',
  ])
    assert.equal(privateUrlWarning(url, allow), null, url);
  for (const url of ['http://localhost:3001/hook', 'http://127.0.0.1/x', 'http://[::1]:8081/', 'http://10.2.0.1/', 'http://192.168.1.21/'])
    assert.match(privateUrlWarning(url, allow) ?? '(none)', /SSRF_ALLOWLIST/, url);
  // An allowlist opens nothing for the default port of the other scheme: 127.0.0.1:80 is not :443.
  assert.match(privateUrlWarning('https://127.0.0.1/', parseAllowlist('127.0.0.1:80')) ?? '(none)', /loopback/);
});

test('no warning for public hosts, names only DNS can judge, templates and text that is not a URL yet', () => {
  for (const url of [
    'https://api.example.com/orders',
    'http://8.8.8.8/',
    'https://crm.internal/x',
    '{{trigger.url}}',
    'http://{{trigger.host}}/x',
    'https://',
    '',
    'localhost:3000',
  ])
    assert.equal(privateUrlWarning(url), null, url);
});

test('the shared IP grammar is the one of net.isIP, and the blocked table judges what the engine judged', () => {
  for (const text of ['127.0.0.1', '01.2.3.4', '256.0.0.1', '::1', 'fe80::1%eth0', '1:2:3:4:5:6:7:8:9', '::ffff:1.2.3.4', '1::2::3', 'abc'])
    assert.equal(ipVersion(text), isIP(text), text);
  assert.equal(blockedReason(parseIp('172.31.255.255')!), 'private');
  assert.equal(blockedReason(parseIp('172.32.0.1')!), null);
  assert.equal(blockedReason(parseIp('64:ff9b::7f00:1')!), 'loopback (IPv4 127.0.0.1 embedded in IPv6)');
});
