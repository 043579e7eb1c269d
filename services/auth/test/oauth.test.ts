import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Audience } from '@flowdesk/contracts';
import { createService, generateSigningKeys, internalAuth, signInternalToken, type Service } from '@flowdesk/service-kit';
import { loadConfig } from '../src/config.ts';
import { basic, startTestAuth, type TestAuth } from './helpers/app.ts';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const USER_ID = 'urn:flowdesk:params:oauth:token-type:user-id';

let auth: TestAuth;
/** workspace-api's verification, exactly as it runs there: service-kit's internalAuth. */
let downstream: Service;
let user: { id: string; password: string };
let writeKey: { id: string; secret: string };
let readKey: { id: string; secret: string };
const secrets: string[] = [];

before(async () => {
  auth = await startTestAuth();
  user = await auth.newUser();
  writeKey = await auth.newKey(user.id, 'mcp:write');
  readKey = await auth.newKey(user.id, 'mcp:read');
  secrets.push(writeKey.secret, readKey.secret, user.password, ...Object.values(auth.serviceClients));

  downstream = createService({ name: 'downstream', logLevel: 'silent' });
  await downstream.register(internalAuth, { publicKeyPem: auth.signingKeys.publicKeyPem, audience: Audience.workspaceApi });
  downstream.get('/read', { preHandler: downstream.requireAccess('read') }, async (req) => req.identity);
  downstream.post('/write', { preHandler: downstream.requireAccess('write') }, async (req) => req.identity);
  downstream.get('/service', { preHandler: downstream.requireService('webhook-ingest') }, async (req) => req.identity);
  await downstream.ready();
});
after(async () => {
  await downstream?.close();
  await auth.close();
});

const introspect = (token: string, authOpts?: Parameters<TestAuth['form']>[2]) => auth.form('/oauth/introspect', { token }, authOpts);
const exchange = (fields: Record<string, string>, service = 'mcp-gateway') =>
  auth.form('/oauth/token', { grant_type: EXCHANGE, subject_token_type: ACCESS_TOKEN, audience: 'workspace-api', ...fields }, { service });
const downstreamCall = (method: 'GET' | 'POST', token: string) =>
  downstream.inject({ method, url: method === 'GET' ? '/read' : '/write', headers: { authorization: `Bearer ${token}` } });
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

describe('introspection (RFC 7662)', () => {
  test('only configured services may ask: no, wrong, partial or borrowed credentials get 401 invalid_client', async () => {
    const gateway = auth.serviceClients['mcp-gateway']!;
    const attempts: Record<string, string | null> = {
      none: null,
      bearer: `Bearer ${writeKey.secret}`,
      'wrong secret': basic('mcp-gateway', 'x'.repeat(43)),
      'secret prefix': basic('mcp-gateway', gateway.slice(0, -1)),
      'secret plus extra': basic('mcp-gateway', `${gateway}x`),
      'unknown service': basic('intruder', gateway),
      "another service's secret": basic('mcp-gateway', auth.serviceClients['webhook-ingest']!),
      garbage: 'Basic !!!',
    };
    for (const [what, header] of Object.entries(attempts)) {
      const res = await introspect(writeKey.secret, { header });
      assert.equal(res.status, 401, what);
      assert.equal(res.body.error, 'invalid_client', what);
      assert.equal(typeof res.body.error_description, 'string');
      assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /, what);
      assert.ok(!('active' in res.body), what);
    }
    assert.equal((await introspect(writeKey.secret, { service: 'webhook-ingest' })).status, 200);
  });

  test('a working key is active, with its user, scopes and key id; keys do not expire', async () => {
    const res = await introspect(writeKey.secret);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const { iat, ...rest } = res.body;
    assert.deepEqual(rest, { active: true, sub: user.id, scope: 'mcp:read mcp:write', client_id: writeKey.id, token_type: 'api_key' });
    assert.equal(typeof iat, 'number');
    assert.equal((await introspect(readKey.secret)).body.scope, 'mcp:read');
  });

  test('unknown, malformed, truncated or empty tokens are just inactive', async () => {
    for (const token of [`fdk_${'z'.repeat(43)}`, writeKey.secret.slice(0, -2), `${writeKey.secret} `, 'hello', '']) {
      const res = await introspect(token);
      assert.equal(res.status, 200, JSON.stringify(token));
      assert.deepEqual(res.body, { active: false }, JSON.stringify(token));
    }
  });

  test('a request without token is invalid_request, in the OAuth error shape', async () => {
    const res = await auth.form('/oauth/introspect', {});
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_request');
  });
});

