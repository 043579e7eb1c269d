import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blockedReason, parseAllowlist, screenUrl, SsrfPolicy } from '../src/outbound/ssrf.ts';
import { parseIp } from '../src/outbound/ip-address.ts';
import { RequestRefusedError, SsrfBlockedError } from '../src/outbound/errors.ts';
import { nextHop } from '../src/outbound/redirect.ts';

const policy = new SsrfPolicy();

test('loopback written in every notation the URL parser accepts is refused', () => {
  for (const url of [
    'http://127.0.0.1/',
    'http://2130706433/', // decimal
    'http://0177.0.0.1/', // octal
    'http://127.1/', // short form
    'http://0x7f.1/', // hex
    'http://0x7f000001/',
    'http://127.000.000.001/',
    'http://[::1]/',
    'http://[0:0:0:0:0:0:0:1]/',
    'http://[::ffff:127.0.0.1]/', // IPv4-mapped
    'http://[::ffff:7f00:1]/', // the same, hex groups
    'http://[::127.0.0.1]/', // IPv4-compatible
    'http://[64:ff9b::7f00:1]/', // NAT64 of 127.0.0.1
    'http://[2002:7f00:1::]/', // 6to4 of 127.0.0.1
  ]) {
    assert.throws(
      () => screenUrl(url, policy),
      (e: unknown) => e instanceof SsrfBlockedError && /loopback/.test(e.message),
      url,
    );
  }
});

test('private, link-local, metadata, CGNAT, unique-local, multicast, broadcast and unspecified addresses are refused', () => {
  const cases: Array<[string, RegExp]> = [
    ['http://10.0.0.1/', /private/],
    ['http://172.16.5.4/', /private/],
    ['http://172.31.255.255/', /private/],
    ['http://192.168.1.1/', /private/],
    ['http://169.254.169.254/latest/meta-data/', /link-local/],
    ['http://100.64.0.1/', /carrier-grade NAT/],
    ['http://0.0.0.0/', /unspecified/],
    ['http://0/', /unspecified/],
    ['http://[::]/', /unspecified/],
    ['http://[fe80::1]/', /link-local/],
    ['http://[fd12:3456::1]/', /unique-local/],
    ['http://[fc00::1]/', /unique-local/],
    ['http://224.0.0.1/', /multicast/],
    ['http://[ff02::1]/', /multicast/],
    ['http://255.255.255.255/', /broadcast/],
    ['http://[::ffff:169.254.169.254]/', /link-local .*embedded/],
    ['http://[::ffff:a00:1]/', /private .*embedded/],
    ['http://[64:ff9b::a9fe:a9fe]/', /link-local/],
  ];
  for (const [url, reason] of cases) {
    assert.throws(
      () => screenUrl(url, policy),
      (e: unknown) => e instanceof SsrfBlockedError && reason.test(e.message),
      url,
    );
  }
});

test('public addresses, including their IPv4-mapped form, are let through', () => {
  for (const ip of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
    assert.equal(blockedReason(parseIp(ip)!), null, ip);
  }
});

test('the refusal message says what was refused, why, and how an operator can open it', () => {
  assert.throws(() => screenUrl('http://169.254.169.254/', policy), {
    message:
      'request to 169.254.169.254 refused by the SSRF guard: 169.254.169.254 is a link-local (cloud metadata) address. An operator can allow it with SSRF_ALLOWLIST.',
  });
  assert.throws(() => policy.checkAddress('rebind.example', 80, '127.0.0.1'), /rebind\.example resolves to 127\.0\.0\.1, a loopback address/);
});

test('only http and https URLs are accepted', () => {
  for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com/', 'data:text/plain,hi', 'javascript:alert(1)']) {
    assert.throws(() => screenUrl(url, policy), RequestRefusedError, url);
  }
  assert.throws(() => screenUrl('not a url', policy), /not a valid absolute URL/);
});

test('the allowlist opens hosts, host:port pairs, single addresses and CIDR ranges', () => {
  const allow = new SsrfPolicy(parseAllowlist('Internal.Example, localhost:8080 10.1.0.0/16,[::1]:9000, 127.0.0.1 fd00::/8'));
  assert.equal(allow.allowsHost('internal.example', 1234), true, 'host names match case-insensitively on any port');
  assert.equal(allow.allowsHost('localhost', 8080), true);
  assert.equal(allow.allowsHost('localhost', 8081), false, 'a host:port entry opens that port only');
  assert.equal(allow.allowsHost('::1', 9000), true);
  assert.equal(allow.allowsHost('[::1]', 9001), false);
  assert.doesNotThrow(() => screenUrl('http://10.1.200.3/', allow));
  assert.throws(() => screenUrl('http://10.2.0.1/', allow), SsrfBlockedError, 'outside the range stays refused');
  assert.doesNotThrow(() => screenUrl('http://127.0.0.1:5/', allow));
  assert.doesNotThrow(() => screenUrl('http://[::ffff:127.0.0.1]/', allow), 'the mapped form of an allowed IPv4 address is the same target');
  assert.throws(() => screenUrl('http://127.0.0.2/', allow), SsrfBlockedError);
  assert.doesNotThrow(() => screenUrl('http://[fd00::5]/', allow));
});

test('SsrfPolicy.fromEnv reads SSRF_ALLOWLIST and a malformed entry fails loudly', () => {
  const p = SsrfPolicy.fromEnv({ SSRF_ALLOWLIST: 'host1,10.1.0.0/16' });
  assert.equal(p.allowsHost('host1', 443), true);
  assert.doesNotThrow(() => p.checkAddress('x', 80, '10.1.2.3'));
  assert.throws(() => SsrfPolicy.fromEnv({ SSRF_ALLOWLIST: '10.0.0.0/99' }), /invalid prefix length/);
  assert.throws(() => SsrfPolicy.fromEnv({ SSRF_ALLOWLIST: 'http://host/' }), /"http:\/\/host\/" is not/);
  assert.throws(() => SsrfPolicy.fromEnv({ SSRF_ALLOWLIST: 'host:99999' }), /not a host, host:port, IP or CIDR/);
  assert.equal(SsrfPolicy.fromEnv({}).allowlist.cidrs.length, 0, 'no variable: nothing is opened');
});

test('redirects keep credentials on the same origin only and turn POST into GET on 302/303', () => {
  const hop = {
    url: new URL('https://a.example/x'),
    method: 'POST' as const,
    headers: { Authorization: 'Bearer t', 'content-type': 'application/json', 'x-k': '1' },
    body: '{}',
  };
  const cross = nextHop(hop, 302, 'https://b.example/y', 0);
  assert.equal(cross.method, 'GET');
  assert.equal(cross.body, undefined);
  assert.deepEqual(cross.headers, { 'x-k': '1' });
  const same = nextHop(hop, 307, '/z', 0);
  assert.equal(same.method, 'POST');
  assert.equal(same.body, '{}');
  assert.equal(same.url.href, 'https://a.example/z');
  assert.equal(same.headers.Authorization, 'Bearer t');
  assert.throws(() => nextHop(hop, 302, 'file:///etc/passwd', 0), /scheme "file:" refused/);
  assert.throws(() => nextHop(hop, 302, '/again', 5), /too many redirects/);
});
