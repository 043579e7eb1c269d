// The Client ID Metadata Document fetch gives up on a slow document server within its time limit
// (CLIENT_METADATA_LIMITS.timeoutMs, 5 s: docs/auth.md), asserted as a bound on both sides: a server
// that accepts the request and never answers costs a sign-in attempt at most ~5 s, not as long as the
// server likes; other failures say what they are. Over https on loopback with a certificate made here (the rule "a client_id URL is
// https" holds unchanged); the SSRF allowlist opens exactly that host:port.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { selfSignedCertificate } from '@flowdesk/service-kit/testing';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createGuardedHttpClient, parseAllowlist, SsrfPolicy, type GuardedHttpClient } from '@flowdesk/service-kit';
import { CLIENT_METADATA_LIMITS, ClientMetadataError, fetchMetadata } from '../src/domain/oauth/client-metadata.ts';

let dir: string;
let server: Server;
let origin: string;
let http: GuardedHttpClient;
const held: ServerResponse[] = [];
/** The Accept header of each request the server had. */
const accepts: (string | undefined)[] = [];

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowdesk-cimd-slow-'));
  const pem = selfSignedCertificate(dir);
  const certPem = pem.cert;
  // Accepts every request and never answers it.
  server = createServer({ cert: certPem, key: pem.key }, (req, res) => (accepts.push(req.headers.accept), void held.push(res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  http = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist(new URL(origin).host)), ca: certPem });
});
after(async () => {
  for (const res of held) res.destroy();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await http?.close();
  await rm(dir, { recursive: true, force: true });
});

test('a document server that never answers is given up after the 5 s limit, not later', async () => {
  assert.equal(CLIENT_METADATA_LIMITS.timeoutMs, 5_000);
  const started = performance.now();
  let giveUp: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    fetchMetadata(http, `${origin}/client.json`).then(
      () => 'fetched',
      (err: unknown) => err,
    ),
    new Promise((resolve) => (giveUp = setTimeout(resolve, 15_000, 'still waiting after 15 s'))),
  ]);
  clearTimeout(giveUp);
  const ms = performance.now() - started;
  assert.ok(outcome instanceof ClientMetadataError, `refused with a clear error, got: ${String(outcome)}`);
  assert.match(outcome.message, /did not arrive within 5 s/);
  assert.equal(held.length, 1, 'the server had the request');
  assert.deepEqual(accepts, ['application/json'], 'asking for JSON');
  assert.ok(ms >= 4_900, `not before the limit (${Math.round(ms)} ms)`);
  assert.ok(ms < 8_000, `given up within the limit and a margin (${Math.round(ms)} ms)`);
});

test('a fetch that fails otherwise says so, not that it was slow: a private address not allowed, a closed port', async () => {
  const port = new URL(origin).port;
  await assert.rejects(fetchMetadata(http, `https://localhost:${port}/client.json`), (e: unknown) => {
    assert.ok(e instanceof ClientMetadataError);
    assert.match(e.message, /^The client metadata document cannot be fetched: its address is not public \(.*loopback/);
    return true;
  });
  // A port on the allowed host that nobody listens on (this server's, once it is closed, is not known to stay free: 1 is).
  const closed = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist('127.0.0.1:1')) });
  try {
    await assert.rejects(fetchMetadata(closed, 'https://127.0.0.1:1/client.json'), (e: unknown) => {
      assert.ok(e instanceof ClientMetadataError);
      assert.match(e.message, /^The client metadata document cannot be fetched: /);
      assert.doesNotMatch(e.message, /did not arrive/);
      return true;
    });
  } finally {
    await closed.close();
  }
});
