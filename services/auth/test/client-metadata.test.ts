import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import { selfSignedCertificate, until } from '@flowdesk/service-kit/testing';
import { auth as sdkAuth } from '@modelcontextprotocol/sdk/client/auth.js';
import { createGuardedHttpClient, parseAllowlist, SsrfPolicy, type GuardedHttpClient } from '@flowdesk/service-kit';
import type { BrowserContext } from 'playwright-core';
import { CHROMIUM, launchChromium } from './helpers/browser.ts';
import { CLIENT_METADATA_LIMITS, ClientMetadataError, fetchMetadata } from '../src/domain/oauth/client-metadata.ts';
import { startTestAuth, type TestAuth } from './helpers/app.ts';
import { MemoryProvider } from './helpers/memory-provider.ts';
import { authorizationCode, tokenRequest } from './helpers/oauth-flow.ts';

// Client ID Metadata Documents end to end over real HTTP on loopback. The documents are served over
// https by this file, with a certificate it makes for 127.0.0.1 (openssl) and hands to auth's guarded
// client as the one CA to trust: so the production rule (a client_id URL is https) holds unchanged,
// and the only test-specific setting is the SSRF allowlist entry for that one host:port, as an
// operator would write it (SSRF_ALLOWLIST). Everything else on loopback stays refused.

const MCP_PATH = '/functions/v1/mcp-server-v2';
/** A 1×1 PNG: the client's logo. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

let dir: string;
let cert: string;
let docs: Server;
let docsOrigin: string;
let auth: TestAuth;
let base: string;
let http: GuardedHttpClient;
let user: { id: string; email: string; password: string };
const hits = new Map<string, number>();
/** Requests to /slow.json, answered (too late) when the file ends. */
const slow: ServerResponse[] = [];
/** Documents whose connection the server saw closed before it answered (auth gave up on them). */
const abandoned = new Map<string, number>();
/** The fetch limit docs/auth.md promises, written out: a test that read CLIENT_METADATA_LIMITS would follow a changed limit. */
const DOCUMENTED_TIMEOUT_MS = 5_000;

const url = (name: string) => `${docsOrigin}/${name}`;
const LOOPBACK_REDIRECT = 'http://127.0.0.1:9/callback';

