import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createGuardedHttpClient, type GuardedHttpClient } from '@flowdesk/service-kit';
import { HttpStatusError, NetworkError, SsrfBlockedError } from '../src/domain/errors.ts';
import { httpRequestHandler, type HttpNodeOptions, type HttpRequestParams } from '../src/domain/nodes/http-request.ts';
import { parseAllowlist, SsrfPolicy } from '@flowdesk/service-kit';
import { TemplateRenderer } from '../src/domain/template.ts';
import { fixedClock, json, silentLog, startServer, type TestServer } from './support.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';

let server: TestServer;
let client: GuardedHttpClient;

before(async () => {
  server = await startServer((req, res, n) => {
    if (req.url.startsWith('/flaky')) {
      // 503 twice, then success: counts per path so tests do not interfere.
      const tries = server.received.filter((r) => r.url === req.url).length;
      if (tries < 3) return json(res, 503, { error: 'busy' }, req.url.includes('retry-after') ? { 'retry-after': '2' } : {});
      return json(res, 200, { ok: true, tries });
    }
    if (req.url === '/always-503') return json(res, 503, { error: 'down' });
    if (req.url === '/echo')
      return json(res, 201, {
        id: 'ext-77',
        method: req.method,
        got: req.body ? JSON.parse(req.body) : null,
        ct: req.headers['content-type'],
        auth: req.headers.authorization ?? null,
      });
    if (req.url === '/text') return void res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': 'sid=abc' }).end('plain words');
    if (req.url === '/big.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: 'y'.repeat(3000) }));
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 1_500);
    if (req.url === '/404') return json(res, 404, { error: 'nope' });
    void n;
    res.end('?');
  });
  client = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('127.0.0.1')) });
});
after(async () => {
  await client.close();
  await server.close();
});

const payload = { customer: { name: 'O\'Brien "Bob"', id: 7 }, amount: 12 };

async function run(params: HttpRequestParams, options: Partial<HttpNodeOptions> = {}, http = client, idempotencyKey?: string) {
  const handler = httpRequestHandler(options);
  const renderer = new TemplateRenderer({ sandbox: inProcessSandbox, payload, headers: {}, nodes: new Map() });
  const input = handler.render(params, renderer);
  const warnings: string[] = [];
  const ctx = {
    ports: { http, createTask: async () => ({}), clock: fixedClock(), log: silentLog, sandbox: inProcessSandbox },
    ownerId: 'u1',
    signal: new AbortController().signal,
    warn: (m: string) => warnings.push(m),
    ...(idempotencyKey ? { idempotencyKey } : {}),
  };
  const started = server.received.length;
  try {
    const result = await handler.execute(input, ctx);
    return { result, input, masked: handler.mask(input), warnings, requests: server.received.slice(started), safe: handler.retrySafe!(input) };
  } catch (error) {
    return { error: error as Error, input, warnings, requests: server.received.slice(started), safe: handler.retrySafe!(input) };
  }
}

test('POST sends the rendered JSON body with its types and a JSON content type; output has status, headers, parsed body', async () => {
  const r = await run({
    method: 'POST',
    url: `${server.url}/echo`,
    headers: { authorization: 'Bearer s3cret', 'x-customer': '{{trigger.customer.id}}' },
    body: { name: '{{trigger.customer.name}}', amount: '{{trigger.amount}}', note: 'for {{trigger.customer.name}}' },
  });
  assert.equal(r.requests.length, 1);
  assert.equal(r.requests[0]!.method, 'POST');
  assert.deepEqual(JSON.parse(r.requests[0]!.body), { name: 'O\'Brien "Bob"', amount: 12, note: 'for O\'Brien "Bob"' });
  assert.equal(r.requests[0]!.headers['x-customer'], '7');
  assert.equal(r.requests[0]!.headers.authorization, 'Bearer s3cret', 'the real header is sent');
  const out = r.result!.output as { status: number; headers: Record<string, string>; body: Record<string, unknown> };
  assert.equal(out.status, 201);
  assert.equal(out.body.id, 'ext-77');
  assert.equal(out.body.ct, 'application/json');
  assert.match(out.headers['content-type']!, /application\/json/);
  assert.deepEqual(
    (r.masked as { headers: Record<string, string> }).headers,
    { authorization: 'Bearer ***', 'x-customer': '7' },
    'the recorded input masks the secret',
  );
});

test('a body written as JSON text is parsed before rendering, so quotes in values cannot inject fields', async () => {
  const r = await run({ method: 'PUT', url: `${server.url}/echo`, body: '{"name": "{{trigger.customer.name}}", "admin": false}' });
  assert.deepEqual((r.result!.output as { body: { got: unknown } }).body.got, { name: 'O\'Brien "Bob"', admin: false });
});

