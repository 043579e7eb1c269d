import assert from 'node:assert/strict';
import net from 'node:net';
import { after, afterEach, before, beforeEach, mock, test } from 'node:test';
import { createGuardedHttpClient, type GuardedHttpOptions, type ResolveHost } from '@flowdesk/service-kit';
import { RequestRefusedError, RequestTimeoutError, SsrfBlockedError } from '../src/domain/errors.ts';
import { parseAllowlist, SsrfPolicy } from '@flowdesk/service-kit';
import type { OutboundRequest } from '../src/domain/ports.ts';
import { startServer, type TestServer } from './support.ts';

// Every socket undici opens goes through net.connect: counting calls proves that a refused
// address is refused before any connection attempt (these tests never send packets off loopback).
let connects: ReturnType<typeof mock.method>;
beforeEach(() => {
  connects = mock.method(net, 'connect');
});
afterEach(() => mock.restoreAll());

let v4: TestServer;
let v6: TestServer;
let other: TestServer;
before(async () => {
  v4 = await startServer((req, res) => {
    const hops = /^\/hops\/(\d+)$/.exec(req.url);
    if (hops) {
      const n = Number(hops[1]);
      res.writeHead(n > 0 ? 302 : 200, n > 0 ? { location: `/hops/${n - 1}` } : {}).end(n > 0 ? '' : 'arrived');
    } else if (req.url.startsWith('/redirect?to=')) {
      res.writeHead(302, { location: decodeURIComponent(req.url.slice('/redirect?to='.length)) }).end();
    } else if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(5 * 1024 * 1024));
    } else if (req.url === '/hang') {
      // never answers
    } else {
      res.end(`hello ${req.method} ${req.url}`);
    }
  });
  v6 = await startServer((req, res) => res.end('hello v6'), '::1');
  other = await startServer((req, res) => res.end('should never be reached'));
});
after(async () => {
  await Promise.all([v4.close(), v6.close(), other.close()]);
});

const get = (url: string, extra: Partial<OutboundRequest> = {}): OutboundRequest => ({
  method: 'GET',
  url,
  headers: {},
  timeoutMs: 3_000,
  maxBodyBytes: 1 << 20,
  ...extra,
});

async function send(url: string, opts: GuardedHttpOptions = {}, extra: Partial<OutboundRequest> = {}) {
  const client = createGuardedHttpClient(opts);
  try {
    const res = await client.send(get(url, extra));
    return { ...res, text: Buffer.from(res.body).toString() };
  } finally {
    await client.close();
  }
}

const allow = (list: string) => ({ policy: new SsrfPolicy(parseAllowlist(list)) });

test('by default loopback, private, metadata and mapped addresses are refused before any connection', async () => {
  const targets = [
    `${v4.url}/`,
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    `${v6.url}/`,
    `http://[::ffff:127.0.0.1]:${v4.port}/`,
    `http://2130706433:${v4.port}/`,
    'https://192.168.0.1/',
  ];
  for (const url of targets) {
    await assert.rejects(send(url), (e: unknown) => e instanceof SsrfBlockedError && /refused by the SSRF guard/.test(e.message), url);
  }
  assert.equal(connects.mock.callCount(), 0, 'no socket was opened');
  assert.equal(v4.received.length + v6.received.length, 0);
});

test('a hostname resolving to loopback (localhost) is refused by default', async () => {
  await assert.rejects(send(`http://localhost:${v4.port}/`), /localhost resolves to 127\.0\.0\.1, a loopback address/);
  assert.equal(connects.mock.callCount(), 0);
  assert.equal(v4.received.length, 0);
});

