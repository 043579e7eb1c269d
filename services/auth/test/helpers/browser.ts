import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium, installed by scripts/install-chromium.sh (never a downloaded browser). */
export const CHROMIUM = '/usr/bin/chromium';

/** The flags of every browser test (auth's, the gateway's, the console's): headless, no sandbox, nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface LaunchedChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless chromium on a fresh profile (playwright passes it as --user-data-dir), for the consent
 * page tests (auth's and the gateway's, through @flowdesk/auth/testing). `ignoreHTTPSErrors` lets a page load images from a test's own https server.
 */
export async function launchChromium(options: { ignoreHTTPSErrors?: boolean } = {}): Promise<LaunchedChromium> {
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'flowdesk-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    ...options,
    args: CHROMIUM_ARGS,
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
