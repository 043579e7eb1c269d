import assert from 'node:assert/strict';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeServer, listenServer } from '../src/http-server.ts';
import { createLogger } from '../src/log.ts';
import { createProxy, type ProxyOptions } from '../src/proxy.ts';

// A loopback backend that reports what reached it, so each test sees the request as forwarded.
function backend(name: string, extra: (req: IncomingMessage, res: ServerResponse) => boolean = () => false) {
  return http.createServer(async (req, res) => {
    if (extra(req, res)) return;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 200);
    res.writeHead(status, { 'content-type': 'application/json', 'x-backend': name });
    res.end(JSON.stringify({ backend: name, method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() }));
  });
}

let secondEventWritten = false;
let streamClosedByClient: Promise<void> = Promise.resolve();
const alpha = backend('alpha', (req, res) => {
  if (req.url === '/api/events') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
    setTimeout(() => {
      secondEventWritten = true;
      res.end('data: second\n\n');
    }, 300);
    return true;
  }
  if (req.url === '/api/forever') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: hello\n\n');
    streamClosedByClient = new Promise((resolve) => res.on('close', resolve));
    return true;
  }
  return false;
});
// beta's own /readyz answers 503 while `betaReady` is false, as a service whose bus is down does.
let betaReady = true;
const beta = backend('beta', (req, res) => {
  if (req.url !== '/readyz' || betaReady) return false;
  res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"unavailable","message":"beta is not ready"}');
  return true;
});
const targets = new Map<string, string>();
const options: ProxyOptions = {
  routes: [
    { prefix: '/api/', service: 'alpha' },
    { prefix: '/functions/v1/mcp-server-v2', service: 'beta' },
    { prefix: '/gone/', service: 'gone' },
    { prefix: '/later/', service: 'later' },
  ],
  services: ['alpha', 'beta', 'gone', 'later'],
  target: (name) => targets.get(name),
  log: createLogger('proxy-test', 'silent'),
  healthTimeoutMs: 500,
};
const proxy = createProxy(options);
let base: string;

before(async () => {
  targets.set('alpha', await listenServer(alpha, 0, '127.0.0.1'));
  targets.set('beta', await listenServer(beta, 0, '127.0.0.1'));
  // A port that was free a moment ago: nothing listens there any more.
  const closed = http.createServer();
  targets.set('gone', await listenServer(closed, 0, '127.0.0.1'));
  await closeServer(closed);
  base = await listenServer(proxy, 0, '127.0.0.1');
});
after(async () => {
  await closeServer(proxy, 0);
  await closeServer(alpha, 0);
  await closeServer(beta, 0);
});

async function get(path: string, init?: RequestInit) {
  const res = await fetch(`${base}${path}`, init);
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

test('routes by path prefix, segment by segment, keeping path and query', async () => {
  const api = await get('/api/v1/projects?limit=5');
  assert.equal(api.body.backend, 'alpha');
  assert.equal(api.body.url, '/api/v1/projects?limit=5');
  const mcp = await get('/functions/v1/mcp-server-v2', { method: 'POST', body: '{}' });
  assert.equal(mcp.body.backend, 'beta');
  assert.equal(mcp.body.url, '/functions/v1/mcp-server-v2');
  assert.equal((await get('/functions/v1/mcp-server-v2x')).status, 404);
  assert.equal((await get('/apix/v1')).status, 404);
});

test('passes method, body, status and headers through, and adds x-forwarded-*', async () => {
  const res = await get('/api/echo?status=201', {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'x-custom': 'kept' },
    body: JSON.stringify({ hello: 'world' }),
  });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get('x-backend'), 'alpha');
  assert.equal(res.body.method, 'PUT');
  assert.deepEqual(JSON.parse(res.body.body), { hello: 'world' });
  assert.equal(res.body.headers['x-custom'], 'kept');
  assert.equal(res.body.headers['x-forwarded-for'], '127.0.0.1');
  // What a caller claims is replaced, not appended to: the front is the edge.
  const claimed = await fetch(`${base}/api/items`, { headers: { 'x-forwarded-for': '6.6.6.6' } });
  assert.equal(((await claimed.json()) as { headers: Record<string, string> }).headers['x-forwarded-for'], '127.0.0.1');
  assert.equal(res.body.headers['x-forwarded-proto'], 'http');
  assert.equal(res.body.headers['x-forwarded-host'], new URL(base).host);
});

test('/services/<name>/healthz and /readyz reach that service with the prefix stripped', async () => {
  const health = await get('/services/beta/healthz');
  assert.equal(health.body.backend, 'beta');
  assert.equal(health.body.url, '/healthz');
  assert.equal(health.body.headers['x-forwarded-prefix'], '/services/beta');
  assert.equal((await get('/services/alpha/readyz')).body.url, '/readyz');
  // Only the probes: the rest of a service is reached through its public prefix.
  assert.equal((await get('/services/beta/functions/v1/mcp-server-v2')).status, 404);
  assert.equal((await get('/services/nobody/healthz')).status, 404);
});

