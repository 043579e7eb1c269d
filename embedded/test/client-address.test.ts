// The client address behind the embedded front: the front replaces any X-Forwarded-For a caller sends
// with the address it saw, and auth (in process behind it, trusting the front) throttles by that real address —
// a caller cannot escape the per-address login throttle by writing a header.
import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { buildApp, generateServiceSecret, migrateAuth } from '@flowdesk/auth';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { closeServer, listenServer } from '../src/http-server.ts';
import { createLogger } from '../src/log.ts';
import { clientAddress, createProxy, parseFrontTrust } from '../src/proxy.ts';

let database: TestDatabase;
let auth: Service;
let front: ReturnType<typeof createProxy>;
let base: string;

before(async () => {
  database = await createTestDatabase();
  await migrateAuth(database.db);
  auth = await buildApp({
    db: database.db,
    signingKeys: generateSigningKeys(),
    serviceClients: { 'mcp-gateway': generateServiceSecret() },
    publicBaseUrl: 'http://127.0.0.1:1',
    logLevel: 'silent',
    // A small address budget so the test is short; the account budget stays out of the way.
    throttle: {
      address: { free: 3, baseDelayMs: 60_000, maxDelayMs: 60_000, forgetAfterMs: 86_400_000 },
      account: { free: 100, baseDelayMs: 1000, maxDelayMs: 1000, forgetAfterMs: 86_400_000 },
    },
  });
  await auth.ready();
  front = createProxy({
    routes: [{ prefix: '/auth/', service: 'auth' }],
    services: ['auth'],
    target: () => auth,
    log: createLogger('front-test', 'silent'),
  });
  base = await listenServer(front, 0, '127.0.0.1');
});
after(async () => {
  await closeServer(front);
  await auth.close();
  await database.close();
});

test('a caller who sends its own X-Forwarded-For through the front is still throttled by its real address', async () => {
  const attempt = (i: number) =>
    fetch(`${base}/auth/v1/sessions`, {
      method: 'POST',
      // A different address claimed, and a different account tried, on every request.
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.${i}, 198.51.100.${i}` },
      body: JSON.stringify({ email: `guess-${i}@example.test`, password: 'a wrong password' }),
    });
  const statuses: number[] = [];
  for (let i = 1; i <= 6; i++) {
    const res = await attempt(i);
    await res.body?.cancel();
    statuses.push(res.status);
  }
  // 3 free, the 4th counted (it opens the wait), from then on 429: one address, whatever was claimed.
  assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429]);
  const last = await attempt(7);
  assert.equal(last.status, 429);
  assert.ok(Number(last.headers.get('retry-after')) > 0);
  assert.equal(((await last.json()) as { error: string }).error, 'too_many_requests');
});

test('TRUST_PROXY for the front: a hop count or trusted proxies decide which X-Forwarded-For entry is the client', () => {
  const req = (peer: string, xff?: string) => {
    const socket = new Socket();
    Object.defineProperty(socket, 'remoteAddress', { value: peer });
    const r = new IncomingMessage(socket);
    if (xff) r.headers['x-forwarded-for'] = xff;
    return r;
  };
  // Nothing trusted (the default): the peer, whatever the header says.
  assert.equal(clientAddress(req('::ffff:192.0.2.7', '6.6.6.6'), undefined), '192.0.2.7');
  // One proxy in front: the entry it appended.
  assert.equal(clientAddress(req('10.0.0.5', '6.6.6.6, 192.0.2.7'), parseFrontTrust('1')), '192.0.2.7');
  // Trusted proxies by CIDR: walked from the right past them, never further.
  assert.equal(clientAddress(req('10.0.0.5', '6.6.6.6, 192.0.2.7, 10.0.0.9'), parseFrontTrust('10.0.0.0/8')), '192.0.2.7');
  assert.equal(clientAddress(req('192.0.2.99', '6.6.6.6'), parseFrontTrust('10.0.0.0/8')), '192.0.2.99', 'an untrusted peer is the client');
  assert.equal(clientAddress(req('127.0.0.1', '6.6.6.6'), parseFrontTrust('loopback')), '6.6.6.6');
  assert.throws(() => parseFrontTrust('proxy.example'), /TRUST_PROXY/);
});
