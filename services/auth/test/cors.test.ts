// CORS for browser-based MCP clients on the OAuth endpoints they call themselves (discovery,
// registration, token, revocation), for the origins of MCP_CORS_ORIGINS only (docs/auth.md, "CORS").
// Real HTTP on loopback: what a browser sends (preflight, then the request with Origin) and reads.
import assert from 'node:assert/strict';
import { generateSigningKeys } from '@flowdesk/service-kit';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { OAUTH_CORS_PATHS } from '../src/routes/cors.ts';
import { startTestAuth, type TestAuth } from './helpers/app.ts';

const CLIENT = 'https://inspector.example';
const OTHER = 'https://evil.example';

let auth: TestAuth;
before(async () => {
  auth = await startTestAuth({ deps: { corsOrigins: [CLIENT, 'http://localhost:6274'] } });
});
after(() => auth.close());

const preflight = (path: string, origin: string, method = 'POST', headers = 'authorization, content-type, mcp-protocol-version') =>
  fetch(`${auth.baseUrl}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });

describe('CORS on the OAuth endpoints a browser MCP client calls', () => {
  test('a preflight from a configured origin: 204 with the methods and headers it needs, for every such endpoint', async () => {
    for (const path of OAUTH_CORS_PATHS) {
      const res = await preflight(path, CLIENT);
      assert.equal(res.status, 204, path);
      assert.equal(res.headers.get('access-control-allow-origin'), CLIENT, path);
      assert.match(res.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/, path);
      assert.match(res.headers.get('access-control-allow-methods') ?? '', /\bGET\b/, path);
      const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
      for (const h of ['authorization', 'content-type', 'mcp-protocol-version']) assert.ok(allowed.includes(h), `${path}: ${h} in ${allowed}`);
      assert.ok(res.headers.get('access-control-max-age'), path);
      assert.match(res.headers.get('vary') ?? '', /Origin/i, path);
    }
    // Origins compare case-insensitively; a second configured origin works too.
    assert.equal((await preflight('/oauth/token', 'http://LOCALHOST:6274')).status, 204);
  });

  test('a preflight from any other origin, or without one: no CORS headers (403), so the browser refuses', async () => {
    for (const path of OAUTH_CORS_PATHS) {
      for (const origin of [OTHER, `${CLIENT}.evil.example`, 'null']) {
        const res = await preflight(path, origin);
        assert.equal(res.status, 403, `${path} ${origin}`);
        assert.equal(res.headers.get('access-control-allow-origin'), null, `${path} ${origin}`);
        assert.equal(res.headers.get('access-control-allow-methods'), null, `${path} ${origin}`);
      }
    }
    const bare = await fetch(`${auth.baseUrl}/oauth/register`, { method: 'OPTIONS' });
    assert.equal(bare.status, 403);
    assert.equal(bare.headers.get('access-control-allow-origin'), null);
  });

  test('the requests themselves: discovery, registration, token (also its errors) and revocation carry the CORS headers for a configured origin only', async () => {
    const meta = await fetch(`${auth.baseUrl}/.well-known/oauth-authorization-server`, { headers: { origin: CLIENT, 'mcp-protocol-version': '2025-06-18' } });
    assert.equal(meta.status, 200);
    assert.equal(meta.headers.get('access-control-allow-origin'), CLIENT);
    const metadata = (await meta.json()) as { registration_endpoint: string; token_endpoint: string; revocation_endpoint: string };

    const registered = await fetch(metadata.registration_endpoint, {
      method: 'POST',
      headers: { origin: CLIENT, 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'browser client', redirect_uris: [`${CLIENT}/callback`], token_endpoint_auth_method: 'none' }),
    });
    assert.equal(registered.status, 201);
    assert.equal(registered.headers.get('access-control-allow-origin'), CLIENT);
    assert.match(registered.headers.get('access-control-expose-headers') ?? '', /WWW-Authenticate/i);
    const { client_id } = (await registered.json()) as { client_id: string };

    // An error answer is readable by the client too (else it only sees a network error).
    const token = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { origin: CLIENT, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id,
        code: 'not-a-code',
        code_verifier: 'x'.repeat(43),
        redirect_uri: `${CLIENT}/callback`,
      }).toString(),
    });
    assert.equal(token.status, 400);
    assert.equal(((await token.json()) as { error: string }).error, 'invalid_grant');
    assert.equal(token.headers.get('access-control-allow-origin'), CLIENT);

    const revoke = await fetch(metadata.revocation_endpoint, {
      method: 'POST',
      headers: { origin: CLIENT, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id, token: 'not-a-token' }).toString(),
    });
    assert.equal(revoke.status, 200);
    assert.equal(revoke.headers.get('access-control-allow-origin'), CLIENT);

    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const other = await fetch(`${auth.baseUrl}${path}`, { headers: { origin: OTHER } });
      assert.equal(other.status, 200, path);
      assert.equal(other.headers.get('access-control-allow-origin'), null, path);
    }
  });

  test('nothing else of auth answers CORS: not the consent page, not the console session API', async () => {
    for (const path of ['/oauth/authorize', '/auth/v1/sessions', '/auth/v1/api-keys']) {
      const res = await fetch(`${auth.baseUrl}${path}`, { headers: { origin: CLIENT } });
      assert.equal(res.headers.get('access-control-allow-origin'), null, path);
      assert.notEqual((await preflight(path, CLIENT)).status, 204, path);
    }
  });

  test('configuration: MCP_CORS_ORIGINS (the setting the gateway reads too), validated at start', () => {
    const keys = generateSigningKeys();
    const base = {
      DATABASE_URL: 'postgres://db/x',
      PUBLIC_BASE_URL: 'http://127.0.0.1:8080',
      INTERNAL_JWT_PRIVATE_KEY: keys.privateKeyPem,
      SERVICE_CLIENT_SECRETS: `mcp-gateway=${'g'.repeat(32)}`,
    };
    assert.deepEqual(loadConfig(base).corsOrigins, []);
    assert.deepEqual(loadConfig({ ...base, MCP_CORS_ORIGINS: `${CLIENT}, http://localhost:6274/` }).corsOrigins, [CLIENT, 'http://localhost:6274']);
    assert.throws(
      () => loadConfig({ ...base, MCP_CORS_ORIGINS: 'https://app.example/path' }),
      /MCP_CORS_ORIGINS: https:\/\/app.example\/path is not an origin/,
    );
    assert.throws(() => loadConfig({ ...base, MCP_CORS_ORIGINS: '*' }), /MCP_CORS_ORIGINS: \* is not an origin/);
  });
});