test('GET and DELETE send no body; PATCH sends one', async () => {
  for (const method of ['GET', 'DELETE'] as const) {
    const r = await run({ method, url: `${server.url}/echo`, body: { a: 1 } });
    assert.equal(r.requests[0]!.method, method);
    assert.equal(r.requests[0]!.body, '');
  }
  const p = await run({ method: 'PATCH', url: `${server.url}/echo`, body: { a: '{{trigger.amount}}' } });
  assert.equal(p.requests[0]!.body, '{"a":12}');
});

test('a non-JSON answer is kept as text; response cookies are masked in the recorded output only', async () => {
  const r = await run({ method: 'GET', url: `${server.url}/text` });
  const out = r.result!.output as { body: unknown; headers: Record<string, string> };
  assert.equal(out.body, 'plain words');
  assert.equal(out.headers['set-cookie'], 'sid=abc');
  assert.equal((r.result!.recorded as { headers: Record<string, string> }).headers['set-cookie'], '***');
});

test('one attempt per execution: a 5xx fails the node with an HttpStatusError carrying status, Retry-After and the response', async () => {
  const r = await run({ method: 'GET', url: `${server.url}/flaky-retry-after-once` });
  assert.equal(r.requests.length, 1, 'the node never repeats a request itself (the retry policy does)');
  assert.ok(r.error instanceof HttpStatusError);
  assert.equal(r.error.status, 503);
  assert.equal(r.error.retryAfter, '2');
  assert.match(r.error.message, /answered HTTP 503$/);
  assert.equal((r.error.output as { status: number }).status, 503);
});

test("POST and PATCH send the step's Idempotency-Key and are then safe to retry; 'omit' sends none and is not", async () => {
  const key = 'fd1-step-key';
  const post = await run({ method: 'POST', url: `${server.url}/echo`, body: { a: 1 } }, {}, client, key);
  assert.equal(post.requests[0]!.headers['idempotency-key'], key);
  assert.equal(post.safe, true, 'a keyed POST may be retried');
  const patch = await run({ method: 'PATCH', url: `${server.url}/echo`, body: {} }, {}, client, key);
  assert.equal(patch.requests[0]!.headers['idempotency-key'], key);
  const omitted = await run({ method: 'POST', url: `${server.url}/echo`, body: {}, idempotencyKey: 'omit' }, {}, client, key);
  assert.equal(omitted.requests[0]!.headers['idempotency-key'], undefined);
  assert.equal(omitted.safe, false, 'without the key a POST is never repeated');
  const get = await run({ method: 'GET', url: `${server.url}/echo` }, {}, client, key);
  assert.equal(get.requests[0]!.headers['idempotency-key'], undefined, 'GET sends none by default');
  assert.equal(get.safe, true, 'GET is idempotent');
  const sent = await run({ method: 'DELETE', url: `${server.url}/echo`, idempotencyKey: 'send' }, {}, client, key);
  assert.equal(sent.requests[0]!.headers['idempotency-key'], key, "'send' sends it with any method");
  const own = await run(
    { method: 'POST', url: `${server.url}/echo`, headers: { 'Idempotency-Key': 'order-{{trigger.customer.id}}' }, idempotencyKey: 'omit' },
    {},
    client,
    key,
  );
  assert.equal(own.requests[0]!.headers['idempotency-key'], 'order-7', 'a key written in the node wins');
  assert.equal(own.safe, true, 'a key written in the node makes it safe too');
});

test('a network error is a NetworkError (the retry policy classifies it)', async () => {
  const dead = await startServer(() => {});
  const url = `${dead.url}/x`;
  await dead.close(); // the port now refuses connections
  const g = await run({ method: 'GET', url });
  assert.ok(g.error && findNetwork(g.error), g.error?.message);
  assert.match(g.error.message, /ECONNREFUSED/);
});

function findNetwork(err: Error): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e instanceof NetworkError) return true;
  return false;
}

test('the timeout param bounds each attempt', async () => {
  const t0 = Date.now();
  const r = await run({ method: 'POST', url: `${server.url}/slow`, timeoutMs: 200, body: {} });
  assert.match(r.error!.message, /no complete response within 200 ms/);
  assert.ok(Date.now() - t0 < 1_400);
});

test('timeout defaults to 10 s and is clamped to 60 s', async () => {
  assert.equal((await run({ method: 'GET', url: `${server.url}/text` })).input.timeoutMs, 10_000);
  assert.equal((await run({ method: 'GET', url: `${server.url}/text`, timeoutMs: 600_000 })).input.timeoutMs, 60_000);
});