/** The documents this "client" publishes, by path; each is computed when asked (it names its own URL). */
function documentFor(name: string): { status?: number; headers?: Record<string, string>; body: unknown } | undefined {
  const self = url(name);
  const good = {
    client_id: self,
    client_name: 'Cimd Test App',
    client_uri: docsOrigin,
    logo_uri: url('logo.png'),
    redirect_uris: [LOOPBACK_REDIRECT, `${base}/callback`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  switch (name) {
    case 'good.json':
      return { headers: { 'cache-control': 'max-age=600' }, body: good };
    case 'cached.json':
      return { headers: { 'cache-control': 'public, max-age=600' }, body: good };
    case 'no-logo.json':
      return { body: { ...good, client_name: 'No Logo App', logo_uri: url('missing.png') } };
    case 'big.json':
      return { body: { ...good, padding: 'x'.repeat(CLIENT_METADATA_LIMITS.maxBytes) } };
    case 'other-redirect.json':
      return { body: { ...good, redirect_uris: ['https://elsewhere.example/callback'] } };
    case 'other-id.json':
      return { body: { ...good, client_id: url('good.json') } }; // another document's URL
    case 'secret.json':
      return { body: { ...good, token_endpoint_auth_method: 'client_secret_basic' } };
    case 'http-logo.json':
      return { body: { ...good, logo_uri: `http://127.0.0.1:${new URL(docsOrigin).port}/logo.png` } };
    case 'not-json.json':
      return { body: '<html>hello</html>' };
    case 'gone.json':
    case 'gone-again.json':
      return { status: 404, body: { error: 'not found' } };
    default:
      // many-<n>.json: as many distinct valid documents as a test needs (each its own client).
      return /^many-\d+\.json$/.test(name) ? { body: good } : undefined;
  }
}

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowdesk-cimd-'));
  const pem = selfSignedCertificate(dir);
  cert = pem.cert;
  docs = createServer({ cert, key: pem.key }, (req, res) => {
    const name = (req.url ?? '/').slice(1);
    hits.set(name, (hits.get(name) ?? 0) + 1);
    if (name === 'logo.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    if (name === 'slow.json' || name === 'trickle.json') {
      res.on('close', () => abandoned.set(name, (abandoned.get(name) ?? 0) + 1));
      slow.push(res);
      if (name === 'slow.json') return;
      // Headers at once, then a byte every 100 ms: never idle, never complete.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"client_id":');
      const drip = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(drip));
      return;
    }
    if (name === 'moved.json') return void res.writeHead(302, { location: url('good.json') }).end();
    const doc = documentFor(name);
    if (!doc) return void res.writeHead(404).end();
    res.writeHead(doc.status ?? 200, { 'content-type': 'application/json', ...doc.headers });
    res.end(typeof doc.body === 'string' ? doc.body : JSON.stringify(doc.body));
  });
  await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
  docsOrigin = `https://127.0.0.1:${(docs.address() as AddressInfo).port}`;

  // What an operator writes to let auth reach one private host (docs/auth.md), plus trust in the test's CA.
  http = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist(new URL(docsOrigin).host)), ca: cert });
  auth = await startTestAuth({
    deps: {
      clientMetadataHttp: http,
      // Small enough to reach in a test, in windows of their own (the test moves the clock to a fresh one).
      clientMetadataRateLimit: { max: 20, windowMs: 10 * 60_000 },
      clientMetadataGlobalRateLimit: { max: 30, windowMs: 10 * 60_000 },
    },
    beforeListen: (app, baseUrl) => {
      // The gateway's protected resource metadata (the front routes it there in the real system).
      app.get(`/.well-known/oauth-protected-resource${MCP_PATH}`, async () => ({
        resource: `${baseUrl}${MCP_PATH}`,
        authorization_servers: [baseUrl],
        scopes_supported: ['mcp:read', 'mcp:write'],
      }));
      app.get('/callback', { logLevel: 'silent' }, async (_req, reply) => reply.type('text/html').send('<!doctype html><title>Connected</title>'));
    },
  });
  base = auth.baseUrl;
  user = await auth.newUser();
});

after(async () => {
  for (const res of slow) res.destroy();
  docs?.closeAllConnections();
  await new Promise((resolve) => docs?.close(resolve));
  await auth?.close();
  await http?.close();
  await rm(dir, { recursive: true, force: true });
});

function authorizeUrl(clientId: string, extra: Record<string, string> = {}) {
  const verifier = randomBytes(32).toString('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: LOOPBACK_REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'st',
    scope: 'mcp:read mcp:write',
    ...extra,
  });
  return `${base}/oauth/authorize?${q.toString()}`;
}

async function authorizePage(clientId: string, extra: Record<string, string> = {}, init: { signal?: AbortSignal; dispatcher?: Agent } = {}) {
  // undici's own fetch where a test picks the source address (its Agent); the global one otherwise.
  const res = init.dispatcher
    ? await undiciFetch(authorizeUrl(clientId, extra), { redirect: 'manual', signal: init.signal, dispatcher: init.dispatcher })
    : await fetch(authorizeUrl(clientId, extra), { redirect: 'manual', signal: init.signal });
  return { res, html: await res.text() };
}

describe('discovery', () => {
  test('both metadata documents advertise Client ID Metadata Documents and the iss parameter, with the same facts', async () => {
    const oauth = (await auth.call('GET', '/.well-known/oauth-authorization-server')).body;
    const oidc = (await auth.call('GET', '/.well-known/openid-configuration')).body;
    assert.equal(oauth.client_id_metadata_document_supported, true);
    assert.equal(oauth.authorization_response_iss_parameter_supported, true);
    assert.equal(oauth.registration_endpoint, `${base}/oauth/register`, 'dynamic registration is kept for older clients');
    // OIDC discovery: the same document plus the two members OIDC requires (no ID token is issued).
    assert.deepEqual(
      { ...oidc, subject_types_supported: undefined, id_token_signing_alg_values_supported: undefined },
      { ...oauth, subject_types_supported: undefined, id_token_signing_alg_values_supported: undefined },
    );
    assert.equal(oidc.issuer, base);
    assert.deepEqual(oidc.subject_types_supported, ['public']);
  });
});

