import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError } from '@flowdesk/contracts';
import { createService, listen, parseTrustProxy } from '../src/index.ts';

function capture() {
  const lines: Record<string, any>[] = [];
  return { lines, stream: { write: (l: string) => void lines.push(JSON.parse(l)) } };
}

test('health and readiness: /readyz answers 503 with the error body while a dependency is down', async () => {
  let up = true;
  const app = createService({
    name: 'svc',
    logLevel: 'silent',
    readiness: async () => {
      if (!up) throw new Error('db down');
    },
  });
  const base = await listen(app, 0);
  try {
    assert.deepEqual(await (await fetch(`${base}/healthz`)).json(), { status: 'ok', service: 'svc' });
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    up = false;
    const res = await fetch(`${base}/readyz`);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { error: 'unavailable', message: 'svc is not ready' });
    assert.equal((await fetch(`${base}/healthz`)).status, 200, 'liveness does not depend on the database');
  } finally {
    await app.close();
  }
});

test('a crash inside a handler is a 500 with a masked message; the log has the detail and the request id', async () => {
  const { lines, stream } = capture();
  const app = createService({ name: 'svc', logLevel: 'info', logStream: stream });
  app.get('/boom', async () => {
    throw new Error('connection string postgres://user:pw@db leaked?');
  });
  app.get('/teapot', async () => {
    throw new HttpError('conflict', 'Already exists');
  });
  const base = await listen(app, 0);
  try {
    const res = await fetch(`${base}/boom`, { headers: { 'x-request-id': 'req-42' } });
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { error: 'internal_error', message: 'Internal server error' });
    const logged = lines.find((l) => l.level === 50);
    assert.ok(logged, 'the error is logged');
    assert.equal(logged.reqId, 'req-42');
    assert.equal(logged.service, 'svc');
    assert.match(logged.err.message, /leaked/);
    const conflict = await fetch(`${base}/teapot`);
    assert.equal(conflict.status, 409);
    assert.deepEqual(await conflict.json(), { error: 'conflict', message: 'Already exists' });
  } finally {
    await app.close();
  }
});

test('credentials in headers never reach the log', async () => {
  const { lines, stream } = capture();
  const app = createService({ name: 'svc', logLevel: 'info', logStream: stream });
  app.get('/echo', async (req) => {
    req.log.info({ headers: req.headers }, 'headers seen');
    return { ok: true };
  });
  const base = await listen(app, 0);
  try {
    await fetch(`${base}/echo`, { headers: { authorization: 'Bearer sekrit-token', 'x-webhook-secret': 'whsec_sekrit', cookie: 'sid=sekrit' } });
    const all = lines.map((l) => JSON.stringify(l)).join('\n');
    assert.match(all, /headers seen/);
    assert.doesNotMatch(all, /sekrit/);
  } finally {
    await app.close();
  }
});

test('unknown route → 404 error body; unknown method on a known route → 404 too, never an HTML page', async () => {
  const app = createService({ name: 'svc', logLevel: 'silent' });
  const base = await listen(app, 0);
  try {
    const res = await fetch(`${base}/nope?x=1`);
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: 'not_found', message: 'No route for GET /nope' });
  } finally {
    await app.close();
  }
});

test('TRUST_PROXY: X-Forwarded-For decides request.ip only when the peer is a trusted proxy', async () => {
  assert.equal(parseTrustProxy(undefined), 'loopback');
  assert.equal(parseTrustProxy(' '), 'loopback');
  assert.equal(parseTrustProxy('1'), 1);
  assert.equal(parseTrustProxy('10.0.0.0/8, 192.168.1.1'), 'loopback,10.0.0.0/8,192.168.1.1');
  assert.throws(() => parseTrustProxy('true'), /TRUST_PROXY/);

  const app = createService({ name: 'svc', logLevel: 'silent', trustProxy: parseTrustProxy('10.0.0.0/8') });
  app.get('/ip', async (req) => ({ ip: req.ip }));
  const ip = async (remoteAddress: string, xff?: string) =>
    (await app.inject({ url: '/ip', remoteAddress, headers: xff ? { 'x-forwarded-for': xff } : {} })).json().ip;
  // A caller that is no proxy of ours: its header is ignored.
  assert.equal(await ip('192.0.2.1', '6.6.6.6'), '192.0.2.1');
  // The embedded front (loopback) and a configured proxy: their word is taken, right to left.
  assert.equal(await ip('127.0.0.1', '192.0.2.7'), '192.0.2.7');
  assert.equal(await ip('10.1.2.3', '6.6.6.6, 192.0.2.7'), '192.0.2.7');
  assert.equal(await ip('10.1.2.3', '6.6.6.6, 192.0.2.7, 10.4.4.4'), '192.0.2.7');
  await app.close();
});

test('credentials in query strings never reach the log: every logged request URL has them redacted', async () => {
  const { lines, stream } = capture();
  const app = createService({ name: 'svc', logLevel: 'info', logStream: stream });
  app.get('/echo', async () => ({ ok: true }));
  app.get('/boom', async () => {
    throw new Error('kaput');
  });
  const base = await listen(app, 0);
  const query =
    'access_token=fdk_sekrit1&session=sekrit2&token=sekrit3&key=sekrit4&api_key=sekrit5&secret=sekrit6&signature=sekrit7&code=sekrit8&password=sekrit9&page=2';
  try {
    for (const path of ['/echo', '/boom', '/nope']) await (await fetch(`${base}${path}?${query}`)).arrayBuffer();
    const incoming = lines.filter((l) => l.msg === 'incoming request');
    assert.equal(incoming.length, 3);
    assert.match(incoming[0]!.req.url, /^\/echo\?access_token=••••&session=••••&.*&page=2$/, 'the path and harmless parameters stay readable');
    assert.ok(
      lines.some((l) => l.level === 50),
      'the 500 is logged',
    );
    assert.doesNotMatch(lines.map((l) => JSON.stringify(l)).join('\n'), /sekrit/);
  } finally {
    await app.close();
  }
});