describe('client_credentials: a service acting as itself', () => {
  const serviceGrant = (fields: Record<string, string>, authOpts?: Parameters<TestAuth['form']>[2]) =>
    auth.form('/oauth/token', { grant_type: 'client_credentials', audience: 'workspace-api', ...fields }, authOpts);

  test('a service gets a svc:<id> token that service routes accept and user routes refuse', async () => {
    const res = await serviceGrant({}, { service: 'webhook-ingest' });
    assert.equal(res.status, 200, res.text);
    secrets.push(res.body.access_token);
    const claims = claimsOf(res.body.access_token);
    assert.deepEqual(
      { sub: claims.sub, azp: claims.azp, aud: claims.aud, scope: claims.scope },
      { sub: 'svc:webhook-ingest', azp: 'webhook-ingest', aud: 'workspace-api', scope: 'internal' },
    );
    assert.equal((await downstream.inject({ method: 'GET', url: '/service', headers: { authorization: `Bearer ${res.body.access_token}` } })).statusCode, 200);
    assert.equal((await downstreamCall('GET', res.body.access_token)).statusCode, 401, 'no way into user routes');
    const other = await serviceGrant({}, { service: 'mcp-gateway' });
    assert.equal(
      (await downstream.inject({ method: 'GET', url: '/service', headers: { authorization: `Bearer ${other.body.access_token}` } })).statusCode,
      403,
    );
  });

  test('without service credentials, with a wrong secret, or for an unknown audience, it is refused', async () => {
    const anonymous = await auth.form('/oauth/token', { grant_type: 'client_credentials', audience: 'workspace-api' }, { header: null });
    assert.deepEqual([anonymous.status, anonymous.body.error], [400, 'unsupported_grant_type'], 'no such grant for anyone else');
    const wrong = await serviceGrant({}, { header: basic('webhook-ingest', 'not-the-secret') });
    assert.deepEqual([wrong.status, wrong.body.error], [401, 'invalid_client']);
    const badAudience = await serviceGrant({ audience: 'billing' }, { service: 'webhook-ingest' });
    assert.deepEqual([badAudience.status, badAudience.body.error], [400, 'invalid_target']);
  });
});

