import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { createHmac, randomUUID } from 'node:crypto';

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

/**
 * The signature headers a provider sends with a webhook delivery of `rawBody`, built as its docs
 * describe (for tests of the Verify signature presets and the provider templates):
 * GitHub `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`; Stripe
 * `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`; Shopify
 * `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>`; Standard Webhooks `webhook-id`,
 * `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<t>.<body>">`, keyed with
 * the bytes after `whsec_`.
 */
export function providerSignature(
  preset: 'github' | 'stripe' | 'shopify' | 'standard_webhooks',
  secret: string,
  rawBody: string,
  options: { nowSeconds?: number; deliveryId?: string } = {},
): Record<string, string> {
  const t = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const id = options.deliveryId ?? `msg_${randomUUID()}`;
  switch (preset) {
    case 'github':
      return { 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}` };
    case 'stripe':
      return { 'stripe-signature': `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex')}` };
    case 'shopify':
      return { 'x-shopify-hmac-sha256': createHmac('sha256', secret).update(rawBody).digest('base64') };
    case 'standard_webhooks': {
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      return {
        'webhook-id': id,
        'webhook-timestamp': String(t),
        'webhook-signature': `v1,${createHmac('sha256', key).update(`${id}.${t}.${rawBody}`).digest('base64')}`,
      };
    }
  }
}

/**
 * A self-signed certificate for 127.0.0.1 (P-256, one day), made by openssl in `dir`: the TLS servers
 * tests start (a CIMD host, an SMTP server with STARTTLS). Returns the PEM texts.
 */
export function selfSignedCertificate(dir: string): { key: string; cert: string } {
  const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}
