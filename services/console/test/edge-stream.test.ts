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