describe('a client identified by its metadata document', () => {
  test('signs in by URL alone: consent shows name, logo and host; PKCE; the token introspects as active; refresh and revoke by URL', async () => {
    const clientId = url('good.json');
    const { res, html } = await authorizePage(clientId);
    assert.equal(res.status, 200, html);
    assert.match(html, /<span id="client-name">Cimd Test App<\/span>/);
    assert.ok(html.includes(`<img src="${url('logo.png')}" alt="" width="48" height="48" referrerpolicy="no-referrer"`), html);
    assert.ok(html.includes(`Published by <strong>${new URL(docsOrigin).host}</strong>`), 'the document host, prominently');
    assert.match(res.headers.get('content-security-policy')!, /img-src https:;/, 'images from https only');

    // Through consent with the user's password, then the code with its PKCE verifier, naming the client by its URL.
    const { fields } = await authorizationCode(base, user, clientId);
    const tokens = await tokenRequest(base, fields);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const info = await auth.form('/oauth/introspect', { token: tokens.body.access_token });
    assert.equal(info.body.active, true);
    assert.equal(info.body.sub, user.id);
    assert.equal(info.body.scope, 'mcp:read mcp:write');

    const refreshed = await tokenRequest(base, { grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens.body.refresh_token });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    // A document client has no secret: Basic credentials are refused.
    const basic = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:x`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token }),
    });
    assert.equal(basic.status, 401);
    const revoked = await tokenRequest(base, { client_id: clientId, token: refreshed.body.refresh_token }, '/oauth/revoke');
    assert.equal(revoked.status, 200);
    assert.equal((await auth.form('/oauth/introspect', { token: refreshed.body.access_token })).body.active, false);
  });

  test('the document is cached for its max-age (within bounds), then fetched again', async () => {
    const clientId = url('cached.json');
    const start = new Date();
    auth.setNow(start);
    try {
      assert.equal((await authorizePage(clientId)).res.status, 200);
      assert.equal((await authorizePage(clientId)).res.status, 200);
      assert.equal(hits.get('cached.json'), 1, 'the second request used the cached document');
      auth.setNow(new Date(start.getTime() + 599_000));
      assert.equal((await authorizePage(clientId)).res.status, 200);
      assert.equal(hits.get('cached.json'), 1);
      auth.setNow(new Date(start.getTime() + 601_000));
      assert.equal((await authorizePage(clientId)).res.status, 200);
      assert.equal(hits.get('cached.json'), 2, 'fetched again after max-age=600');
    } finally {
      auth.setNow(undefined);
    }
  });

  test('refused with a clear error page: too large, too slow, mismatched redirect URI, a client_id other than its URL, a secret, not https', async () => {
    const cases: [string, string, RegExp][] = [
      ['too large', url('big.json'), /larger than 5 KB/],
      ['mismatched redirect URI', url('other-redirect.json'), /redirect_uri is not one this application registered/],
      ['client_id differs from its URL', url('other-id.json'), /client_id must be exactly its own URL/],
      ['a shared secret', url('secret.json'), /token_endpoint_auth_method must be none/],
      ['an http logo', url('http-logo.json'), /logo_uri must be an https URL/],
      ['not JSON', url('not-json.json'), /not valid JSON/],
      ['not found', url('gone.json'), /answered 404/],
      ['redirected', url('moved.json'), /served at its own URL, not through a redirect/],
      ['http client_id', url('good.json').replace('https:', 'http:'), /must use https/],
      ['no path', docsOrigin + '/', /must have a path/],
      ['a private address not on the allowlist', `https://localhost:${new URL(docsOrigin).port}/good.json`, /address is not public.*loopback/],
      ['another private address', 'https://10.1.2.3/client.json', /address is not public.*private/],
    ];
    for (const [what, clientId, message] of cases) {
      const { res, html } = await authorizePage(clientId);
      assert.equal(res.status, 400, what);
      assert.equal(res.headers.get('location'), null, `${what}: never redirected`);
      assert.match(res.headers.get('content-type')!, /text\/html/, what);
      assert.match(html, message, what);
    }
  });

  test('too slow: the fetch is abandoned after 5 s, whether nothing arrives or the body trickles in', async () => {
    for (const name of ['slow.json', 'trickle.json']) {
      const started = performance.now();
      // The page must come well before this: a longer limit fails here rather than hanging the test.
      const { res, html } = await authorizePage(url(name), {}, { signal: AbortSignal.timeout(DOCUMENTED_TIMEOUT_MS + 5_000) });
      const elapsed = performance.now() - started;
      assert.equal(res.status, 400, name);
      assert.match(html, /did not arrive within 5 s/, name);
      assert.ok(elapsed >= DOCUMENTED_TIMEOUT_MS - 100, `${name}: gave up after ${elapsed} ms, before the limit`);
      assert.ok(elapsed < DOCUMENTED_TIMEOUT_MS + 3_000, `${name}: gave up after ${elapsed} ms, not at the 5 s limit`);
      // And auth let go of the connection: the document server sees it closed.
      await until(`${name}: the document server sees its connection closed`, () => abandoned.get(name) === 1, 3_000);
    }
  });

  test('without an allowlist (the default), a document on a loopback address is refused before any connection', async () => {
    const unguarded = createGuardedHttpClient({ ca: cert });
    try {
      const before = hits.get('good.json') ?? 0;
      await assert.rejects(
        fetchMetadata(unguarded, url('good.json')),
        (e: unknown) => e instanceof ClientMetadataError && /not public.*loopback/.test(e.message),
      );
      assert.equal(hits.get('good.json') ?? 0, before, 'nothing reached the server');
    } finally {
      await unguarded.close();
    }
  });

  test('iss on every redirect back: an error and a denial', async () => {
    const error = await authorizePage(url('good.json'), { response_type: 'token' });
    assert.equal(error.res.status, 302);
    const location = new URL(error.res.headers.get('location')!);
    assert.equal(location.searchParams.get('error'), 'unsupported_response_type');
    assert.equal(location.searchParams.get('iss'), base);

    const page = await authorizePage(url('good.json'));
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.html)![1]!;
    const cookie = page.res.headers.get('set-cookie')!.split(';')[0]!;
    const denied = await fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrf_token: csrf, decision: 'deny' }),
    });
    assert.equal(denied.status, 302);
    const back = new URL(denied.headers.get('location')!);
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('iss'), base);
  });
});

