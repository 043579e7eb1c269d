// Shared setup of the console's browser tests: people, their signed-in browser contexts, and calls of
// the public API as they would make them from the console (cookie + X-CSRF-Token, this origin).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { APIRequestContext, Browser, BrowserContext, Page } from 'playwright-core';

export interface Person {
  name: string;
  email: string;
  password: string;
}

export const person = (name: string): Person => ({
  name,
  email: `${name.split(' ')[0]!.toLowerCase()}-${randomBytes(3).toString('hex')}@example.test`,
  password: `pw-${randomBytes(9).toString('base64url')}`,
});

/**
 * How long one browser action (a click, a wait for an element) may take before the test fails. A
 * bound on a wait, not a wait: the conditions are awaited and end as soon as they hold. Generous
 * because CI runs these suites beside the others on two cores (a template gallery's first render
 * took over 20 s there).
 */
export const ACTION_TIMEOUT_MS = 45_000;

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** A browser context at this size (CSP bypassed only so axe-core can be injected). */
export async function newContext(browser: Browser, viewport = DESKTOP): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, bypassCSP: true, ...(viewport.width < 500 ? { isMobile: true, hasTouch: true } : {}) });
  context.setDefaultTimeout(ACTION_TIMEOUT_MS);
  return context;
}

/** Creates the owner account on a fresh start (POST /api/v1/setup): the context is signed in. */
export async function setUpOwner(context: BrowserContext, base: string, who: Person): Promise<void> {
  const res = await context.request.post(`${base}/api/v1/setup`, { data: who, headers: { origin: base } });
  assert.equal(res.status(), 201, await res.text());
}

/** Signs `context` in as `who` (the session cookie lands in the context). */
export async function signIn(context: BrowserContext, base: string, who: Person): Promise<void> {
  const res = await context.request.post(`${base}/api/v1/session`, { data: { email: who.email, password: who.password }, headers: { origin: base } });
  assert.equal(res.status(), 201, await res.text());
}

/** The owner invites `who`, who signs up in a context of their own, signed in. */
export async function inviteAndSignUp(owner: BrowserContext, browser: Browser, base: string, who: Person, viewport = DESKTOP): Promise<BrowserContext> {
  const invite = await apiCall(owner.request, base, 'POST', '/api/v1/invites', { email: who.email });
  const context = await newContext(browser, viewport);
  const res = await context.request.post(`${base}/api/v1/signup`, { data: { ...who, inviteToken: invite.token }, headers: { origin: base } });
  assert.equal(res.status(), 201, await res.text());
  return context;
}

/** A call of the public API with the context's session, as the console makes it; asserts a 2xx. */
export async function apiCall(request: APIRequestContext, base: string, method: string, path: string, body?: unknown): Promise<any> {
  const session = await (await request.get(`${base}/api/v1/session`)).json();
  const res = await request.fetch(`${base}${path}`, { method, data: body, headers: { origin: base, 'x-csrf-token': session.csrfToken } });
  assert.ok(res.ok(), `${method} ${path}: ${res.status()} ${await res.text()}`);
  return res.status() === 204 ? undefined : res.json();
}

/** Waiting on a condition, as every suite does. */
export { until } from '@flowdesk/service-kit/testing';

export const heading = (p: Page) => p.getByRole('heading', { level: 1 });
