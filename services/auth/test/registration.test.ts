// Dynamic client registration hardening (issue 12): the limit counts per client address with a
// ceiling over all of them, and redirect URIs are https, loopback http or reverse-domain schemes only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, fetch } from 'undici';
import { startTestAuth, type TestAuth } from './helpers/app.ts';

let auth: TestAuth;
before(async () => {
  auth = await startTestAuth({ registrationRateLimit: { max: 3, windowMs: 60_000 }, registrationGlobalRateLimit: { max: 7, windowMs: 60_000 } });
});
after(() => auth.close());

/** Registers from a given loopback source address (127.0.0.x): each is another client address. */
async function registerFrom(source: string, body: object) {
  const dispatcher = new Agent({ localAddress: source });
  try {
    const res = await fetch(`${auth.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      dispatcher,
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  } finally {
    await dispatcher.close();
  }
}

// The test's clock only moves forward: each `nextWindow()` starts fresh rate-limit windows.
let clock = Date.now();
const nextWindow = () => {
  clock += 61_000;
  auth.setNow(new Date(clock));
};

const client = (redirect = 'http://127.0.0.1:9/cb') => ({ client_name: 'c', redirect_uris: [redirect], token_endpoint_auth_method: 'none' });

describe('dynamic client registration', () => {
  test('redirect URIs: https, loopback http, reverse-domain private-use schemes; browser-internal schemes refused', async () => {
    for (const uri of [
      'https://app.example/cb',
      'http://127.0.0.1:7777/cb',
      'http://[::1]:9/cb',
      'http://localhost:1/x',
      'com.example.app:/oauth2redirect',
      'io.github.someone.tool://callback',
    ]) {
      nextWindow();
      const res = await registerFrom('127.0.0.9', client(uri));
      assert.equal(res.status, 201, `${uri}: ${JSON.stringify(res.body)}`);
    }
  });

  test('refused: view-source:, javascript:, data:, file:, blob:, chrome-extension:, about:, single-label schemes', async () => {
    for (const uri of [
      'view-source:https://app.example/cb',
      'javascript:alert(1)',
      'data:text/html,x',
      'file:///etc/passwd',
      'blob:https://app.example/uuid',
      'chrome-extension://abcdef/cb',
      'about:blank',
      'myapp://cb',
      'ms-settings:privacy',
      'http://app.example/cb',
    ]) {
      nextWindow();
      const res = await registerFrom('127.0.0.10', client(uri));
      assert.deepEqual([res.status, res.body.error], [400, 'invalid_redirect_uri'], uri);
      assert.match(res.body.error_description, /not allowed|loopback/, uri);
    }
  });

  test('the limit counts per client address: one address at its limit leaves the others free; a ceiling caps them all', async () => {
    nextWindow();
    for (let i = 0; i < 3; i++) assert.equal((await registerFrom('127.0.0.2', client())).status, 201, `A ${i + 1}`);
    const refused = await registerFrom('127.0.0.2', client());
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error, 'rate_limited');
    assert.match(refused.body.error_description ?? refused.body.message, /from this address/);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    // Another address is not held up by the first one's flood.
    for (let i = 0; i < 3; i++) {
      const r = await registerFrom('127.0.0.3', client());
      assert.equal(r.status, 201, `B ${i + 1} ${JSON.stringify(r.body)}`);
    }
    // The ceiling (7 over all addresses): the 7th registration is the last one in this window.
    assert.equal((await registerFrom('127.0.0.4', client())).status, 201);
    const ceiling = await registerFrom('127.0.0.5', client());
    assert.equal(ceiling.status, 429);
    assert.match(ceiling.body.error_description ?? ceiling.body.message, /right now/);
    nextWindow();
    assert.equal((await registerFrom('127.0.0.5', client())).status, 201, 'a new window');
  });
});