/** A GET /oauth/authorize from a given loopback source address (127.0.0.x): each is another caller. */
async function authorizeFrom(source: string, clientId: string) {
  const dispatcher = new Agent({ localAddress: source });
  try {
    return await authorizePage(clientId, {}, { dispatcher });
  } finally {
    await dispatcher.close();
  }
}

describe('limits on fetching documents', () => {
  // A window of their own for the rate limits: the clock moves past every earlier window.
  let clock = Date.now() + 3_600_000;
  const freshWindow = () => {
    clock += 11 * 60_000;
    auth.setNow(new Date(clock));
  };
  after(() => auth.setNow(undefined));

  test('fetches are limited per caller address (20 per 10 minutes here) and over all addresses (30): 429 with Retry-After, nothing fetched', async () => {
    freshWindow();
    const fetched = () => [...hits].filter(([name]) => name.startsWith('many-')).reduce((n, [, c]) => n + c, 0);
    for (let i = 0; i < 20; i++) assert.equal((await authorizeFrom('127.0.0.20', url(`many-${i}.json`))).res.status, 200, `document ${i}`);
    const refused = await authorizeFrom('127.0.0.20', url('many-20.json'));
    assert.equal(refused.res.status, 429);
    assert.ok(Number(refused.res.headers.get('retry-after')) > 0);
    assert.equal(refused.res.headers.get('location'), null, 'never redirected');
    assert.match(refused.html, /Too many client metadata documents fetched for this address/);
    assert.equal(fetched(), 20, 'the refused request fetched nothing');
    // A cached document costs no fetch, so the same caller still signs in with one it used.
    assert.equal((await authorizeFrom('127.0.0.20', url('many-0.json'))).res.status, 200);
    // Another address is not held up by the first one; the ceiling over all addresses is.
    for (let i = 21; i < 31; i++) assert.equal((await authorizeFrom('127.0.0.21', url(`many-${i}.json`))).res.status, 200, `document ${i}`);
    const ceiling = await authorizeFrom('127.0.0.22', url('many-31.json'));
    assert.equal(ceiling.res.status, 429);
    assert.match(ceiling.html, /right now/);
    assert.equal(fetched(), 30);
    freshWindow();
    assert.equal((await authorizeFrom('127.0.0.20', url('many-31.json'))).res.status, 200, 'a new window');
  });

  test('a failing document is remembered for 60 s: refused again without a fetch, fetched again after', async () => {
    freshWindow();
    const first = await authorizeFrom('127.0.0.23', url('gone-again.json'));
    assert.equal(first.res.status, 400);
    assert.match(first.html, /answered 404/);
    for (const source of ['127.0.0.23', '127.0.0.24', '127.0.0.25']) {
      const again = await authorizeFrom(source, url('gone-again.json'));
      assert.equal(again.res.status, 400);
      assert.match(again.html, /answered 404.*Remembered from a fetch/s);
    }
    assert.equal(hits.get('gone-again.json'), 1, 'one fetch for four requests from three addresses');
    clock += 61_000;
    auth.setNow(new Date(clock));
    assert.equal((await authorizeFrom('127.0.0.23', url('gone-again.json'))).res.status, 400);
    assert.equal(hits.get('gone-again.json'), 2, 'fetched again once the failure was forgotten');
  });
});

