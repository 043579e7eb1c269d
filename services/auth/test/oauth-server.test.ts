import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { auth as sdkAuth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { BrowserContext } from 'playwright-core';
import { launchChromium } from './helpers/browser.ts';
import { startTestAuth, type Res, type TestAuth } from './helpers/app.ts';
import { MemoryProvider } from './helpers/memory-provider.ts';

// The OAuth 2.1 authorization server end to end over real HTTP on loopback: the official MCP SDK's
// client drives discovery, registration, token and refresh; Debian's chromium drives the consent page.

const MCP_PATH = '/functions/v1/mcp-server-v2';

let auth: TestAuth;
let base: string;
let mcpUrl: string;
let user: { id: string; email: string; password: string };
let writeKey: { id: string; secret: string };
/** Whether the stand-in for the gateway's protected resource metadata answers (RFC 9728). */
let prmServed = true;
/** What arrived on the test redirect URI. */
const callbacks: URLSearchParams[] = [];
/** Every secret handled here: none may reach a log line. */
const secrets: string[] = [];
const remember = <T extends string | undefined>(s: T): T => {
  if (s) secrets.push(s);
  return s;
};

before(async () => {
  auth = await startTestAuth({
    // Well above the registrations this file makes within a minute on a fast machine (the step-up
    // cases added some and the last suites got 429), low enough for the flood test below.
    registrationRateLimit: { max: 100, windowMs: 60_000 },
    beforeListen: (app, baseUrl) => {
      // The gateway serves this document in the real system (the front routes it there); a stub
      // on the same origin lets the SDK find us exactly as it would.
      app.get(`/.well-known/oauth-protected-resource${MCP_PATH}`, async (_req, reply) => {
        if (!prmServed) return reply.code(404).send({ error: 'not_found', message: 'none' });
        return {
          resource: `${baseUrl}${MCP_PATH}`,
          authorization_servers: [baseUrl],
          scopes_supported: ['mcp:read', 'mcp:write'],
          bearer_methods_supported: ['header'],
        };
      });
      // The client's own callback (it lives in the client in reality): kept out of auth's logs.
      app.get('/callback', { logLevel: 'silent' }, async (req, reply) => {
        callbacks.push(new URLSearchParams(req.url.split('?')[1] ?? ''));
        return reply.type('text/html').send('<!doctype html><title>Connected</title><p>You can close this window.</p>');
      });
    },
  });
  base = auth.baseUrl;
  mcpUrl = `${base}${MCP_PATH}`;
  user = await auth.newUser();
  writeKey = await auth.newKey(user.id, 'mcp:write');
  remember(user.password);
  remember(writeKey.secret);
});
after(() => auth.close());

const introspect = (token: string) => auth.form('/oauth/introspect', { token });
const tokenRequest = (fields: Record<string, string>, header?: string | null) => auth.form('/oauth/token', fields, { header: header ?? null });
const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

async function register(metadata: Record<string, unknown>): Promise<Res> {
  return auth.call('POST', '/oauth/register', { body: metadata });
}

async function publicClient(redirect = `${base}/callback`, name = 'Form Client'): Promise<string> {
  const res = await register({ client_name: name, redirect_uris: [redirect], token_endpoint_auth_method: 'none' });
  assert.equal(res.status, 201, res.text);
  return res.body.client_id;
}

interface Authorization {
  clientId: string;
  verifier?: string;
  redirectUri?: string;
  scope?: string;
  state?: string;
  extra?: Record<string, string>;
}

function authorizeUrl(a: Authorization): string {
  const verifier = a.verifier ?? randomBytes(32).toString('base64url');
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: a.clientId,
    redirect_uri: a.redirectUri ?? `${base}/callback`,
    code_challenge: challengeOf(verifier),
    code_challenge_method: 'S256',
    state: a.state ?? 'st-1',
    ...(a.scope ? { scope: a.scope } : {}),
    ...a.extra,
  });
  return `/oauth/authorize?${params.toString()}`;
}

/** What a browser does on the consent page, as plain HTTP: load it, keep its cookie, post the form. */
async function consentForm(pathAndQuery: string) {
  const res = await fetch(`${base}${pathAndQuery}`, { redirect: 'manual' });
  const html = await res.text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  return { res, html, csrf: remember(csrf), cookie };
}