test('streams an event stream as it is written, without buffering', async () => {
  secondEventWritten = false;
  const res = await fetch(`${base}/api/events`);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body!.getReader();
  const first = await reader.read();
  assert.match(Buffer.from(first.value).toString(), /data: first/);
  assert.equal(secondEventWritten, false, 'the first event arrived only after the second was written');
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
  assert.match(rest, /data: second/);
});

test('a client that leaves an event stream releases the backend connection', async () => {
  const aborter = new AbortController();
  const res = await fetch(`${base}/api/forever`, { signal: aborter.signal });
  await res.body!.getReader().read();
  aborter.abort();
  const closed = await Promise.race([streamClosedByClient.then(() => true), sleep(2_000).then(() => false)]);
  assert.equal(closed, true);
});

test('a backend that is down answers 502 with the JSON error body', async () => {
  for (const path of ['/gone/x', '/later/x']) {
    const res = await get(path, { method: 'POST', body: 'x' });
    assert.equal(res.status, 502);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.body.error, 'unavailable');
    assert.equal(typeof res.body.message, 'string');
  }
});

test('an unknown path answers 404 with the JSON error body', async () => {
  for (const path of ['/nowhere', '/', '/.well-known/x']) {
    const res = await get(path);
    assert.equal(res.status, 404, path);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.body.error, 'not_found');
    assert.match(res.body.message, /No route/);
  }
});

test('a path with dot segments is refused rather than passed on', async () => {
  // fetch would resolve the dots itself; a raw client sends them as they are.
  for (const path of ['/api/../services/beta/healthz', '/api/%2e%2e/x']) {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const { hostname, port } = new URL(base);
      http.get({ hostname, port, path }, (res) => resolve(res.resume().statusCode)).on('error', reject);
    });
    assert.equal(status, 404, path);
  }
});

test('/healthz checks every backend: 503 naming the ones down, 200 when all are up', async () => {
  const degraded = await get('/healthz');
  assert.equal(degraded.status, 503);
  assert.deepEqual(degraded.body.services, { alpha: 'ok', beta: 'ok', gone: 'down', later: 'down' });
  assert.equal(degraded.body.error, 'unavailable');

  const healthy = createProxy({ ...options, services: ['alpha', 'beta'] });
  const healthyBase = await listenServer(healthy, 0, '127.0.0.1');
  try {
    const res = await fetch(`${healthyBase}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok', services: { alpha: 'ok', beta: 'ok' } });
  } finally {
    await closeServer(healthy, 0);
  }
});

test('/readyz is the readiness of every backend, not of the one `/` reaches: 503 naming the ones not ready, 200 when all are', async () => {
  const only = createProxy({ ...options, routes: [{ prefix: '/', service: 'alpha' }, ...options.routes], services: ['alpha', 'beta'] });
  const onlyBase = await listenServer(only, 0, '127.0.0.1');
  try {
    const ready = await fetch(`${onlyBase}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', services: { alpha: 'ready', beta: 'ready' } });
    betaReady = false;
    const notReady = await fetch(`${onlyBase}/readyz`);
    assert.equal(notReady.status, 503);
    assert.deepEqual(await notReady.json(), {
      error: 'unavailable',
      message: 'Not ready: beta',
      status: 'not_ready',
      services: { alpha: 'ready', beta: 'not_ready' },
    });
    // Its liveness is unaffected: not ready is not down.
    assert.equal((await fetch(`${onlyBase}/healthz`)).status, 200);
  } finally {
    betaReady = true;
    await closeServer(only, 0);
  }
  const degraded = await get('/readyz');
  assert.equal(degraded.status, 503);
  assert.deepEqual(degraded.body.services, { alpha: 'ready', beta: 'ready', gone: 'down', later: 'down' });
});

test("an idle client connection is kept past Node's 5 s default, so a client reusing it is answered, not reset", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let connections = 0;
  const count = () => connections++;
  proxy.on('connection', count);
  try {
    const get = () =>
      new Promise<number>((resolve, reject) => {
        http
          .get(`${base}/api/idle`, { agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject);
      });
    assert.equal(await get(), 200);
    // Idle longer than Node's default keepAliveTimeout (5 s, closed a little after): the front must
    // not have closed it.
    await sleep(7_000);
    assert.equal(await get(), 200);
    assert.equal(connections, 1, 'the second request reused the first connection');
  } finally {
    proxy.off('connection', count);
    agent.destroy();
  }
});