describe(
  'the official MCP SDK client with a client metadata URL, consent in chromium',
  { skip: !existsSync(CHROMIUM) && `no ${CHROMIUM}: run scripts/install-chromium.sh` },
  () => {
    let chromiumBrowser: Awaited<ReturnType<typeof launchChromium>>;
    let browser: BrowserContext;
    before(async () => {
      // The logo comes from the test's https server, whose certificate the browser does not know.
      chromiumBrowser = await launchChromium({ ignoreHTTPSErrors: true });
      browser = chromiumBrowser.context;
    });
    after(async () => {
      await chromiumBrowser?.close();
    });

    test('no registration: the SDK sends the URL as client_id; the page shows name, logo and host; the code carries iss; tokens work', async () => {
      const provider = new MemoryProvider(`${base}/callback`, 'ignored: the document names the client');
      Object.assign(provider, { clientMetadataUrl: url('good.json') });
      const registrations = auth.logs.filter((l) => l.includes('/oauth/register')).length;
      assert.equal(await sdkAuth(provider, { serverUrl: `${base}${MCP_PATH}` }), 'REDIRECT');
      assert.equal(provider.authorizationUrl!.searchParams.get('client_id'), url('good.json'));
      assert.equal(auth.logs.filter((l) => l.includes('/oauth/register')).length, registrations, 'no dynamic registration');

      const page = await browser.newPage();
      await page.goto(provider.authorizationUrl!.toString());
      assert.equal(await page.locator('#client-name').innerText(), 'Cimd Test App');
      assert.match(await page.locator('#client-host').innerText(), new RegExp(`Published by ${new URL(docsOrigin).host.replace(/\./g, '\\.')}`));
      const logo = page.locator('#client-logo img');
      assert.ok(
        await logo.evaluate((img) => (img as { complete: boolean; naturalWidth: number }).complete && (img as { naturalWidth: number }).naturalWidth === 1),
        'the logo loaded',
      );
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill(user.password);
      await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button', { name: 'Approve' }).click()]);
      const landed = new URL(page.url());
      assert.equal(landed.searchParams.get('iss'), base);
      assert.equal(await sdkAuth(provider, { serverUrl: `${base}${MCP_PATH}`, authorizationCode: landed.searchParams.get('code')! }), 'AUTHORIZED');
      assert.equal((await auth.form('/oauth/introspect', { token: provider.saved!.access_token })).body.active, true);

      // A logo that does not load: the initial shows instead, no broken image.
      await page.goto(authorizeUrl(url('no-logo.json')));
      assert.equal(await page.locator('#client-name').innerText(), 'No Logo App');
      assert.equal(await page.locator('#client-logo').innerText(), 'N');
      assert.equal(await page.locator('#client-logo img').evaluate((img) => (img as { naturalWidth: number }).naturalWidth), 0);
      await page.close();
    });
  },
);
