import { createRequire, syncBuiltinESMExports } from 'node:module';

/**
 * What the test suites of every package share: waiting on a condition (never on a fixed time: the
 * suites run on loaded 2-core machines) and a JSON call with a bearer token over real HTTP.
 */

/**
 * Polls `check` until it answers something truthy and returns that. The ceiling is generous: it
 * only decides how long a broken test takes to fail, never how fast a working one passes.
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 60_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The status, the body as text, and the parsed JSON body (undefined when it is not JSON) of an answer. */
export interface JsonAnswer {
  status: number;
  text: string;
  // Tests read into answers freely; the routes' own tests check their shapes.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
  body: any;
}

/** One request with `Authorization: Bearer <token>` and a JSON body when one is given. */
export async function callJson(url: string, token: string, method: string, body?: unknown): Promise<JsonAnswer> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, text, body: parsed };
}

/**
 * How many times `crypto.timingSafeEqual` ran during `fn`. A secret comparison made through it takes
 * the same time wherever the inputs differ; one replaced by `===`/`!==` gives the same answers but
 * calls it zero times, so a test that asserts the count notices the replacement (timing itself is
 * too noisy to assert on a loaded machine). Works for code that imports it from `node:crypto` (ESM
 * bindings follow the patched builtin through syncBuiltinESMExports).
 */
export async function timingSafeEqualCalls(fn: () => unknown): Promise<number> {
  const crypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  const original = crypto.timingSafeEqual;
  let calls = 0;
  crypto.timingSafeEqual = (a, b) => {
    calls++;
    return original(a, b);
  };
  syncBuiltinESMExports();
  try {
    await fn();
  } finally {
    crypto.timingSafeEqual = original;
    syncBuiltinESMExports();
  }
  return calls;
}
