// The console in Debian's chromium on a fresh embedded start (`npm start` in this process), each flow
// as a person does it: first run, sign-in, an API key seen once and used by the official MCP SDK,
// revoked in Connected Apps; an OAuth client connected while signed in (approve only) and
// disconnected; members; sign out. axe-core on every page; screenshots for the README
// (UPDATE_SCREENSHOTS=1 writes them into docs/screenshots/). CSP is bypassed only so axe-core can be injected.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth as sdkAuth } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryProvider } from '@flowdesk/auth/testing';
import { assertAccessible, launch, screenshot, skipWithoutChromium, startCallback, startFlowdesk, type Flowdesk } from './helpers/console.ts';
import { ACTION_TIMEOUT_MS, until } from './support/console-session.ts';

const MCP_PATH = '/functions/v1/mcp-server-v2';
const owner = { name: 'Ada Lovelace', email: `ada-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };
const member = { name: 'Grace Hopper', email: `grace-${randomBytes(3).toString('hex')}@example.test`, password: `pw-${randomBytes(9).toString('base64url')}` };

describe('the console in chromium', { skip: skipWithoutChromium }, () => {
  let flowdesk: Flowdesk;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let readKey = '';

  before(async () => {
    flowdesk = await startFlowdesk();
    base = flowdesk.base;
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    context.setDefaultTimeout(ACTION_TIMEOUT_MS);
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await flowdesk?.close();
  });

  const sessionCookie = async (ctx = context) => (await ctx.cookies(base)).find((c) => c.name === 'fd_session');
  const heading = (p = page) => p.getByRole('heading', { level: 1 });
  /** Waits for the page's h1 to read `text` (a page renders after its URL changes); a timeout names what it read instead. */
  const headingReads = async (text: string, p = page) => {
    try {
      await p.getByRole('heading', { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });
    } catch {
      assert.fail(`the heading should read "${text}"; the page shows ${JSON.stringify(await heading(p).allInnerTexts())} at ${p.url()}`);
    }
  };
  /** The password input (not its show/hide button, whose label also says "password"). */
  const passwordField = (p: Page) => p.getByLabel('Password').and(p.locator('input'));
  /** Clicks a form's button and waits for the page it leads to; a form error shown instead fails with its text. */
  const submit = async (p: Page, button: string, url: string | RegExp) => {
    await p.getByRole('button', { name: button }).click();
    const alert = p.getByRole('alert');
    await Promise.race([p.waitForURL(url), alert.waitFor().then(async () => assert.fail(`${button}: ${await alert.innerText()}`))]);
  };
  /** An MCP client with an API key, as in the README. */
  const mcpWithKey = async (key: string) => {
    const client = new Client({ name: 'console-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}${MCP_PATH}`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    return client;
  };

  test("a fresh start names the demo account and signs in with dev.json's password: its workspace is the one dev.json's keys act on", async () => {
    const dev = JSON.parse(await readFile(path.join(flowdesk.home, 'dev.json'), 'utf8')) as { email: string; password: string; writeKey: string };
    assert.equal(dev.email, 'demo@flowdesk.local');
    await page.goto(base);
    await page.waitForURL(`${base}/setup`);
    const demo = page.getByRole('region', { name: 'Demo account' });
    assert.match(await demo.innerText(), /demo@flowdesk\.local[\s\S]*\.flowdesk\/dev\.json[\s\S]*README's curl and MCP examples act on its workspace/);
    await demo.getByRole('button', { name: 'Sign in with the demo account' }).click();
    assert.equal(await page.getByLabel('Demo email').inputValue(), 'demo@flowdesk.local');
    await assertAccessible(page, 'setup with the demo sign-in open');
    await screenshot(page, 'setup-demo');
    await page.getByLabel('Demo password').and(page.locator('input')).fill(dev.password);
    await page.getByRole('button', { name: 'Sign in as demo@flowdesk.local' }).click();
    await page.waitForURL(`${base}/`);
    // The README's curl, with dev.json's key: what it writes is in the workspace on screen.
    const title = `From the README's curl ${randomBytes(3).toString('hex')}`;
    const created = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.writeKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title }),
    });
    assert.equal(created.status, 201, await created.text());
    await page.goto(`${base}/tasks`);
    await page.getByText(title).waitFor();
    await page.getByText('Connect your AI assistant to Flowdesk').waitFor(); // the demo's welcome task
    // Signed in before anyone made the owner: a reload stays in the app, it does not fall back to the owner form.
    await page.reload();
    await page.getByText(title).waitFor();
    assert.equal(page.url(), `${base}/tasks`);
    // Signing out leads back to the first-run page: the owner is still to be created.
    await page.getByRole('button', { name: /demo@flowdesk\.local/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/setup`);
    await headingReads('Create the owner account');
  });

  test('a fresh start asks for the owner account; creating it signs in, with an HttpOnly SameSite cookie', async () => {
    await page.goto(base);
    await page.waitForURL(`${base}/setup`);
    await headingReads('Create the owner account');
    await assertAccessible(page, 'setup');
    await screenshot(page, 'setup');
    await page.getByLabel('Name').fill(owner.name);
    await page.getByLabel('Email').fill(owner.email);
    await passwordField(page).fill(owner.password);
    await submit(page, 'Create account', `${base}/`);
    await headingReads('Welcome, Ada');
    await assertAccessible(page, 'overview');
    await screenshot(page, 'overview');

    const cookie = await sessionCookie();
    assert.ok(cookie, 'the session cookie is set');
    assert.match(cookie.value, /^fds_/);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/');
    assert.equal(cookie.secure, false, 'http base URL: not Secure (https would be)');
    assert.equal(await page.evaluate(() => (globalThis as any).document.cookie), '', 'no script can read the session');
    // The first run is over: setting up again is refused.
    const again = await page.request.post(`${base}/api/v1/setup`, {
      data: { email: 'x@example.test', name: 'X', password: 'long-enough-1' },
      headers: { origin: base },
    });
    assert.equal(again.status(), 409);
  });

  test('sign out, the pages refuse, and signing in again gives a new session token', async () => {
    const before = (await sessionCookie())!.value;
    await page.getByRole('button', { name: /Ada Lovelace/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/sign-in`);
    assert.equal(await sessionCookie(), undefined, 'the cookie is cleared');
    // The old token is dead at auth too, not just forgotten by the browser.
    const replay = await page.request.get(`${base}/api/v1/api-keys`, { headers: { cookie: `fd_session=${before}` } });
    assert.equal(replay.status(), 401);
    await page.goto(`${base}/settings/api-keys`);
    await page.waitForURL(/\/sign-in\?next=/);
    await headingReads('Sign in to Flowdesk');
    assert.equal((await page.request.get(`${base}/api/v1/api-keys`)).status(), 401);
    await assertAccessible(page, 'sign-in');
    await screenshot(page, 'sign-in');

    await page.getByLabel('Email').fill(owner.email);
    await passwordField(page).fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await passwordField(page).fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back where the person wanted to go.
    await page.waitForURL(`${base}/settings/api-keys`);
    const after = (await sessionCookie())!.value;
    assert.notEqual(after, before);
  });

  test('session fixation: a session cookie planted before sign-in is replaced and ended', async () => {
    const planted = (await sessionCookie())!.value;
    const fresh = await browser.newContext({ bypassCSP: true });
    try {
      await fresh.addCookies([{ name: 'fd_session', value: planted, url: base, httpOnly: true, sameSite: 'Lax' }]);
      const res = await fresh.request.post(`${base}/api/v1/session`, { data: { email: owner.email, password: owner.password }, headers: { origin: base } });
      assert.equal(res.status(), 201);
      const body = await res.json();
      assert.ok(!JSON.stringify(body).includes('fds_'), 'the token is never in a body');
      const now = (await sessionCookie(fresh))!.value;
      assert.notEqual(now, planted);
      assert.equal((await page.request.get(`${base}/api/v1/session`)).status(), 401, 'the planted session ended');
    } finally {
      await fresh.close();
    }
    // Sign this page in again for what follows.
    await page.goto(`${base}/sign-in`);
    await page.getByLabel('Email').fill(owner.email);
    await passwordField(page).fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/`);
  });

  test('create a Read key: the secret is shown once with a copy button, never again after a reload', async () => {
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await page.waitForURL(`${base}/settings/api-keys`);
    await page.getByText('No API keys yet').waitFor();
    await assertAccessible(page, 'api keys (empty)');
    await page.getByRole('button', { name: 'Create API key' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('Agent script');
    await dialog.getByLabel('Read', { exact: true }).check();
    await assertAccessible(page, 'create key dialog');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByTestId('new-api-key');
    await secret.waitFor();
    readKey = (await secret.innerText()).trim();
    assert.match(readKey, /^fdk_/);
    await page.getByText('you will not see it again').waitFor();
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await assertAccessible(page, 'new key dialog');
    await screenshot(page, 'api-key-created');
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row', { name: /Agent script/ });
    await row.waitFor();
    assert.match(await row.innerText(), /fdk_\S+…[\s\S]*read[\s\S]*never/i);
    await page.reload();
    await page.getByRole('row', { name: /Agent script/ }).waitFor();
    assert.ok(!(await page.content()).includes(readKey), 'the secret is not on the page after a reload');
    await assertAccessible(page, 'api keys');
    await screenshot(page, 'api-keys');
  });

  test('the Read key works with the official MCP SDK client, reads only; and with curl-style calls on /api/v1', async () => {
    const client = await mcpWithKey(readKey);
    try {
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'list_projects'));
      // Every tool's icon (MCP 2025-11-25) is served at the base URL by the console, as an SVG.
      // (The workspace-wide tools carry none: their icon is the server's.)
      const icons = new Set(tools.tools.flatMap((t) => t.icons?.map((i) => i.src) ?? []));
      assert.equal(icons.size, 6, [...icons].join(' '));
      for (const src of icons) {
        const icon = await fetch(src);
        assert.equal(icon.status, 200, src);
        assert.match(icon.headers.get('content-type') ?? '', /^image\/svg\+xml/, src);
        assert.match(await icon.text(), /^<svg /, src);
      }
      const result = await client.callTool({ name: 'list_projects', arguments: {} });
      assert.ok(!result.isError, JSON.stringify(result));
    } finally {
      await client.close();
    }
    const list = await fetch(`${base}/api/v1/projects`, { headers: { authorization: `Bearer ${readKey}` } });
    assert.equal(list.status, 200);
    const write = await fetch(`${base}/api/v1/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    assert.equal(write.status, 403);
    assert.match(((await write.json()) as { message: string }).message, /mcp:write/);
  });

  test('CSRF: a write with the cookie but without the token, or from another origin, is refused with 403 JSON', async () => {
    const noToken = await page.request.post(`${base}/api/v1/api-keys`, { data: { name: 'csrf', scope: 'write' }, headers: { origin: base } });
    assert.equal(noToken.status(), 403);
    assert.equal((await noToken.json()).error, 'forbidden');
    const { csrfToken } = await (await page.request.get(`${base}/api/v1/session`)).json();
    assert.match(csrfToken, /^[A-Za-z0-9_-]{43}$/);
    const foreign = await page.request.post(`${base}/api/v1/api-keys`, {
      data: { name: 'csrf', scope: 'write' },
      headers: { origin: 'https://evil.example', 'x-csrf-token': csrfToken },
    });
    assert.equal(foreign.status(), 403);
    assert.equal((await foreign.json()).error, 'forbidden');
    // The same request from this origin with the token is what the console itself sends.
    const ok = await page.request.post(`${base}/api/v1/projects`, { data: { name: 'Ada private' }, headers: { origin: base, 'x-csrf-token': csrfToken } });
    assert.equal(ok.status(), 201);
    // A form posted from another site does not even carry the cookie (SameSite=Lax), and the edge refuses it anyway.
    const evil = await browser.newContext();
    try {
      const evilPage = await evil.newPage();
      await evilPage.route('https://evil.example/', (r) =>
        r.fulfill({
          contentType: 'text/html',
          body: `<form method="post" action="${base}/api/v1/api-keys"><input name="name" value="x"></form><script>document.forms[0].submit()</script>`,
        }),
      );
      const [answer] = await Promise.all([evilPage.waitForResponse(`${base}/api/v1/api-keys`), evilPage.goto('https://evil.example/')]);
      assert.ok([401, 403].includes(answer.status()));
    } finally {
      await evil.close();
    }
  });

  test('revoke the key in Connected Apps: confirmation, toast, and the next MCP call gets 401', async () => {
    const client = await mcpWithKey(readKey);
    await page.getByRole('link', { name: 'Connected Apps', exact: true }).click();
    await page.waitForURL(`${base}/settings/connected-apps`);
    await page.getByRole('row', { name: /Agent script/ }).waitFor();
    await assertAccessible(page, 'connected apps');
    await page.getByRole('button', { name: 'Revoke Agent script' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('stops working at once').waitFor();
    await assertAccessible(page, 'revoke confirmation');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('Revoked “Agent script”.').waitFor();
    await page.getByText('Nothing is connected').waitFor();
    await assert.rejects(
      client.callTool({ name: 'list_projects', arguments: {} }),
      (err: Error & { code?: number }) => err.code === 401 || /401/.test(err.message),
    );
    await client.close().catch(() => {});
  });

  test('connect an OAuth client with the SDK while signed in: consent only asks to approve; then Disconnect it', async () => {
    const callback = await startCallback();
    const provider = new MemoryProvider(callback.redirectUri, 'Claude (test)', () => {}, 'mcp:read mcp:write');
    try {
      assert.equal(await sdkAuth(provider, { serverUrl: `${base}${MCP_PATH}` }), 'REDIRECT');
      const consent = await context.newPage();
      await consent.goto(provider.authorizationUrl!.toString());
      await consent.locator('#signed-in-as').waitFor();
      assert.equal(await passwordField(consent).count(), 0, 'a signed-in user is not asked for a password');
      await assertAccessible(consent, 'consent (signed in)');
      await screenshot(consent, 'consent');
      await Promise.all([
        consent.waitForURL((u) => u.toString().startsWith(`${callback.redirectUri}?`)),
        consent.getByRole('button', { name: 'Approve' }).click(),
      ]);
      const code = new URL(consent.url()).searchParams.get('code')!;
      await consent.close();
      assert.equal(await sdkAuth(provider, { serverUrl: `${base}${MCP_PATH}`, authorizationCode: code }), 'AUTHORIZED');
      const client = new Client({ name: 'oauth-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}${MCP_PATH}`), { authProvider: provider }));
      assert.ok((await client.listTools()).tools.length > 0);

      await page.goto(`${base}/settings/connected-apps`);
      const row = page.getByRole('row', { name: /Claude \(test\)/ });
      await row.waitFor();
      assert.match(await row.innerText(), /oauth app[\s\S]*read \+ write/i);
      await screenshot(page, 'connected-apps');
      await page.getByRole('button', { name: 'Disconnect Claude (test)' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Disconnect' }).click();
      await page.getByText('Disconnected “Claude (test)”.').waitFor();
      const token = provider.saved!.access_token;
      const after = await fetch(`${base}${MCP_PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(after.status, 401);
      await client.close().catch(() => {});
    } finally {
      await callback.close();
    }
  });

  test('revoke a key on the API keys page itself: it asks first, then the key gets 401', async () => {
    const { csrfToken } = await (await page.request.get(`${base}/api/v1/session`)).json();
    const res = await page.request.post(`${base}/api/v1/api-keys`, {
      data: { name: 'Old CI', scope: 'write' },
      headers: { origin: base, 'x-csrf-token': csrfToken },
    });
    assert.equal(res.status(), 201);
    const { secret } = await res.json();
    const status = async () => (await fetch(`${base}/api/v1/projects`, { headers: { authorization: `Bearer ${secret}` } })).status;
    assert.equal(await status(), 200);
    await page.goto(`${base}/settings/api-keys`);
    await page.getByRole('button', { name: 'Revoke Old CI' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).waitFor();
    await assertAccessible(page, 'revoke confirmation (API keys)');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('Revoked “Old CI”.').waitFor();
    await until('the revoked key to be refused', async () => (await status()) === 401);
    // The toast comes when the revoke succeeded; the list reloads after it.
    await until('the revoked key to leave the list', async () => (await page.getByRole('row', { name: /Old CI/ }).count()) === 0);
  });

  test("Profile and Members: invite someone; they sign up from the link and see none of the owner's keys, apps or data", async () => {
    await page.getByRole('link', { name: 'Profile', exact: true }).click();
    await heading().filter({ hasText: 'Profile' }).waitFor();
    await assertAccessible(page, 'profile');
    await screenshot(page, 'profile');
    await page.getByRole('link', { name: 'Members', exact: true }).click();
    await heading().filter({ hasText: 'Members' }).waitFor();
    await page.getByRole('button', { name: 'Invite someone' }).click();
    await page.getByRole('dialog').getByLabel('Email').fill(member.email);
    await page.getByRole('dialog').getByRole('button', { name: 'Create invite link' }).click();
    const link = (await page.getByRole('dialog').locator('code').innerText()).trim();
    assert.match(link, /\/sign-up\?invite=/);
    await assertAccessible(page, 'invite link');
    await page.keyboard.press('Escape');
    await assertAccessible(page, 'members');

    // The member, in their own browser.
    const theirs = await browser.newContext({ bypassCSP: true });
    try {
      const p = await theirs.newPage();
      await p.goto(link);
      await headingReads('Create your account', p);
      await assertAccessible(p, 'sign-up');
      await p.getByLabel('Name').fill(member.name);
      await p.getByLabel('Email').fill(member.email);
      await passwordField(p).fill(member.password);
      await submit(p, 'Create account', `${base}/`);
      await headingReads('Welcome, Grace', p);
      assert.equal(await p.getByRole('link', { name: 'Members', exact: true }).count(), 0, 'members is for the owner');
      await p.getByRole('link', { name: 'API keys', exact: true }).click();
      await p.getByText('No API keys yet').waitFor();
      await p.getByRole('link', { name: 'Connected Apps', exact: true }).click();
      await p.getByText('Nothing is connected').waitFor();
      const projects = await (await p.request.get(`${base}/api/v1/projects`)).json();
      assert.ok(!projects.items.some((x: { name: string }) => x.name === 'Ada private'), "the owner's data stays the owner's");
      assert.equal((await p.request.get(`${base}/api/v1/users`)).status(), 403);
    } finally {
      await theirs.close();
    }
  });

  test('at phone width the navigation collapses behind a menu button', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    try {
      const cookie = (await sessionCookie())!;
      await phone.addCookies([{ ...cookie }]);
      const p = await phone.newPage();
      await p.goto(`${base}/settings/api-keys`);
      await heading(p).filter({ hasText: 'API keys' }).waitFor();
      // The navbar slides out of the viewport; the menu button brings it back.
      const box = await p.getByRole('link', { name: 'Connected Apps', exact: true }).boundingBox();
      assert.ok(!box || box.x + box.width <= 0, `the navigation is off screen (${JSON.stringify(box)})`);
      await screenshot(p, 'api-keys-phone');
      // With the keyboard, as someone without a mouse would.
      await p.getByRole('button', { name: 'Open navigation' }).focus();
      await p.keyboard.press('Enter');
      await p.getByRole('link', { name: 'Connected Apps', exact: true }).click();
      await heading(p).filter({ hasText: 'Connected Apps' }).waitFor();
      await assertAccessible(p, 'connected apps (phone)');
    } finally {
      await phone.close();
    }
  });

  test('the API reference (Swagger UI, linked from the navigation) passes axe-core at desktop and phone width, with an operation open in "Try it out"', async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      const ctx = await browser.newContext({ viewport, bypassCSP: true, ...(viewport.width < 500 ? { isMobile: true, hasTouch: true } : {}) });
      try {
        const p = await ctx.newPage();
        p.setDefaultTimeout(ACTION_TIMEOUT_MS);
        await p.goto(`${base}/api/v1/docs`);
        await p.locator('.opblock-post').first().waitFor();
        await assertAccessible(p, `API reference (${viewport.width} px)`);
        await p.locator('.opblock-post .opblock-summary-control').first().click();
        await p.locator('.opblock-post').first().getByRole('button', { name: 'Try it out' }).click();
        await p.locator('.opblock-post').first().getByRole('button', { name: 'Execute' }).waitFor();
        await assertAccessible(p, `API reference, an operation in "Try it out" (${viewport.width} px)`);
      } finally {
        await ctx.close();
      }
    }
  });

  test('sign out everywhere ends every session of the account', async () => {
    const other = await browser.newContext();
    try {
      const res = await other.request.post(`${base}/api/v1/session`, { data: { email: owner.email, password: owner.password }, headers: { origin: base } });
      assert.equal(res.status(), 201);
      await page.getByRole('link', { name: 'Profile', exact: true }).click();
      await page.getByRole('button', { name: 'Sign out everywhere' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Sign out everywhere' }).click();
      await page.waitForURL(/\/sign-in/);
      assert.equal((await other.request.get(`${base}/api/v1/session`)).status(), 401);
      assert.equal((await page.request.get(`${base}/api/v1/connected-apps`)).status(), 401);
    } finally {
      await other.close();
    }
  });
});
