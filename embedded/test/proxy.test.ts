import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createService, type Service } from '@flowdesk/service-kit';
import { closeServer, listenServer } from '../src/http-server.ts';
import { createLogger } from '../src/log.ts';
import { createProxy, type ProxyOptions } from '../src/proxy.ts';

// Services as the front meets them in the embedded start (service kit's fastify apps, in this
// process, never listening): each echoes what reached it, so each test sees the request as handed over.
function backend(name: string, readiness?: () => Promise<void>): Service {
  const app = createService({ name, logLevel: 'silent', readiness });
  // Any body as text, so the echo shows the bytes as they arrived.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  const seen = { url: '', headers: {} as http.IncomingHttpHeaders, rawHeaders: [] as string[] };
  app.addHook('onRequest', (req, _reply, done) => {
    seen.url = req.raw.url ?? '';
    seen.headers = { ...req.headers };
    seen.rawHeaders = [...req.raw.rawHeaders];
    done();
  });
  lastSeen.set(name, seen);
  app.all('/*', async (req, reply) => {
    const status = Number(new URL(req.raw.url ?? '/', 'http://x').searchParams.get('status') ?? 200);
    return reply
      .code(status)
      .header('x-backend', name)
      .send({ backend: name, method: req.method, url: req.raw.url, headers: req.headers, ip: req.ip, body: typeof req.body === 'string' ? req.body : '' });
  });
  return app;
}
const lastSeen = new Map<string, { url: string; headers: http.IncomingHttpHeaders; rawHeaders: string[] }>();

let secondEventWritten = false;
let streamClosedByClient: Promise<void> = Promise.resolve();
const alpha = backend('alpha');
alpha.get('/api/events', (_req, reply) => {
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
  reply.raw.write('data: first\n\n');
  setTimeout(() => {
    secondEventWritten = true;
    reply.raw.end('data: second\n\n');
  }, 300);
});
alpha.get('/api/forever', (_req, reply) => {
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
  reply.raw.write('data: hello\n\n');
  streamClosedByClient = new Promise((resolve) => reply.raw.on('close', resolve));
});
// beta's own /readyz answers 503 while `betaReady` is false, as a service whose bus is down does.
let betaReady = true;
const beta = backend('beta', async () => {
  if (!betaReady) throw new Error('the bus is down');
});
// A service that has shut down: its app is closed.
const gone = backend('gone');
const targets = new Map<string, Service>([
  ['alpha', alpha],
  ['beta', beta],
  ['gone', gone],
]);
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
  await Promise.all([alpha.ready(), beta.ready(), gone.ready()]);
  await gone.close();
  base = await listenServer(proxy, 0, '127.0.0.1');
});
after(async () => {
  await closeServer(proxy, 0);
  await alpha.close();
  await beta.close();
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
  // What a caller claims is replaced, not appended to: the front is the edge, and the service's
  // idea of the client's address (request.ip, trusting the front) is the address the front saw.
  const claimed = (await (await fetch(`${base}/api/items`, { headers: { 'x-forwarded-for': '6.6.6.6' } })).json()) as Record<string, any>;
  assert.equal(claimed.headers['x-forwarded-for'], '127.0.0.1');
  assert.equal(claimed.ip, '127.0.0.1');
  assert.equal(res.body.headers['x-forwarded-proto'], 'http');
  assert.equal(res.body.headers['x-forwarded-host'], new URL(base).host);
});

test("hop-by-hop headers, and those the client's Connection names, do not reach the service; the body's framing does", async () => {
  const { hostname, port } = new URL(base);
  const body = JSON.stringify({ n: 1 });
  const echoed = await new Promise<Record<string, any>>((resolve, reject) => {
    const req = http.request(
      {
        hostname,
        port,
        method: 'POST',
        path: '/api/hop',
        headers: {
          connection: 'keep-alive, x-hop, content-length',
          'x-hop': 'dropped',
          'keep-alive': 'timeout=5',
          te: 'trailers',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve(JSON.parse(text) as Record<string, any>));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  for (const name of ['connection', 'x-hop', 'keep-alive', 'te']) assert.equal(echoed.headers[name], undefined, name);
  assert.equal(echoed.body, body, 'the body arrived whole: a Connection header naming content-length does not remove it');
  assert.equal(echoed.headers['content-length'], String(Buffer.byteLength(body)));
  // The raw header list the service may read (the MCP SDK's transport does) says the same.
  const raw = lastSeen.get('alpha')!.rawHeaders.filter((_, i) => i % 2 === 0);
  assert.ok(!raw.includes('x-hop') && !raw.includes('connection'), raw.join(','));
  assert.ok(raw.includes('x-forwarded-for'), raw.join(','));
});

test('/services/<name>/healthz and /readyz reach that service with the prefix stripped', async () => {
  const health = await get('/services/beta/healthz');
  assert.deepEqual(health.body, { status: 'ok', service: 'beta' });
  assert.equal(lastSeen.get('beta')!.url, '/healthz');
  assert.equal(lastSeen.get('beta')!.headers['x-forwarded-prefix'], '/services/beta');
  assert.deepEqual((await get('/services/alpha/readyz')).body, { status: 'ready', service: 'alpha' });
  assert.equal(lastSeen.get('alpha')!.url, '/readyz');
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

test('a backend that is not running answers 502, one that has shut down 503, both with a JSON error body', async () => {
  for (const [path, status] of [
    ['/later/x', 502],
    ['/gone/x', 503],
  ] as const) {
    const res = await get(path, { method: 'POST', body: 'x' });
    assert.equal(res.status, status, path);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(typeof res.body.error, 'string');
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

test('a backend whose probe gets no answer within the timeout counts as down', async () => {
  let release = () => {};
  const stuck = backend('stuck', () => new Promise<void>((resolve) => (release = resolve)));
  const front = createProxy({ ...options, services: ['alpha', 'stuck'], target: (name) => (name === 'stuck' ? stuck : targets.get(name)) });
  const frontBase = await listenServer(front, 0, '127.0.0.1');
  try {
    const started = Date.now();
    const res = await fetch(`${frontBase}/readyz`);
    assert.equal(res.status, 503);
    assert.deepEqual(((await res.json()) as { services: unknown }).services, { alpha: 'ready', stuck: 'down' });
    assert.ok(Date.now() - started < 5_000, 'answered after the probe timeout, not when the probe finished');
  } finally {
    release();
    await closeServer(front, 0);
    await stuck.close();
  }
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
