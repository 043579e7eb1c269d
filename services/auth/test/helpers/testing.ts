// Test support that other packages' tests import as @flowdesk/auth/testing (never built into the service).
export * from './oauth-flow.ts';
export { MemoryProvider } from './memory-provider.ts';
export { CHROMIUM, CHROMIUM_ARGS, launchChromium, type LaunchedChromium } from './browser.ts';