async function postConsent(csrf: string | undefined, cookie: string | undefined, fields: Record<string, string | string[]>) {
  const body = new URLSearchParams();
  if (csrf) body.append('csrf_token', csrf);
  for (const [k, v] of Object.entries(fields)) for (const x of ([] as string[]).concat(v)) body.append(k, x);
  const res = await fetch(`${base}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body,
  });
  return { res, html: await res.text(), location: res.headers.get('location') };
}

/** Approves with the user's credentials; returns the code from the redirect. */
async function obtainCode(a: Authorization, scopes: string[] = ['mcp:read', 'mcp:write']): Promise<string> {
  const { csrf, cookie, res } = await consentForm(authorizeUrl(a));
  assert.equal(res.status, 200);
  const posted = await postConsent(csrf, cookie, { decision: 'approve', email: user.email, password: user.password, scope: scopes });
  assert.equal(posted.res.status, 302, posted.html);
  const code = new URL(posted.location!).searchParams.get('code');
  assert.ok(code);
  return remember(code);
}

async function codeGrant(clientId: string, code: string, verifier: string, redirectUri = `${base}/callback`) {
  return tokenRequest({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri });
}

async function freshTokens(clientId?: string) {
  const id = clientId ?? (await publicClient());
  const verifier = randomBytes(32).toString('base64url');
  const code = await obtainCode({ clientId: id, verifier });
  const res = await codeGrant(id, code, verifier);
  assert.equal(res.status, 200, res.text);
  remember(res.body.access_token);
  remember(res.body.refresh_token);
  return { clientId: id, access: res.body.access_token as string, refresh: res.body.refresh_token as string };
}

describe('discovery (RFC 8414)', () => {
  test('both metadata documents name PUBLIC_BASE_URL as issuer and every endpoint under it, whatever the Host header', async () => {
    for (const doc of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await auth.call('GET', doc, { headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' } });
      assert.equal(res.status, 200, doc);
      const m = res.body;
      assert.equal(m.issuer, base);
      assert.deepEqual(
        [m.authorization_endpoint, m.token_endpoint, m.registration_endpoint, m.revocation_endpoint, m.introspection_endpoint, m.jwks_uri],
        ['/oauth/authorize', '/oauth/token', '/oauth/register', '/oauth/revoke', '/oauth/introspect', '/.well-known/jwks.json'].map((p) => `${base}${p}`),
      );
      assert.deepEqual(m.scopes_supported, ['mcp:read', 'mcp:write']);
      assert.deepEqual(m.response_types_supported, ['code']);
      assert.deepEqual(m.grant_types_supported, ['authorization_code', 'refresh_token']);
      assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(m.token_endpoint_auth_methods_supported, ['none', 'client_secret_basic']);
      assert.ok(!JSON.stringify(m).includes('evil.example'));
    }
  });
});

describe('the official MCP SDK client, with the consent approved in chromium', () => {
  let chromiumBrowser: Awaited<ReturnType<typeof launchChromium>>;
  let browser: BrowserContext;
  before(async () => {
    chromiumBrowser = await launchChromium();
    browser = chromiumBrowser.context;
  });
  after(async () => {
    await chromiumBrowser?.close();
  });

  test('discovery → registration → consent (write unticked) → token → refresh → revoke', async () => {
    const provider = new MemoryProvider(`${base}/callback`, 'Claude Test Client', remember, 'mcp:read mcp:write');
    // 1. Discovery and dynamic registration: the SDK finds the resource metadata, then ours.
    assert.equal(await sdkAuth(provider, { serverUrl: mcpUrl }), 'REDIRECT');
    assert.ok(provider.client?.client_id, 'the SDK registered a client');
    const authUrl = provider.authorizationUrl!;
    assert.equal(authUrl.origin + authUrl.pathname, `${base}/oauth/authorize`);
    assert.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authUrl.searchParams.get('resource'), mcpUrl);

    // 2. The user, in a real browser: sees who asks for what, unticks write, approves.
    const page = await browser.newPage();
    await page.goto(authUrl.toString());
    assert.equal(await page.locator('h1').innerText(), 'Connect Claude Test Client to Flowdesk');
    const read = page.getByLabel('Read your workspace');
    const write = page.getByLabel('Change your workspace');
    assert.equal(await read.isChecked(), true);
    assert.equal(await write.isChecked(), true);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await write.uncheck();
    const shot = path.join(tmpdir(), 'flowdesk-consent.png');
    await page.screenshot({ path: shot, fullPage: true });
    await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button', { name: 'Approve' }).click()]);
    const landed = new URL(page.url());
    await page.close();
    const code = remember(landed.searchParams.get('code')!);
    assert.match(code, /^fdc_/);
    assert.equal(landed.searchParams.get('state'), provider.stateValue);
    assert.equal(landed.searchParams.get('iss'), base);

    // 3. Code → tokens, PKCE verified by the server.
    assert.equal(await sdkAuth(provider, { serverUrl: mcpUrl, authorizationCode: code }), 'AUTHORIZED');
    const first = provider.saved!;
    assert.match(first.access_token, /^fdo_[0-9A-Za-z]{43}$/);
    assert.match(first.refresh_token!, /^fdr_[0-9A-Za-z]{43}$/);
    assert.equal(first.scope, 'mcp:read', 'only what the user approved');
    assert.equal(first.expires_in, 3600);
    const info = await introspect(first.access_token);
    assert.deepEqual(
      { ...info.body, exp: undefined, iat: undefined },
      {
        active: true,
        sub: user.id,
        scope: 'mcp:read',
        client_id: provider.client.client_id,
        token_type: 'Bearer',
        aud: mcpUrl,
        exp: undefined,
        iat: undefined,
      },
    );
    assert.ok(Math.abs(info.body.exp - (Date.now() / 1000 + 3600)) < 60);

    // The gateway exchanges it for an internal token that can read, not write.
    const exchanged = await auth.form('/oauth/token', {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: first.access_token,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      audience: 'workspace-api',
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal(exchanged.body.scope, 'mcp:read');
    remember(exchanged.body.access_token);

    // Connected Apps lists the client with what was approved.
    const apps = await auth.call('GET', '/auth/v1/connected-apps', { token: writeKey.secret });
    const entry = apps.body.items.find((i: { type: string; name: string }) => i.type === 'oauth_client' && i.name === 'Claude Test Client');
    assert.equal(entry?.scope, 'mcp:read');
    assert.ok(entry.lastUsedAt, 'using the token counts as a use');

    // 4. Refresh: the SDK rotates the pair; the old refresh token is spent.
    assert.equal(await sdkAuth(provider, { serverUrl: mcpUrl }), 'AUTHORIZED');
    const second = provider.saved!;
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.notEqual(second.access_token, first.access_token);
    assert.equal((await introspect(second.access_token)).body.active, true);

    // 5. Revoke the refresh token (RFC 7009): its family dies, access token included.
    const metadata = (await auth.call('GET', '/.well-known/oauth-authorization-server')).body;
    const revoked = await fetch(metadata.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: second.refresh_token!, token_type_hint: 'refresh_token', client_id: provider.client.client_id }),
    });
    assert.equal(revoked.status, 200);
    assert.deepEqual((await introspect(second.access_token)).body, { active: false });
    const refreshAfter = await tokenRequest({ grant_type: 'refresh_token', refresh_token: second.refresh_token!, client_id: provider.client.client_id });
    assert.deepEqual([refreshAfter.status, refreshAfter.body.error], [400, 'invalid_grant']);
  });

  test('signed in to the console (fd_session cookie): the page only asks Approve / Deny, no password', async () => {
    const signedIn = await auth.call('POST', '/auth/v1/sessions', { body: { email: user.email, password: user.password } });
    assert.equal(signedIn.status, 201);
    const session = remember(signedIn.body.token as string);
    // What the console sets on sign-in (HttpOnly, SameSite=Lax, Path=/).
    await browser.addCookies([{ name: 'fd_session', value: session, url: base, httpOnly: true, sameSite: 'Lax' }]);
    try {
      const provider = new MemoryProvider(`${base}/callback`, 'Signed In Client', remember, 'mcp:read mcp:write');
      assert.equal(await sdkAuth(provider, { serverUrl: mcpUrl }), 'REDIRECT');
      const page = await browser.newPage();
      await page.goto(provider.authorizationUrl!.toString());
      assert.equal(await page.locator('h1').innerText(), 'Connect Signed In Client to Flowdesk');
      const who = await page.locator('#signed-in-as').innerText();
      assert.ok(who.startsWith(`Signed in as ${user.email}. Not you? Sign out`), who);
      assert.equal(await page.getByRole('link', { name: 'Sign out' }).getAttribute('href'), '/');
      assert.equal(await page.getByLabel('Password').count(), 0, 'no password field');
      assert.equal(await page.getByLabel('Email').count(), 0);
      await page.screenshot({ path: path.join(tmpdir(), 'flowdesk-consent-signed-in.png'), fullPage: true });
      await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button', { name: 'Approve' }).click()]);
      const landed = new URL(page.url());
      await page.close();
      const code = remember(landed.searchParams.get('code')!);
      assert.match(code, /^fdc_/);
      assert.equal(await sdkAuth(provider, { serverUrl: mcpUrl, authorizationCode: code }), 'AUTHORIZED');
      const info = await introspect(provider.saved!.access_token);
      assert.deepEqual([info.body.active, info.body.sub, info.body.scope], [true, user.id, 'mcp:read mcp:write']);

      // Signed out in the console: the same page asks for the password again.
      assert.equal((await auth.call('DELETE', '/auth/v1/sessions/current', { token: session })).status, 204);
      const again = new MemoryProvider(`${base}/callback`, 'Signed Out Client', remember, 'mcp:read');
      assert.equal(await sdkAuth(again, { serverUrl: mcpUrl }), 'REDIRECT');
      const form = await browser.newPage();
      await form.goto(again.authorizationUrl!.toString());
      assert.equal(await form.getByLabel('Password').count(), 1);
      assert.equal(await form.locator('#signed-in-as').count(), 0);
      await form.close();
    } finally {
      await browser.clearCookies();
    }
  });

  test('Deny in the browser sends the user back with error=access_denied and the state', async () => {
    const clientId = await publicClient(`${base}/callback`, 'Denied App');
    const page = await browser.newPage();
    await page.goto(`${base}${authorizeUrl({ clientId, state: 'deny-state' })}`);
    // Deny needs no password (formnovalidate): the user just says no.
    await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button', { name: 'Deny' }).click()]);
    const landed = new URL(page.url());
    await page.close();
    assert.equal(landed.searchParams.get('error'), 'access_denied');
    assert.equal(landed.searchParams.get('state'), 'deny-state');
    assert.equal(landed.searchParams.get('code'), null);
  });
});

test('without protected resource metadata the SDK falls back to our metadata and the resource defaults to the MCP URL', async () => {
  prmServed = false;
  try {
    const provider = new MemoryProvider(`${base}/callback`, 'Fallback Client', remember, 'mcp:read mcp:write');
    assert.equal(await sdkAuth(provider, { serverUrl: mcpUrl }), 'REDIRECT');
    const url = provider.authorizationUrl!;
    assert.equal(url.searchParams.get('resource'), null, 'the SDK names no resource without PRM');
    const { csrf, cookie } = await consentForm(url.pathname + url.search);
    const posted = await postConsent(csrf, cookie, { decision: 'approve', email: user.email, password: user.password, scope: ['mcp:read', 'mcp:write'] });
    const code = remember(new URL(posted.location!).searchParams.get('code')!);
    assert.equal(await sdkAuth(provider, { serverUrl: mcpUrl, authorizationCode: code }), 'AUTHORIZED');
    const info = await introspect(provider.saved!.access_token);
    assert.deepEqual([info.body.active, info.body.aud, info.body.scope], [true, mcpUrl, 'mcp:read mcp:write']);
  } finally {
    prmServed = true;
  }
});

describe('dynamic client registration (RFC 7591)', () => {
  test('accepts https, loopback http and private-use schemes; refuses everything else', async () => {
    for (const uri of ['https://app.example/cb', 'http://127.0.0.1:7777/cb', 'http://localhost:1/x', 'http://[::1]:9/cb', 'com.example.app:/oauth']) {
      const res = await register({ client_name: 'ok', redirect_uris: [uri], token_endpoint_auth_method: 'none' });
      assert.equal(res.status, 201, `${uri}: ${res.text}`);
      assert.deepEqual(res.body.redirect_uris, [uri]);
      assert.equal(res.body.client_secret, undefined, 'a public client has no secret');
    }
    for (const uri of [
      'http://app.example/cb',
      'https://app.example/cb#frag',
      'javascript:alert(1)',
      'data:text/html,x',
      'file:///etc/passwd',
      '/relative',
      'https://user:pw@app.example/',
    ]) {
      const res = await register({ client_name: 'bad', redirect_uris: [uri] });
      assert.deepEqual([res.status, res.body.error], [400, 'invalid_redirect_uri'], uri);
    }
    assert.equal((await register({ client_name: 'none' })).body.error, 'invalid_redirect_uri');
  });

  test('no implicit or password grant; a confidential client gets its secret once', async () => {
    for (const grant_types of [['implicit'], ['password'], ['authorization_code', 'client_credentials']]) {
      const res = await register({ redirect_uris: [`${base}/callback`], grant_types });
      assert.deepEqual([res.status, res.body.error], [400, 'invalid_client_metadata'], String(grant_types));
    }
    assert.equal((await register({ redirect_uris: [`${base}/callback`], response_types: ['token'] })).body.error, 'invalid_client_metadata');
    const res = await register({ client_name: 'Server App', redirect_uris: [`${base}/callback`] });
    assert.equal(res.status, 201);
    assert.equal(res.body.token_endpoint_auth_method, 'client_secret_basic', 'the RFC 7591 default');
    assert.match(remember(res.body.client_secret), /^fds_/);
  });
});

describe('authorization endpoint', () => {
  let clientId: string;
  before(async () => {
    clientId = await publicClient();
  });

  test('unknown client or a redirect_uri that is not exactly a registered one: an error page, never a redirect', async () => {
    const cases = {
      'unknown client': authorizeUrl({ clientId: '00000000-0000-4000-8000-000000000000' }),
      'trailing slash': authorizeUrl({ clientId, redirectUri: `${base}/callback/` }),
      'other path': authorizeUrl({ clientId, redirectUri: `${base}/callback2` }),
      'extra query': authorizeUrl({ clientId, redirectUri: `${base}/callback?x=1` }),
      'attacker host': authorizeUrl({ clientId, redirectUri: 'https://evil.example/callback' }),
    };
    for (const [what, url] of Object.entries(cases)) {
      const res = await fetch(`${base}${url}`, { redirect: 'manual' });
      assert.equal(res.status, 400, what);
      assert.equal(res.headers.get('location'), null, what);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      assert.match(await res.text(), /Cannot connect to Flowdesk/, what);
    }
  });

  test('PKCE missing or plain, a non-code response type or another resource: sent back with the error and the state', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['no challenge', { code_challenge: '' }, 'invalid_request'],
      ['plain', { code_challenge_method: 'plain' }, 'invalid_request'],
      ['method missing (means plain)', { code_challenge_method: '' }, 'invalid_request'],
      ['implicit', { response_type: 'token' }, 'unsupported_response_type'],
      ['other resource', { resource: 'https://other.example/mcp' }, 'invalid_target'],
      ['unknown scope', { scope: 'admin' }, 'invalid_scope'],
    ];
    for (const [what, extra, error] of cases) {
      const url = new URL(`${base}${authorizeUrl({ clientId, state: `s-${what}` })}`);
      for (const [k, v] of Object.entries(extra)) {
        if (v === '') url.searchParams.delete(k);
        else url.searchParams.set(k, v);
      }
      const res = await fetch(url, { redirect: 'manual' });
      assert.equal(res.status, 302, what);
      const location = new URL(res.headers.get('location')!);
      assert.equal(location.origin + location.pathname, `${base}/callback`, what);
      assert.equal(location.searchParams.get('error'), error, what);
      assert.equal(location.searchParams.get('state'), `s-${what}`, what);
      assert.equal(location.searchParams.get('code'), null, what);
    }
  });

  test('the consent page: client name escaped, framing refused, CSRF token single use and bound to the browser', async () => {
    const sneaky = await publicClient(`${base}/callback`, '<script>alert(1)</script>');
    const { html, csrf, cookie, res } = await consentForm(authorizeUrl({ clientId: sneaky }));
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;') && !html.includes('<script>'));
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(cookie ?? '', /^fd_consent=/);
    const approve = { decision: 'approve', email: user.email, password: user.password, scope: 'mcp:read' };

    // Posted from elsewhere (no cookie of the browser that loaded the page): refused.
    const forged = await postConsent(csrf, undefined, approve);
    assert.deepEqual([forged.res.status, forged.location], [403, null]);
    // No token at all: refused.
    assert.equal((await postConsent(undefined, cookie, approve)).res.status, 400);
    // Wrong password: the page again, with a new token; the old one is spent.
    const wrong = await postConsent(csrf, cookie, { ...approve, password: 'not-the-password' });
    assert.equal(wrong.res.status, 401);
    assert.match(wrong.html, /role="alert">The email or password is not correct/);
    const next = remember(/name="csrf_token" value="([^"]+)"/.exec(wrong.html)?.[1]);
    assert.ok(next && next !== csrf);
    assert.equal((await postConsent(csrf, cookie, approve)).res.status, 400);
    // Nothing ticked: asked again.
    const none = await postConsent(next, cookie, { ...approve, scope: [] });
    assert.match(none.html, /Tick at least one permission/);
    const last = remember(/name="csrf_token" value="([^"]+)"/.exec(none.html)?.[1]);
    const ok = await postConsent(last, cookie, approve);
    assert.equal(ok.res.status, 302);
    assert.ok(new URL(ok.location!).searchParams.get('code'));
    // And once used, the form is dead.
    assert.equal((await postConsent(last, cookie, approve)).res.status, 400);
  });
});

describe('token endpoint: authorization code + PKCE', () => {
  test('a wrong or missing verifier, another redirect_uri or another client: invalid_grant; then the right request works', async () => {
    const clientId = await publicClient();
    const otherClient = await publicClient();
    const verifier = randomBytes(32).toString('base64url');
    const code = await obtainCode({ clientId, verifier });
    const refusals: [string, Res][] = [
      ['wrong verifier', await codeGrant(clientId, code, randomBytes(32).toString('base64url'))],
      ['verifier of another length', await codeGrant(clientId, code, `${verifier}x`)],
      ['no verifier', await tokenRequest({ grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: `${base}/callback` })],
      ['other redirect_uri', await codeGrant(clientId, code, verifier, `${base}/callback/`)],
      ['other client', await codeGrant(otherClient, code, verifier)],
    ];
    for (const [what, res] of refusals) {
      assert.deepEqual([res.status, res.body.error, typeof res.body.error_description], [400, 'invalid_grant', 'string'], what);
      assert.equal(res.headers.get('cache-control'), 'no-store');
    }
    const ok = await codeGrant(clientId, code, verifier);
    assert.equal(ok.status, 200, ok.text);
    remember(ok.body.access_token);
    remember(ok.body.refresh_token);
    assert.deepEqual(
      { ...ok.body, access_token: 0, refresh_token: 0 },
      { access_token: 0, refresh_token: 0, token_type: 'Bearer', expires_in: 3600, scope: 'mcp:read mcp:write' },
    );
  });

  test('a reused code is refused and the tokens issued from it stop working', async () => {
    const clientId = await publicClient();
    const verifier = randomBytes(32).toString('base64url');
    const code = await obtainCode({ clientId, verifier });
    const first = await codeGrant(clientId, code, verifier);
    assert.equal(first.status, 200);
    remember(first.body.access_token);
    remember(first.body.refresh_token);
    assert.equal((await introspect(first.body.access_token)).body.active, true);
    const again = await codeGrant(clientId, code, verifier);
    assert.deepEqual([again.status, again.body.error], [400, 'invalid_grant']);
    assert.deepEqual((await introspect(first.body.access_token)).body, { active: false });
    const refresh = await tokenRequest({ grant_type: 'refresh_token', client_id: clientId, refresh_token: first.body.refresh_token });
    assert.equal(refresh.body.error, 'invalid_grant');
  });

  test('a code lives 60 seconds', async () => {
    const clientId = await publicClient();
    const verifier = randomBytes(32).toString('base64url');
    const code = await obtainCode({ clientId, verifier });
    auth.setNow(new Date(Date.now() + 61_000));
    try {
      const res = await codeGrant(clientId, code, verifier);
      assert.deepEqual([res.status, res.body.error], [400, 'invalid_grant']);
    } finally {
      auth.setNow(undefined);
    }
  });

  test('client authentication: unknown clients, a secret for a public client, a confidential client without its secret: 401 invalid_client', async () => {
    const reg = await register({ client_name: 'Confidential', redirect_uris: [`${base}/callback`] });
    const { client_id, client_secret } = reg.body;
    remember(client_secret);
    const verifier = randomBytes(32).toString('base64url');
    const code = await obtainCode({ clientId: client_id, verifier });
    const fields = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: `${base}/callback` };
    const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    const cases: [string, Res][] = [
      ['no secret', await tokenRequest({ ...fields, client_id })],
      ['wrong secret', await tokenRequest(fields, basic(client_id, 'fds_wrong'))],
      ['unknown client', await tokenRequest({ ...fields, client_id: 'nope' })],
      ['secret in the body', await tokenRequest({ ...fields, client_id, client_secret })],
    ];
    for (const [what, res] of cases) {
      assert.deepEqual([res.status, res.body.error], [401, 'invalid_client'], what);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /, what);
    }
    const ok = await tokenRequest(fields, basic(client_id, client_secret));
    assert.equal(ok.status, 200, ok.text);
    remember(ok.body.access_token);
    remember(ok.body.refresh_token);
    const publicId = await publicClient();
    const publicWithSecret = await tokenRequest({ grant_type: 'refresh_token', refresh_token: 'x' }, basic(publicId, 'whatever'));
    assert.deepEqual([publicWithSecret.status, publicWithSecret.body.error], [401, 'invalid_client']);
  });

  test('no implicit, no password, no client_credentials grant', async () => {
    const clientId = await publicClient();
    for (const grant_type of ['password', 'implicit', 'client_credentials']) {
      const res = await tokenRequest({ grant_type, client_id: clientId, username: user.email, password: user.password });
      assert.deepEqual([res.status, res.body.error], [400, 'unsupported_grant_type'], grant_type);
    }
  });
});

describe('refresh tokens: rotation and reuse detection', () => {
  test('each refresh token works once; replayed within the grace window it returns the same new pair', async () => {
    const t = await freshTokens();
    const refresh = () => tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh });
    const [a, b] = await Promise.all([refresh(), refresh()]);
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    remember(a.body.access_token);
    remember(a.body.refresh_token);
    assert.equal(a.body.refresh_token, b.body.refresh_token, 'two concurrent refreshes get one pair');
    assert.equal(a.body.access_token, b.body.access_token);
    assert.notEqual(a.body.refresh_token, t.refresh);
    assert.equal((await introspect(a.body.access_token)).body.active, true);
  });

  test('a refresh token replayed after the grace window revokes the grant: the newest refresh token dies too', async () => {
    const t = await freshTokens();
    const rotated = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh });
    assert.equal(rotated.status, 200);
    const newest = { access: remember(rotated.body.access_token as string), refresh: remember(rotated.body.refresh_token as string) };
    auth.setNow(new Date(Date.now() + 10_000));
    try {
      const replay = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh });
      assert.deepEqual([replay.status, replay.body.error], [400, 'invalid_grant']);
      const legit = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: newest.refresh });
      assert.deepEqual([legit.status, legit.body.error], [400, 'invalid_grant']);
      assert.deepEqual((await introspect(newest.access)).body, { active: false });
    } finally {
      auth.setNow(undefined);
    }
  });

  test('refresh keeps the resource and never widens the scope', async () => {
    const clientId = await publicClient();
    const verifier = randomBytes(32).toString('base64url');
    const code = await obtainCode({ clientId, verifier }, ['mcp:read']);
    const t = (await codeGrant(clientId, code, verifier)).body;
    remember(t.access_token);
    remember(t.refresh_token);
    const wider = await tokenRequest({ grant_type: 'refresh_token', client_id: clientId, refresh_token: t.refresh_token, scope: 'mcp:read mcp:write' });
    assert.deepEqual([wider.status, wider.body.error], [400, 'invalid_scope']);
    const elsewhere = await tokenRequest({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: t.refresh_token,
      resource: 'https://other.example/mcp',
    });
    assert.deepEqual([elsewhere.status, elsewhere.body.error], [400, 'invalid_target']);
  });
});

describe('MCP step-up (the gateway reports a 403 insufficient_scope)', () => {
  /** A read-only grant's tokens, as a client holds them after approving only mcp:read. */
  async function readOnlyTokens() {
    const clientId = await publicClient();
    const verifier = randomBytes(32).toString('base64url');
    const code = await obtainCode({ clientId, verifier }, ['mcp:read']);
    const t = (await codeGrant(clientId, code, verifier)).body;
    assert.equal(t.scope, 'mcp:read');
    return { clientId, access: remember(t.access_token as string), refresh: remember(t.refresh_token as string) };
  }
  const stepUp = (token: string, scope = 'mcp:read mcp:write', header?: string | null) =>
    auth.form('/oauth/step-up', { token, scope }, header === undefined ? {} : { header });

  test('only Flowdesk services may report it (401 invalid_client otherwise); an unknown scope is invalid_scope', async () => {
    const t = await readOnlyTokens();
    const anonymous = await stepUp(t.access, 'mcp:read mcp:write', null);
    assert.deepEqual([anonymous.status, anonymous.body.error], [401, 'invalid_client']);
    const unknown = await stepUp(t.access, 'admin');
    assert.deepEqual([unknown.status, unknown.body.error], [400, 'invalid_scope']);
    // Nothing was recorded: the refresh works.
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh });
    assert.equal(refreshed.status, 200, refreshed.text);
    remember(refreshed.body.access_token);
    remember(refreshed.body.refresh_token);
  });

  test('the next refresh is refused once with invalid_grant; the grant lives on and a later refresh works, still read-only', async () => {
    const t = await readOnlyTokens();
    const reported = await stepUp(t.access);
    assert.deepEqual([reported.status, reported.body], [200, { recorded: true }]);
    const refused = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh });
    assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_grant']);
    assert.match(refused.body.error_description, /mcp:read mcp:write.*new authorization/);
    assert.equal((await introspect(t.access)).body.active, true, 'the access token keeps working for reads');
    const later = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh });
    assert.equal(later.status, 200, later.text);
    remember(later.body.access_token);
    remember(later.body.refresh_token);
    assert.equal(later.body.scope, 'mcp:read', 'a refresh never widens the scope');
  });

  test('a request older than the step-up window is ignored; a token that has the scope records nothing', async () => {
    const t = await readOnlyTokens();
    assert.deepEqual((await stepUp(t.access)).body, { recorded: true });
    auth.setNow(new Date(Date.now() + 11 * 60_000));
    try {
      const refreshed = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh });
      assert.equal(refreshed.status, 200, refreshed.text);
      remember(refreshed.body.access_token);
      remember(refreshed.body.refresh_token);
    } finally {
      auth.setNow(undefined);
    }
    const r = await readOnlyTokens();
    assert.deepEqual((await stepUp(r.access, 'mcp:read')).body, { recorded: false });
    assert.deepEqual((await stepUp(writeKey.secret)).body, { recorded: false }, 'an API key cannot step up');
    assert.deepEqual((await stepUp('fda_nonsense')).body, { recorded: false });
  });

  test('a refresh asking for the wider scope itself is invalid_scope, never a wider token', async () => {
    const t = await readOnlyTokens();
    const wider = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh, scope: 'mcp:write' });
    assert.deepEqual([wider.status, wider.body.error], [400, 'invalid_scope']);
  });
});

describe('introspection, exchange, expiry and Disconnect', () => {
  test('an access token expires after an hour: introspection says inactive and the exchange refuses it', async () => {
    const t = await freshTokens();
    auth.setNow(new Date(Date.now() + 3_601_000));
    try {
      assert.deepEqual((await introspect(t.access)).body, { active: false });
      const res = await auth.form('/oauth/token', {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: t.access,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: 'workspace-api',
      });
      assert.deepEqual([res.status, res.body.error], [400, 'invalid_grant']);
      // The refresh token still works: the client just refreshes.
      const refreshed = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh });
      assert.equal(refreshed.status, 200);
      remember(refreshed.body.access_token);
      remember(refreshed.body.refresh_token);
      assert.equal((await introspect(refreshed.body.access_token)).body.active, true);
    } finally {
      auth.setNow(undefined);
    }
  });

  test('the exchange refuses a token for another resource than the caller protects', async () => {
    const t = await freshTokens();
    const exchange = (resource?: string) =>
      auth.form('/oauth/token', {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: t.access,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: 'workspace-api',
        ...(resource ? { resource } : {}),
      });
    assert.equal((await exchange()).status, 200);
    assert.equal((await exchange(mcpUrl)).status, 200);
    const other = await exchange('https://other.example/mcp');
    assert.deepEqual([other.status, other.body.error], [400, 'invalid_grant']);
  });

  test('revoking an access token (RFC 7009) kills only it; unknown tokens and other clients’ tokens are a silent 200', async () => {
    const t = await freshTokens();
    const stranger = await publicClient();
    const revoke = (token: string, clientId: string) => auth.form('/oauth/revoke', { token, client_id: clientId }, { header: null });
    assert.equal((await revoke(t.access, stranger)).status, 200);
    assert.equal((await introspect(t.access)).body.active, true, "another client cannot revoke someone else's token");
    assert.equal((await revoke('fdo_nonsense', t.clientId)).status, 200);
    assert.equal((await revoke(t.access, t.clientId)).status, 200);
    assert.deepEqual((await introspect(t.access)).body, { active: false });
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh });
    assert.equal(refreshed.status, 200, 'the refresh token is not affected');
    remember(refreshed.body.access_token);
    remember(refreshed.body.refresh_token);
  });

  test('Disconnect in Connected Apps: the very next introspection is inactive and the refresh token is dead', async () => {
    const clientId = await publicClient(`${base}/callback`, 'To Disconnect');
    const t = await freshTokens(clientId);
    const list = async () =>
      (await auth.call('GET', '/auth/v1/connected-apps', { token: writeKey.secret })).body.items as { id: string; type: string; name: string; scope: string }[];
    const entry = (await list()).find((i) => i.name === 'To Disconnect');
    assert.deepEqual([entry?.type, entry?.scope], ['oauth_client', 'mcp:read mcp:write']);
    assert.ok(
      (await list()).some((i) => i.type === 'api_key'),
      'API keys are listed alongside',
    );

    const readKey = await auth.newKey(user.id, 'mcp:read');
    remember(readKey.secret);
    assert.equal((await auth.call('DELETE', `/auth/v1/connected-apps/${entry!.id}`, { token: readKey.secret })).status, 403);
    assert.equal((await auth.call('DELETE', `/auth/v1/connected-apps/${entry!.id}`, { token: writeKey.secret })).status, 204);
    assert.deepEqual((await introspect(t.access)).body, { active: false });
    const refresh = await tokenRequest({ grant_type: 'refresh_token', client_id: clientId, refresh_token: t.refresh });
    assert.equal(refresh.body.error, 'invalid_grant');
    assert.ok(!(await list()).some((i) => i.id === entry!.id));
    assert.equal((await auth.call('DELETE', `/auth/v1/connected-apps/${entry!.id}`, { token: writeKey.secret })).status, 404);

    // Connecting again starts a new grant that works.
    const again = await freshTokens(clientId);
    assert.equal((await introspect(again.access)).body.active, true);
  });
});

test('registration is rate-limited per address: 429 with Retry-After', async () => {
  let res: Res | undefined;
  for (let i = 0; i < 101; i++) {
    res = await register({ client_name: 'flood', redirect_uris: [`${base}/callback`], token_endpoint_auth_method: 'none' });
    if (res.status === 429) break;
  }
  assert.equal(res?.status, 429);
  assert.equal(res?.body.error, 'rate_limited');
  assert.ok(Number(res?.headers.get('retry-after')) > 0);
});

test('no token, code, verifier, CSRF token, client secret or password reaches the logs', () => {
  const text = auth.logs.join('');
  assert.ok(text.includes('/oauth/token') && text.includes('/oauth/authorize'), 'the logs were captured');
  assert.ok(secrets.length > 40, `${secrets.length} secrets checked`);
  for (const s of secrets) assert.ok(!text.includes(s), `a secret (${s.slice(0, 6)}…) is in the logs`);
});