describe('token exchange (RFC 8693)', () => {
  test("a write key becomes an internal JWT that workspace-api's verification accepts for writes", async () => {
    const res = await exchange({ subject_token: writeKey.secret });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const { access_token, ...rest } = res.body;
    assert.deepEqual(rest, { issued_token_type: 'urn:ietf:params:oauth:token-type:jwt', token_type: 'Bearer', expires_in: 300, scope: 'mcp:read mcp:write' });
    secrets.push(access_token);
    const claims = claimsOf(access_token);
    assert.deepEqual(
      {
        sub: claims.sub,
        aud: claims.aud,
        scope: claims.scope,
        azp: claims.azp,
        client_id: claims.client_id,
        iss: claims.iss,
        ttl: Number(claims.exp) - Number(claims.iat),
      },
      { sub: user.id, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp: 'mcp-gateway', client_id: writeKey.id, iss: 'flowdesk-auth', ttl: 300 },
    );
    const written = await downstreamCall('POST', access_token);
    assert.equal(written.statusCode, 200, written.body);
    assert.equal(written.json().userId, user.id);
    // The API key itself is worthless downstream.
    assert.equal((await downstreamCall('GET', writeKey.secret)).statusCode, 401);
  });

  test('a read key yields a read-only token: reads pass, writes get 403', async () => {
    const res = await exchange({ subject_token: readKey.secret });
    assert.equal(res.body.scope, 'mcp:read');
    assert.equal((await downstreamCall('GET', res.body.access_token)).statusCode, 200);
    const write = await downstreamCall('POST', res.body.access_token);
    assert.equal(write.statusCode, 403);
    assert.match(write.json().message, /requires the mcp:write scope/);
  });

  test('scope can be narrowed, never widened', async () => {
    const narrowed = await exchange({ subject_token: writeKey.secret, scope: 'mcp:read' });
    assert.equal(narrowed.body.scope, 'mcp:read');
    assert.equal((await downstreamCall('POST', narrowed.body.access_token)).statusCode, 403);
    const widened = await exchange({ subject_token: readKey.secret, scope: 'mcp:write' });
    assert.deepEqual([widened.status, widened.body.error], [400, 'invalid_scope']);
  });

  test('refusals in the RFC 6749 §5.2 shape', async () => {
    const cases: [string, Promise<Awaited<ReturnType<typeof exchange>>>, number, string][] = [
      ['unknown key', exchange({ subject_token: `fdk_${'q'.repeat(43)}` }), 400, 'invalid_grant'],
      ['unknown audience', exchange({ subject_token: writeKey.secret, audience: 'billing' }), 400, 'invalid_target'],
      [
        'no audience',
        auth.form('/oauth/token', { grant_type: EXCHANGE, subject_token: writeKey.secret, subject_token_type: ACCESS_TOKEN }),
        400,
        'invalid_target',
      ],
      ['unknown token type', exchange({ subject_token: writeKey.secret, subject_token_type: 'urn:x' }), 400, 'invalid_request'],
      ['password grant', auth.form('/oauth/token', { grant_type: 'password', username: 'a', password: 'b' }), 400, 'unsupported_grant_type'],
      [
        'no service credentials',
        auth.form(
          '/oauth/token',
          { grant_type: EXCHANGE, subject_token: writeKey.secret, subject_token_type: ACCESS_TOKEN, audience: 'workspace-api' },
          { header: null },
        ),
        401,
        'invalid_client',
      ],
    ];
    for (const [what, pending, status, error] of cases) {
      const res = await pending;
      assert.deepEqual([res.status, res.body.error, typeof res.body.error_description], [status, error, 'string'], what);
      assert.ok(!('access_token' in res.body), what);
    }
  });

  test('the workflow engine may obtain a token for a user by id; other services may not', async () => {
    const engine = await exchange({ subject_token: user.id, subject_token_type: USER_ID }, 'workflow-engine');
    assert.equal(engine.status, 200, engine.text);
    const claims = claimsOf(engine.body.access_token);
    assert.deepEqual([claims.sub, claims.azp, claims.scope], [user.id, 'workflow-engine', 'mcp:read mcp:write']);
    assert.equal((await downstreamCall('POST', engine.body.access_token)).statusCode, 200);

    for (const service of ['mcp-gateway', 'webhook-ingest']) {
      const res = await exchange({ subject_token: user.id, subject_token_type: USER_ID }, service);
      assert.deepEqual([res.status, res.body.error], [400, 'unauthorized_client'], service);
    }
    const unknown = await exchange({ subject_token: '00000000-0000-4000-8000-000000000000', subject_token_type: USER_ID }, 'workflow-engine');
    assert.deepEqual([unknown.status, unknown.body.error], [400, 'invalid_grant']);
  });
});

test('revoking a key: the very next introspection is inactive and the next exchange fails', async () => {
  const key = await auth.newKey(user.id, 'mcp:write', 'short-lived');
  secrets.push(key.secret);
  assert.equal((await introspect(key.secret)).body.active, true);
  assert.equal((await exchange({ subject_token: key.secret })).status, 200);
  assert.equal((await auth.call('DELETE', `/auth/v1/api-keys/${key.id}`, { token: writeKey.secret })).status, 204);
  assert.deepEqual((await introspect(key.secret)).body, { active: false });
  const res = await exchange({ subject_token: key.secret });
  assert.deepEqual([res.status, res.body.error], [400, 'invalid_grant']);
});