test('a response over the size cap is truncated with a warning and kept as text', async () => {
  const r = await run({ method: 'GET', url: `${server.url}/big.json` }, { maxBodyBytes: 100 });
  const body = (r.result!.output as { body: unknown }).body;
  assert.equal(typeof body, 'string');
  assert.equal((body as string).length, 100);
  assert.deepEqual(r.warnings, ['response body truncated at 100 bytes (kept as text)']);
});

test('the SSRF guard applies to the node: a templated URL to a private address is refused, never retried', async () => {
  const guarded = createGuardedHttpClient();
  try {
    const r = await run({ method: 'GET', url: 'http://169.254.169.254/{{trigger.customer.id}}' }, {}, guarded);
    assert.ok(r.error instanceof SsrfBlockedError);
    assert.equal(r.requests.length, 0, 'nothing sent');
  } finally {
    await guarded.close();
  }
});

test('a header value with a line break (header injection) fails the node before sending', async () => {
  const renderer = new TemplateRenderer({ sandbox: inProcessSandbox, payload: { v: 'a\r\nX-Evil: 1' }, headers: {}, nodes: new Map() });
  const handler = httpRequestHandler();
  const input = handler.render({ method: 'GET', url: `${server.url}/echo`, headers: { 'x-v': '{{trigger.v}}' } }, renderer);
  const before = server.received.length;
  await assert.rejects(
    handler.execute(input, {
      ports: { http: client, createTask: async () => ({}), clock: fixedClock(), log: silentLog, sandbox: inProcessSandbox },
      ownerId: 'u',
      signal: new AbortController().signal,
      warn() {},
    }),
    /line break/,
  );
  assert.equal(server.received.length, before);
});

test('a redirect that leaves the origin drops credential-carrying and secret-looking headers; the same origin keeps them', async () => {
  // Two servers on loopback = two origins (the port differs). The first redirects, the second records.
  const elsewhere = await startServer((req, res) => res.end('landed'));
  const first = await startServer((req, res) => {
    const to = req.url.startsWith('/away') ? `${elsewhere.url}/landed` : '/landed';
    if (req.url.startsWith('/away') || req.url.startsWith('/here')) return void res.writeHead(302, { location: to }).end();
    res.end('landed');
  });
  try {
    const headers = {
      'X-Api-Key': '{{credentials.crm}}',
      'X-Crm-Account': 'acct {{credentials.crm}}', // a harmless name, but its value is a credential
      Authorization: 'Bearer {{credentials.crm}}',
      Cookie: 'sid=abc',
      'Proxy-Authorization': 'Basic eDp5',
      'X-Auth-Token': 'literal-token',
      'X-Client-Secret': 'literal-secret',
      'X-Webhook-Signature': 'sha256=00',
      'X-Key-Id': 'k1',
      'X-Trace': 'plain',
    };
    const credentials = new Map([['crm', 'crm-secret-value']]);
    const handler = httpRequestHandler();
    const ctx = {
      ports: { http: client, createTask: async () => ({}), clock: fixedClock(), log: silentLog, sandbox: inProcessSandbox },
      ownerId: 'u1',
      signal: new AbortController().signal,
      warn: () => {},
    };
    const renderer = new TemplateRenderer({ sandbox: inProcessSandbox, payload, headers: {}, nodes: new Map(), credentials });

    const away = handler.render({ method: 'GET', url: `${first.url}/away`, headers }, renderer);
    await handler.execute(away, ctx);
    const sentFirst = first.received.at(-1)!.headers;
    assert.equal(sentFirst['x-api-key'], 'crm-secret-value', 'the first origin gets every header');
    assert.equal(sentFirst['x-crm-account'], 'acct crm-secret-value');
    const landed = elsewhere.received.at(-1)!.headers;
    for (const name of [
      'x-api-key',
      'x-crm-account',
      'authorization',
      'cookie',
      'proxy-authorization',
      'x-auth-token',
      'x-client-secret',
      'x-webhook-signature',
      'x-key-id',
    ])
      assert.equal(landed[name], undefined, `${name} must not reach another origin`);
    assert.equal(landed['x-trace'], 'plain', 'an ordinary header follows the redirect');
    assert.ok(!JSON.stringify(landed).includes('crm-secret-value'), 'the credential value reached the other origin');
    assert.ok(!('credentialHeaders' in (handler.mask(away) as object)), 'the recorded input does not carry the bookkeeping list');

    const here = handler.render({ method: 'GET', url: `${first.url}/here`, headers }, renderer);
    await handler.execute(here, ctx);
    const sameOrigin = first.received.at(-1)!;
    assert.equal(sameOrigin.url, '/landed');
    assert.equal(sameOrigin.headers['x-api-key'], 'crm-secret-value', 'a same-origin redirect keeps the credential');
    assert.equal(sameOrigin.headers['x-crm-account'], 'acct crm-secret-value');
    assert.equal(sameOrigin.headers.authorization, 'Bearer crm-secret-value');
  } finally {
    await Promise.all([first.close(), elsewhere.close()]);
  }
});

