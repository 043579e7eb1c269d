import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type ConsoleMessage, type Page, type WebError } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { loadConfig } from '../../src/config.ts';
import { startEmbedded, type Embedded } from '../../src/start.ts';

import { CHROMIUM, CHROMIUM_ARGS } from '@flowdesk/auth/testing';
import { ACTION_TIMEOUT_MS } from '../support/console-session.ts';

export { CHROMIUM };
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const SCREENSHOTS = path.join(REPO, 'docs/screenshots');

/**
 * Browser tests skip without chromium on a developer's machine, never in CI (CI installs it: a
 * missing browser there fails the suite).
 */
export const skipWithoutChromium = !existsSync(CHROMIUM) && !process.env.CI ? `chromium is not installed (scripts/install-chromium.sh)` : false;

export interface Flowdesk {
  embedded: Embedded;
  base: string;
  home: string;
  close(): Promise<void>;
}

/**
 * A fresh `npm start` (the embedded stack) in this process: its own home, PGlite or a fresh Postgres
 * database. `env` adds settings (e.g. SSRF_ALLOWLIST for a loopback receiver).
 */
export async function startFlowdesk(env: Record<string, string> = {}): Promise<Flowdesk> {
  const home = await mkdtemp(path.join(tmpdir(), 'flowdesk-console-'));
  const database: TestDatabase | undefined = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const config = { ...loadConfig({ FLOWDESK_HOME: home, PORT: '0', LOG_LEVEL: 'silent', ...env }), databaseUrl: database?.url };
  const embedded = await startEmbedded(config);
  return {
    embedded,
    base: embedded.baseUrl,
    home,
    async close() {
      await embedded.close();
      await database?.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * What went wrong in a page of a browser from `launch()` and no test has reported yet: uncaught
 * errors and unhandled rejections (`weberror`), and console errors — React reports render errors,
 * key warnings and the like there. The browser's own line for a failed request ("Failed to load
 * resource: … 404") is not one: the tests provoke refusals on purpose and assert on them.
 */
const pageProblems: string[] = [];
const NETWORK_ERROR = /^Failed to load resource: /;

function watch(context: BrowserContext): BrowserContext {
  context.setDefaultTimeout(ACTION_TIMEOUT_MS);
  context.on('weberror', (e: WebError) => pageProblems.push(`uncaught error on ${e.page()?.url() ?? 'a page'}: ${e.error().stack ?? e.error().message}`));
  context.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error' && !NETWORK_ERROR.test(m.text())) pageProblems.push(`console error on ${m.page()?.url() ?? 'a page'}: ${m.text()}`);
  });
  return context;
}

/** Fails the test (or the close) during which a page had an uncaught error or a console error. */
export function assertNoPageProblems(where: string): void {
  const seen = pageProblems.splice(0);
  assert.deepEqual(seen, [], `${where}: the page had errors`);
}

// Every test of every file that uses these helpers: a page error fails the test it happened in (or
// the next one, when it happened in a `before` hook).
afterEach(() => assertNoPageProblems('after this test'));

/**
 * Debian's chromium, headless. Every context it opens (`newContext`, and `newPage`, which opens one)
 * is watched for page errors: see `pageProblems`.
 */
export async function launch(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => watch(await newContext(options));
  const close = browser.close.bind(browser);
  browser.close = async (options) => {
    await close(options);
    assertNoPageProblems('when the browser closed');
  };
  return browser;
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core in the page: no serious or critical violation (WCAG 2.x A/AA rules and best practices). */
export async function assertAccessible(page: Page, where: string): Promise<void> {
  // Colours are measured once opening and closing transitions (dialogs, toasts) have finished.
  await page.waitForFunction(() =>
    ((globalThis as any).document.getAnimations() as any[]).every((a) => a.playState !== 'running' || a.effect?.getTiming().iterations === Infinity),
  );
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.addScriptTag({ content: await axeSource });
  const violations = await page.evaluate(async () => {
    const g = globalThis as any;
    const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return (result.violations as any[]).map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 5),
    }));
  });
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, [], `${where}: accessibility violations\n${JSON.stringify(bad, null, 2)}`);
}

/**
 * The instance's first owner (POST /api/v1/setup, as the setup page does) signed in on a desktop-sized
 * page (1440 × 900) in a new context, ACTION_TIMEOUT_MS per action: where the editor and trigger suites start.
 */
export async function ownerPage(
  browser: Browser,
  base: string,
  owner: { name: string; email: string; password: string },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
  context.setDefaultTimeout(ACTION_TIMEOUT_MS);
  const page = await context.newPage();
  const setup = await page.request.post(`${base}/api/v1/setup`, { data: owner, headers: { origin: base } });
  assert.equal(setup.status(), 201, await setup.text());
  return { context, page };
}

/** Saved for the README when UPDATE_SCREENSHOTS=1, else in a temp folder (CI must not rewrite tracked files). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.UPDATE_SCREENSHOTS === '1' ? SCREENSHOTS : path.join(tmpdir(), 'flowdesk-screenshots');
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: false, animations: 'disabled' });
}

/** An MCP client's own redirect URI: a page that says "connected". */
export async function startCallback(): Promise<{ redirectUri: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>Connected</title><p>You can close this window.</p></html>'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Clicks the editor's Save and waits for that save's own PATCH to succeed, then for the notice. The
 * "Workflow saved." notice of an earlier save may still be on screen, so waiting for the notice
 * alone could return before the server has the change.
 */
export async function saveWorkflow(page: Page): Promise<void> {
  const answered = page.waitForResponse((r) => r.request().method() === 'PATCH' && /\/api\/v1\/workflows\/[0-9a-f-]{36}$/.test(new URL(r.url()).pathname));
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const res = await answered;
  assert.ok(res.ok(), `the save answered ${res.status()}: ${await res.text()}`);
  await page.getByText('Workflow saved.').first().waitFor();
}
