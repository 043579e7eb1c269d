// What anonymous OAuth requests leave behind is bounded (issue 35): GET /oauth/authorize is limited
// per caller address (each stores a pending consent request), expired consent requests are deleted,
// and so are Client ID Metadata Document clients nobody uses (no live grant, document expired).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Agent, fetch } from 'undici';
import { until } from '@flowdesk/service-kit/testing';
import { upsertGrant } from '../src/domain/oauth/grants.ts';
import { sweepOAuthRows } from '../src/domain/oauth/sweep.ts';
import { startTestAuth, type TestAuth } from './helpers/app.ts';

let auth: TestAuth;
let clientId: string;
const REDIRECT = 'http://127.0.0.1:9/callback';

before(async () => {
  auth = await startTestAuth({ deps: { authorizeRateLimit: { max: 5, windowMs: 10 * 60_000 }, oauthSweepIntervalMs: 50 } });
  const registered = await auth.call('POST', '/oauth/register', {
    body: { client_name: 'sweep', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
  });
  assert.equal(registered.status, 201);
  clientId = registered.body.client_id;
});
after(() => auth?.close());

// The test's clock only moves forward, past every earlier rate-limit window.
let clock = Date.now();
const setClock = (ms: number) => {
  clock = ms;
  auth.setNow(new Date(clock));
};

async function authorizeFrom(source: string) {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
    code_challenge_method: 'S256',
    state: 's',
  });
  const dispatcher = new Agent({ localAddress: source });
  try {
    const res = await fetch(`${auth.baseUrl}/oauth/authorize?${q.toString()}`, { redirect: 'manual', dispatcher });
    return { status: res.status, headers: res.headers, html: await res.text() };
  } finally {
    await dispatcher.close();
  }
}

const consentRows = () => auth.prisma.oAuthConsentRequest.count();

describe('GET /oauth/authorize', () => {
  test('is limited per caller address (5 per 10 minutes here): 429 page with Retry-After, nothing stored; other addresses unaffected', async () => {
    setClock(clock + 3_600_000);
    const before = await consentRows();
    for (let i = 0; i < 5; i++) assert.equal((await authorizeFrom('127.0.0.40')).status, 200, `page ${i + 1}`);
    const refused = await authorizeFrom('127.0.0.40');
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal(refused.headers.get('location'), null, 'never redirected');
    assert.match(refused.html, /Too many sign-in pages were opened from this address/);
    assert.equal(await consentRows(), before + 5, 'the refused request stored nothing');
    assert.equal((await authorizeFrom('127.0.0.41')).status, 200, 'another address');
    setClock(clock + 11 * 60_000);
    assert.equal((await authorizeFrom('127.0.0.40')).status, 200, 'a new window');
  });

  test('expired consent requests are deleted by the background sweep; pending ones stay', async () => {
    setClock(clock + 3_600_000);
    for (let i = 0; i < 3; i++) assert.equal((await authorizeFrom('127.0.0.42')).status, 200);
    const pending = await auth.prisma.oAuthConsentRequest.count({ where: { expiresAt: { gt: new Date(clock) } } });
    assert.ok(pending >= 3);
    // Past the 10-minute life of every page so far, and one page opened now that must survive.
    setClock(clock + 10 * 60_000 + 1000);
    assert.equal((await authorizeFrom('127.0.0.43')).status, 200);
    await until('the sweep deletes every expired consent request', async () => (await consentRows()) === 1, 20_000);
    assert.equal(await auth.prisma.oAuthConsentRequest.count({ where: { expiresAt: { lte: new Date(clock) } } }), 0);
  });
});

describe('Client ID Metadata Document clients', () => {
  test('one nobody uses (no live grant, no pending consent, document expired) is deleted; the others stay', async () => {
    // Dated ahead of the app's clock, so its own background sweep leaves them alone; the sweep below
    // runs at `now`, when the "expired" ones have been expired for longer than the 10-minute grace.
    const past = new Date(clock + 60_000);
    const now = new Date(past.getTime() + 10 * 60_000 + 1000);
    const future = new Date(clock + 30 * 60_000);
    const client = (name: string, expiresAt: Date) =>
      auth.prisma.oAuthClient.create({
        data: {
          name,
          redirectUris: [REDIRECT],
          grantTypes: ['authorization_code', 'refresh_token'],
          tokenEndpointAuthMethod: 'none',
          metadataUrl: `https://${name}.example/client.json`,
          metadataFetchedAt: new Date(now.getTime() - 3_600_000),
          metadataExpiresAt: expiresAt,
          createdAt: new Date(now.getTime() - 3_600_000),
        },
      });
    const unused = await client('unused', past);
    const lately = await client('lately', new Date(now.getTime() - 60_000));
    const disconnected = await client('disconnected', past);
    const fresh = await client('fresh', future);
    const granted = await client('granted', past);
    const consenting = await client('consenting', past);
    const user = await auth.newUser();
    await upsertGrant(auth.prisma, user.id, granted.id, 'mcp:read', now);
    const oldGrant = await upsertGrant(auth.prisma, user.id, disconnected.id, 'mcp:read', now);
    await auth.prisma.oAuthGrant.update({ where: { id: oldGrant }, data: { revokedAt: now } });
    await auth.prisma.oAuthConsentRequest.create({
      data: {
        clientId: consenting.id,
        redirectUri: REDIRECT,
        codeChallenge: 'x'.repeat(43),
        scope: 'mcp:read',
        resource: 'r',
        csrfHash: randomBytes(32),
        browserHash: randomBytes(32),
        createdAt: now,
        expiresAt: future,
      },
    });
    // A registered (not document) client is never touched, whatever its age.
    const registered = await auth.prisma.oAuthClient.findUniqueOrThrow({ where: { id: clientId } });

    const swept = await sweepOAuthRows(auth.prisma, now, { batch: 1 });
    assert.equal(swept.metadataClients, 2, 'in batches of one, until none is left');
    const left = new Set((await auth.prisma.oAuthClient.findMany({ select: { id: true } })).map((c) => c.id));
    assert.ok(!left.has(unused.id), 'unused: deleted');
    assert.ok(!left.has(disconnected.id), 'only a revoked grant: deleted, with it');
    assert.equal(await auth.prisma.oAuthGrant.count({ where: { id: oldGrant } }), 0);
    for (const kept of [fresh, lately, granted, consenting, registered]) assert.ok(left.has(kept.id), `${kept.name}: kept`);
  });
});
