import { launchChromium, type LaunchedChromium } from '@flowdesk/auth/testing';

/** Headless chromium on a fresh profile: auth's launcher, the same for both packages' consent-page tests. */
export { launchChromium };
export type Browser = LaunchedChromium;

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