test('the same targets are reached once the operator allowlists them', async () => {
  assert.equal((await send(`${v4.url}/a`, allow('127.0.0.1'))).text, 'hello GET /a');
  assert.equal((await send(`${v6.url}/`, allow('::1'))).text, 'hello v6');
  assert.equal((await send(`http://[::ffff:127.0.0.1]:${v4.port}/m`, allow('127.0.0.0/8'))).text, 'hello GET /m');
  assert.equal((await send(`http://localhost:${v4.port}/l`, allow('localhost'))).text, 'hello GET /l');
  assert.equal((await send(`${v4.url}/p`, allow(`127.0.0.1:${v4.port}`))).text, 'hello GET /p');
});

test('a host:port entry does not open other ports of the same host', async () => {
  await assert.rejects(send(`${other.url}/`, allow(`127.0.0.1:${v4.port}`)), SsrfBlockedError);
  assert.equal(other.received.length, 0);
});

test('a rebinding DNS (public answer first, loopback at connect time) is refused at connect time', async () => {
  const seen = v4.received.length;
  let calls = 0;
  const rebinding: ResolveHost = async () => (++calls === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
  await assert.rejects(send(`http://rebind.test:${v4.port}/`, { resolve: rebinding }), /rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
  assert.equal(calls, 2, 'the second answer came from the lookup the socket itself used');
  assert.equal(v4.received.length, seen, 'nothing reached the loopback server');
});

test('every resolved address is checked: one loopback answer among public ones is enough to refuse', async () => {
  const mixed: ResolveHost = async () => [
    { address: '93.184.216.34', family: 4 },
    { address: '::1', family: 6 },
  ];
  await assert.rejects(send(`http://mixed.test:${v4.port}/`, { resolve: mixed }), /resolves to ::1, a loopback address/);
  assert.equal(connects.mock.callCount(), 0);
});

test('the connect-time lookup hands the checked address to the socket (allowlisted range)', async () => {
  const svc: ResolveHost = async () => [{ address: '127.0.0.1', family: 4 }];
  const res = await send(`http://svc.test:${v4.port}/r`, { ...allow('127.0.0.0/8'), resolve: svc });
  assert.equal(res.text, 'hello GET /r');
});

test('a redirect from an allowlisted server to a non-allowlisted loopback port is refused at that hop', async () => {
  const seen = v4.received.length;
  const target = encodeURIComponent(`${other.url}/stolen`);
  await assert.rejects(
    send(`${v4.url}/redirect?to=${target}`, allow(`127.0.0.1:${v4.port}`)),
    (e: unknown) => e instanceof SsrfBlockedError && e.message.includes('127.0.0.1 is a loopback address'),
  );
  assert.equal(v4.received.length, seen + 1, 'the first hop was made');
  assert.equal(other.received.length, 0, 'the redirect target was never contacted');
});

test('redirects to metadata addresses and to other schemes are refused without connecting there', async () => {
  const policy = allow(`127.0.0.1:${v4.port}`);
  await assert.rejects(send(`${v4.url}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/')}`, policy), /link-local/);
  assert.equal(connects.mock.callCount(), 1, 'only the allowlisted server was connected to');
  await assert.rejects(send(`${v4.url}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`, policy), RequestRefusedError);
});

test('redirects are followed up to 5 hops, a sixth is refused', async () => {
  const policy = allow('127.0.0.1');
  const ok = await send(`${v4.url}/hops/5`, policy);
  assert.equal(ok.text, 'arrived');
  assert.equal(ok.url, `${v4.url}/hops/0`);
  await assert.rejects(send(`${v4.url}/hops/6`, policy), /too many redirects/);
});

test('a response body over the cap is cut at the cap and flagged, not buffered whole', async () => {
  const res = await send(`${v4.url}/big`, allow('127.0.0.1'), { maxBodyBytes: 1000 });
  assert.equal(res.body.length, 1000);
  assert.equal(res.truncated, true);
});

test('a server that never answers fails with a timeout error after the request timeout', async () => {
  const t0 = Date.now();
  await assert.rejects(send(`${v4.url}/hang`, allow('127.0.0.1'), { timeoutMs: 300 }), RequestTimeoutError);
  assert.ok(Date.now() - t0 < 2_000);
});