test('the JWKS publishes the Ed25519 key that verifies minted tokens, and only that one', async () => {
  const res = await auth.call('GET', '/.well-known/jwks.json');
  assert.equal(res.status, 200);
  const [jwk, ...more] = res.body.keys;
  assert.equal(more.length, 0);
  assert.deepEqual({ ...jwk, x: typeof jwk.x }, { kty: 'OKP', crv: 'Ed25519', x: 'string', kid: auth.signingKeys.kid, alg: 'EdDSA', use: 'sig' });
  const publicKey = createPublicKey({ key: jwk, format: 'jwk' });

  const checks = (jwt: string) => {
    const [header, payload, signature] = jwt.split('.') as [string, string, string];
    return verify(null, Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, 'base64url'));
  };
  const minted = (await exchange({ subject_token: readKey.secret })).body.access_token as string;
  assert.equal(JSON.parse(Buffer.from(minted.split('.')[0]!, 'base64url').toString()).kid, jwk.kid);
  assert.equal(checks(minted), true);
  const forged = signInternalToken(generateSigningKeys(), { sub: user.id, aud: 'workspace-api', scope: 'mcp:write' });
  assert.equal(checks(forged), false);
});

test('no key, service secret, password or minted token reaches the logs', () => {
  const text = auth.logs.join('');
  assert.ok(text.includes('/oauth/token') && text.includes('/oauth/introspect'), 'the logs were captured');
  assert.ok(secrets.length >= 7);
  for (const s of secrets) assert.ok(!text.includes(s), `a secret (${s.slice(0, 6)}…) is in the logs`);
});

test('configuration: the service clients, the signing key and its kid come from the environment', () => {
  const keys = generateSigningKeys();
  const gw = 'g'.repeat(32);
  const config = loadConfig({
    DATABASE_URL: 'postgres://db/flowdesk',
    PUBLIC_BASE_URL: 'https://flowdesk.example/',
    INTERNAL_JWT_PRIVATE_KEY: keys.privateKeyPem,
    SERVICE_CLIENT_SECRETS: `mcp-gateway=${gw}, workflow-engine=${'w'.repeat(40)}`,
  });
  assert.deepEqual(config.serviceClients, { 'mcp-gateway': gw, 'workflow-engine': 'w'.repeat(40) });
  assert.deepEqual(config.userIdExchangeClients, ['workflow-engine']);
  assert.equal(config.publicBaseUrl, 'https://flowdesk.example');
  assert.equal(config.signingKeys.publicKeyPem, keys.publicKeyPem);
  assert.match(config.signingKeys.kid, /^[A-Za-z0-9_-]{43}$/);
  const base = { DATABASE_URL: 'postgres://db/x', PUBLIC_BASE_URL: 'http://127.0.0.1:8080', INTERNAL_JWT_PRIVATE_KEY: keys.privateKeyPem };
  assert.throws(() => loadConfig({ ...base, SERVICE_CLIENT_SECRETS: 'mcp-gateway=short' }), /at least 32 characters/);
  assert.throws(() => loadConfig({ ...base }), /SERVICE_CLIENT_SECRETS is required/);
  assert.throws(() => loadConfig({ ...base, SERVICE_CLIENT_SECRETS: `a=${gw}`, PUBLIC_BASE_URL: undefined }), /PUBLIC_BASE_URL is required/);
  assert.throws(() => loadConfig({ ...base, SERVICE_CLIENT_SECRETS: `a=${gw}`, PUBLIC_BASE_URL: 'ftp://x' }), /PUBLIC_BASE_URL must be/);
  assert.throws(() => loadConfig({ ...base, SERVICE_CLIENT_SECRETS: `a=${gw}`, INTERNAL_JWT_PRIVATE_KEY: undefined }), /INTERNAL_JWT_PRIVATE_KEY is required/);
});
