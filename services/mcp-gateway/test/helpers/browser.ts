import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium, installed by scripts/install-chromium.sh (never a downloaded browser). */
export const CHROMIUM = '/usr/bin/chromium';

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless chromium on a fresh profile (the same flags as auth's consent-page test). */
export async function launchChromium(): Promise<Browser> {
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'flowdesk-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

export interface ConsentResult {
  /** The `<h1>` of the consent page. */
  heading: string;
  /** The labels of the permission checkboxes shown, in order. */
  scopesShown: string[];
  /** Where the browser landed after Approve (the client's redirect URI with code, state, iss). */
  landed: URL;
}

/**
 * What a user does on auth's consent page: opens the authorization URL, signs in, unticks the
 * permissions named in `untick` (by label), optionally takes a screenshot, approves, and waits for
 * the redirect to `redirectUri`.
 */
export async function approveConsent(
  browser: Browser,
  authorizationUrl: URL | string,
  opts: { email: string; password: string; redirectUri: string; untick?: string[]; screenshot?: string },
): Promise<ConsentResult> {
  const page = await browser.context.newPage();
  try {
    await page.goto(String(authorizationUrl));
    const heading = await page.locator('h1').innerText();
    const scopesShown = await page.locator('.scope label').evaluateAll((labels) => labels.map((l) => (l.firstChild?.textContent ?? '').trim()));
    await page.getByLabel('Email').fill(opts.email);
    await page.getByLabel('Password').fill(opts.password);
    for (const label of opts.untick ?? []) await page.getByLabel(label).uncheck();
    if (opts.screenshot) await page.screenshot({ path: opts.screenshot, fullPage: true });
    const prefix = opts.redirectUri;
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(`${prefix}?`)), page.getByRole('button', { name: 'Approve' }).click()]);
    return { heading, scopesShown, landed: new URL(page.url()) };
  } finally {
    await page.close();
  }
}
