// The runs stream (Server-Sent Events, served by the workflow engine) through the edge: each event
// reaches the client as the upstream writes it, not when the upstream ends; the client's credential
// is exchanged like any other call; a client that leaves closes the upstream stream.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { startConsoleStack, type ConsoleStack, type TestUser } from './helpers/stack.ts';

let stack: ConsoleStack;
let alice: TestUser;
let engine: http.Server;
/** The stand-in engine's open streams, and what it was called with. */
const open = new Set<http.ServerResponse>();
const seen: { url: string; authorization: string }[] = [];
let closedUpstream = 0;

before(async () => {
  engine = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization ?? '' });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    res.write(': connected\n\n');
    open.add(res);
    res.on('close', () => {
      open.delete(res);
      closedUpstream++;
    });
  });
  await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
  stack = await startConsoleStack({ engineUrl: `http://127.0.0.1:${(engine.address() as AddressInfo).port}` });
  alice = await stack.newUser();
});
after(async () => {
  await stack?.close();
  engine?.closeAllConnections();
  await new Promise((resolve) => engine?.close(resolve));
});

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('GET /api/v1/workflow-runs/stream: every event is passed on as it is written, unbuffered; leaving closes the upstream', async () => {
  const ac = new AbortController();
  const res = await fetch(`${stack.url}/api/v1/workflow-runs/stream?workflowId=00000000-0000-4000-8000-000000000001`, {
    headers: { authorization: `Bearer ${alice.readKey}` },
    signal: ac.signal,
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.equal(res.headers.get('x-accel-buffering'), 'no');
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.url, '/api/v1/workflow-runs/stream?workflowId=00000000-0000-4000-8000-000000000001');
  assert.match(seen[0]!.authorization, /^Bearer ey/, 'an internal token, never the API key');
  assert.ok(!seen[0]!.authorization.includes(alice.readKey));

  let text = '';
  const reader = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    } catch {
      // aborted
    }
  })();
  await until('the first comment', () => text.includes(': connected'));
  // The upstream is still open: what arrived so far was passed on without waiting for its end.
  assert.equal(open.size, 1);
  for (const n of [1, 2]) {
    for (const up of open) up.write(`event: run\ndata: {"n":${n}}\n\n`);
    await until(`event ${n}`, () => text.includes(`data: {"n":${n}}`));
  }
  ac.abort();
  await reader;
  await until('the upstream stream to close once the client left', () => closedUpstream === 1 && open.size === 0);
});

test('the stream needs a credential like every other call', async () => {
  const res = await fetch(`${stack.url}/api/v1/workflow-runs/stream`);
  assert.equal(res.status, 401);
  assert.equal(seen.length, 1, 'nothing reached the engine');
});

// A stream is authorized when it opens; a revoked credential must not keep it (issue 35). Each case
// revokes the way a user does and waits for the stream to end: without the fix it stays open, and
// the upstream's next event still arrives.
const ORIGIN = 'http://flowdesk.example.test';

/** Opens the runs stream; `ended` settles when the edge finishes (or breaks) the answer. */
async function openStream(headers: Record<string, string>) {
  const upstreamsBefore = new Set(open);
  const res = await fetch(`${stack.url}/api/v1/workflow-runs/stream`, { headers });
  assert.equal(res.status, 200);
  let text = '';
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    } catch {
      // cut: ended too
    }
  })();
  await until('the stream to open', () => text.includes(': connected'));
  const upstream = [...open].find((r) => !upstreamsBefore.has(r));
  assert.ok(upstream, 'the engine saw the stream');
  let done = false;
  void ended.then(() => (done = true));
  return { upstream, text: () => text, isDone: () => done, ended };
}

async function signIn(user: TestUser): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${stack.url}/api/v1/session`, {
    method: 'POST',
    headers: { origin: ORIGIN, 'content-type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  assert.equal(res.status, 201);
  const token = /^fd_session=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')![1]!;
  return { cookie: `fd_session=${token}`, csrf: ((await res.json()) as { csrfToken: string }).csrfToken };
}

/** After the revocation: the stream ends (bounded), the engine's stream is closed, and nothing more arrives. */
async function assertEnds(stream: Awaited<ReturnType<typeof openStream>>, what: string) {
  await until(`${what}: the stream ends`, () => stream.isDone(), 10_000);
  await until(`${what}: the upstream stream is closed`, () => !open.has(stream.upstream), 10_000);
  const before = stream.text();
  stream.upstream.write('event: run\ndata: {"after":"revocation"}\n\n');
  assert.equal(stream.text(), before);
  assert.ok(!stream.text().includes('"after"'));
}

test('a stream opened with a console session ends when the user signs out everywhere (from another browser)', async () => {
  const bob = await stack.newUser();
  const here = await signIn(bob);
  const elsewhere = await signIn(bob);
  const stream = await openStream({ cookie: here.cookie });
  const out = await fetch(`${stack.url}/api/v1/session/all`, {
    method: 'DELETE',
    headers: { cookie: elsewhere.cookie, origin: ORIGIN, 'x-csrf-token': elsewhere.csrf },
  });
  assert.equal(out.status, 204);
  await assertEnds(stream, 'sign out everywhere');
  // The browser's EventSource reconnects: refused now.
  assert.equal((await fetch(`${stack.url}/api/v1/workflow-runs/stream`, { headers: { cookie: here.cookie } })).status, 401);
});

test('a stream opened with a console session ends when that session signs out; another session of the user keeps its stream', async () => {
  const carol = await stack.newUser();
  const here = await signIn(carol);
  const other = await signIn(carol);
  const stream = await openStream({ cookie: here.cookie });
  const untouched = await openStream({ cookie: other.cookie });
  const out = await fetch(`${stack.url}/api/v1/session`, { method: 'DELETE', headers: { cookie: here.cookie, origin: ORIGIN, 'x-csrf-token': here.csrf } });
  assert.equal(out.status, 204);
  await assertEnds(stream, 'sign out');
  untouched.upstream.write('event: run\ndata: {"still":"here"}\n\n');
  await until('the other session still gets events', () => untouched.text().includes('"still"'));
  assert.equal(untouched.isDone(), false);
  untouched.upstream.end();
  await untouched.ended;
});

test('a stream opened with an API key ends when the key is revoked', async () => {
  const dave = await stack.newUser();
  const stream = await openStream({ authorization: `Bearer ${dave.writeKey}` });
  const revoked = await fetch(`${stack.url}/api/v1/api-keys/${dave.writeKeyId}`, { method: 'DELETE', headers: { authorization: `Bearer ${dave.writeKey}` } });
  assert.equal(revoked.status, 204);
  await assertEnds(stream, 'API key revoked');
  assert.equal((await fetch(`${stack.url}/api/v1/workflow-runs/stream`, { headers: { authorization: `Bearer ${dave.writeKey}` } })).status, 401);
});