test('a cross-origin 307/308 of a request carrying a credential (body, URL or header) is not followed; the step fails naming it', async () => {
  const elsewhere = await startServer((req, res) => res.end('landed'));
  const first = await startServer((req, res) => {
    const m = /^\/(307|308|301)-(away|here)/.exec(req.url);
    if (m) return void res.writeHead(Number(m[1]), { location: m[2] === 'away' ? `${elsewhere.url}/landed` : '/landed' }).end();
    res.end('landed');
  });
  try {
    const credentials = new Map([['crm', 'crm-secret-value']]);
    const handler = httpRequestHandler();
    const ctx = {
      ports: { http: client, createTask: async () => ({}), clock: fixedClock(), log: silentLog, sandbox: inProcessSandbox },
      ownerId: 'u1',
      signal: new AbortController().signal,
      warn: () => {},
    };
    const renderer = new TemplateRenderer({ sandbox: inProcessSandbox, payload, headers: {}, nodes: new Map(), credentials });
    const cases: { params: HttpRequestParams; where: RegExp }[] = [
      { params: { method: 'POST', url: `${first.url}/307-away`, body: { apiKey: '{{credentials.crm}}', n: 1 } }, where: /credential in the body/ },
      { params: { method: 'POST', url: `${first.url}/308-away`, body: '{"token": "{{credentials.crm}}"}' }, where: /credential in the body/ },
      { params: { method: 'PUT', url: `${first.url}/301-away`, body: { apiKey: '{{credentials.crm}}' } }, where: /credential in the body/ },
      { params: { method: 'GET', url: `${first.url}/307-away?k={{credentials.crm}}` }, where: /credential in the URL/ },
      { params: { method: 'GET', url: `${first.url}/308-away`, headers: { 'X-Crm': '{{credentials.crm}}' } }, where: /credential in header "X-Crm"/ },
    ];
    for (const { params, where } of cases) {
      const before = elsewhere.received.length;
      await assert.rejects(handler.execute(handler.render(params, renderer), ctx), (err: Error) => {
        assert.match(err.message, /not followed/);
        assert.match(err.message, where);
        assert.match(err.message, new RegExp(elsewhere.url.replace(/[.]/g, '\\.')), 'the error names the other origin');
        assert.ok(!err.message.includes('crm-secret-value'));
        return true;
      });
      assert.equal(elsewhere.received.length, before, `${params.method} ${params.url}: nothing reached the other origin`);
    }
    // Followed: the same origin, and a cross-origin 307 of a request without any credential.
    await handler.execute(handler.render({ method: 'POST', url: `${first.url}/307-here`, body: { apiKey: '{{credentials.crm}}' } }, renderer), ctx);
    assert.equal(first.received.at(-1)!.url, '/landed');
    assert.deepEqual(JSON.parse(first.received.at(-1)!.body), { apiKey: 'crm-secret-value' });
    await handler.execute(handler.render({ method: 'POST', url: `${first.url}/307-away`, body: { n: 1 } }, renderer), ctx);
    assert.deepEqual(JSON.parse(elsewhere.received.at(-1)!.body), { n: 1 });
    assert.ok(!('credentialIn' in (handler.mask(handler.render(cases[0]!.params, renderer)) as object)), 'the bookkeeping list is not recorded');
  } finally {
    await Promise.all([first.close(), elsewhere.close()]);
  }
});

test('a failure names the URL with its real secret parameters masked and an ordinary `code` kept (it lands in attemptErrors)', async () => {
  const r = await run({ method: 'GET', url: `${server.url}/flaky-code?code=US&access_token=tok-123&page=2` });
  assert.ok(r.error instanceof HttpStatusError);
  assert.match(r.error.message, /code=US/, 'an ordinary parameter named code is data, not a secret');
  assert.match(r.error.message, /access_token=\*\*\*/);
  assert.ok(!r.error.message.includes('tok-123'));
  assert.match(r.error.message, /page=2/);
});
