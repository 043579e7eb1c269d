// An open runs stream on a replica that no revocation event reaches (no bus, or a lost event): the
// edge introspects the stream's credential again every introspection-cache period, so a revoked
// credential's stream still ends, within that period instead of never.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { until } from '@flowdesk/service-kit/testing';
import { startConsoleStack, type ConsoleStack } from './helpers/stack.ts';

let stack: ConsoleStack;
let engine: http.Server;
const open = new Set<http.ServerResponse>();
/** The shortest recheck period the edge allows (at least 1 s, whatever the cache). */
const RECHECK_MS = 1_000;

before(async () => {
  engine = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
    res.write(': connected\n\n');
    open.add(res);
    res.on('close', () => open.delete(res));
  });
  await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
  stack = await startConsoleStack({
    engineUrl: `http://127.0.0.1:${(engine.address() as AddressInfo).port}`,
    revocationEvents: false,
    introspectionCacheMs: RECHECK_MS,
  });
});
after(async () => {
  await stack?.close();
  engine?.closeAllConnections();
  await new Promise((resolve) => engine?.close(resolve));
});

test('without revocation events, a revoked API key loses its open stream within the recheck period', async () => {
  const erin = await stack.newUser();
  const res = await fetch(`${stack.url}/api/v1/workflow-runs/stream`, { headers: { authorization: `Bearer ${erin.writeKey}` } });
  assert.equal(res.status, 200);
  let text = '';
  let done = false;
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    } catch {
      // cut: ended too
    }
    done = true;
  })();
  await until('the stream to open', () => text.includes(': connected'));
  // Three rechecks with a working key (introspections auth received): the stream stays.
  const [upstream] = [...open];
  const introspections = () => stack.authReceived.filter((r) => r.url === '/oauth/introspect').length;
  for (let n = 0; n < 3; n++) {
    const seen = introspections();
    await until(`recheck ${n + 1}`, () => introspections() > seen, 10_000);
    upstream!.write(`event: run\ndata: {"n":${n}}\n\n`);
    await until(`event ${n}`, () => text.includes(`{"n":${n}}`));
  }
  assert.equal(done, false);
  const revoked = await fetch(`${stack.url}/api/v1/api-keys/${erin.writeKeyId}`, { method: 'DELETE', headers: { authorization: `Bearer ${erin.writeKey}` } });
  assert.equal(revoked.status, 204);
  const started = Date.now();
  await until('the stream ends', () => done, 10_000);
  await reading;
  // The cached "active" answer may live one period, the next check finds it revoked: two periods and slack.
  assert.ok(Date.now() - started < 2 * RECHECK_MS + 2_000, `ended after ${Date.now() - started} ms`);
  await until('the upstream stream is closed', () => open.size === 0, 5_000);
});
