// Connecting an OAuth2 credential through the console, in Debian's chromium on a fresh embedded start
// (docs/credentials.md, "OAuth2"): Settings → Credentials adds an OAuth2 credential from the
// registry's form (no token fields: the engine keeps those), shows it "Not connected", and Connect
// takes the browser to a real OpenID provider (oidc-provider from npm, on loopback, allowed through
// SSRF_ALLOWLIST) whose own login and consent pages are filled in; the provider sends the browser back
// through the console's edge, which lands on Settings → Credentials saying "Connected", the badge
// "Connected"; Test then gets a new token from the provider. axe-core on the page.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import Provider from 'oidc-provider';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertAccessible, launch, ownerPage, skipWithoutChromium, startFlowdesk, type Flowdesk } from './helpers/console.ts';

const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };
const CLIENT_SECRET = `cs_${randomBytes(18).toString('base64url')}`;

describe('connecting an OAuth2 credential through the console, in chromium', { skip: skipWithoutChromium }, () => {
  let providerServer: http.Server;
  let issuer: string;
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  const tokenRequests: string[] = [];

  before(async () => {
    providerServer = http.createServer();
    await new Promise<void>((resolve) => providerServer.listen(0, '127.0.0.1', resolve));
    const port = (providerServer.address() as AddressInfo).port;
    issuer = `http://127.0.0.1:${port}`;
    // The engine reaches the provider's token URL on loopback only because the allowlist names it.
    flowdesk = await startFlowdesk({ SSRF_ALLOWLIST: `127.0.0.1:${port}` });
    base = flowdesk.base;
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: 'flowdesk',
          client_secret: CLIENT_SECRET,
          redirect_uris: [`${base}/api/v1/credentials/oauth2/callback`],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
      ],
      features: { devInteractions: { enabled: true } },
      issueRefreshToken: async () => true,
      pkce: { required: () => true },
      findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
      cookies: { keys: [randomBytes(16).toString('hex')] },
    });
    const handle = provider.callback();
    providerServer.on('request', (req, res) => {
      if (req.method === 'POST' && req.url === '/token') tokenRequests.push(req.url);
      void handle(req, res);
    });
    browser = await launch();
    ({ context, page } = await ownerPage(browser, base, owner));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await flowdesk?.close();
    providerServer?.closeAllConnections();
    await new Promise((r) => providerServer?.close(r));
  });

  test('add it from the form, Connect, sign in and consent at the provider, and come back connected; Test gets a new token', async () => {
    await page.goto(`${base}/settings/credentials`);
    await page.getByRole('button', { name: 'Add credential' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/^Name/).fill('crm');
    await dialog.getByLabel('Type').click();
    await page.getByRole('option', { name: 'OAuth2', exact: true }).click();
    assert.equal(await dialog.getByLabel(/^Access token/).count(), 0, 'the tokens are not in the form');
    await dialog.getByLabel(/^Authorization URL/).fill(`${issuer}/auth`);
    await dialog.getByLabel(/^Token URL/).fill(`${issuer}/token`);
    await dialog.getByLabel(/^Client ID/).fill('flowdesk');
    await dialog
      .getByLabel(/^Client secret/)
      .and(page.locator('input'))
      .fill(CLIENT_SECRET);
    await dialog.getByLabel(/^Scopes/).fill('openid offline_access');
    await assertAccessible(page, 'the OAuth2 credential form');
    await dialog.getByRole('button', { name: 'Save credential' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByLabel('crm: Not connected').waitFor();

    await page.getByRole('button', { name: 'Connect crm' }).click();
    // The provider's own pages (oidc-provider's dev interactions): sign in, then consent.
    await page.waitForURL((url) => url.origin === issuer);
    for (let pageNo = 0; pageNo < 4 && new URL(page.url()).origin === issuer; pageNo++) {
      const login = page.locator('input[name="login"]');
      if (await login.count()) {
        await login.fill('ada');
        await page.locator('input[name="password"]').fill('any password');
      }
      const at = page.url();
      await page.locator('button[type="submit"]').first().click();
      await page.waitForURL((url) => url.href !== at);
    }
    await page.waitForURL((url) => url.origin === new URL(base).origin && url.pathname === '/settings/credentials');
    await page.getByText('Connected “crm”.').waitFor();
    await page.getByLabel('crm: Connected').waitFor();
    assert.equal(new URL(page.url()).search, '', 'the result is said once, not kept in the address');
    await assertAccessible(page, 'Settings → Credentials with a connected OAuth2 credential');

    const before = tokenRequests.length;
    await page.getByRole('button', { name: 'Test crm' }).click();
    await page.getByText(/^The provider gave an access token, valid until /).waitFor();
    assert.equal(tokenRequests.length, before + 1, 'Test asked the provider (a refresh)');
  });

  test('usable at 390 px: the badge and Reconnect are on screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/settings/credentials`);
    await page.getByLabel('crm: Connected').waitFor();
    await page.getByRole('button', { name: 'Reconnect crm' }).scrollIntoViewIfNeeded();
    assert.ok(await page.getByRole('button', { name: 'Reconnect crm' }).isVisible());
    await page.setViewportSize({ width: 1440, height: 900 });
  });
});
