// OAuth2 credentials (docs/credentials.md, "OAuth2") against a real OpenID provider (oidc-provider,
// the npm package, on a loopback port), not a mock of the client: Connect's authorization code with
// PKCE through the engine's routes (the provider's own login and consent pages driven as a browser
// would, with a cookie jar); an HTTP Request node applying the token to a loopback API that asks the
// provider whether the token is active (introspection); a refresh when the token has expired (the
// engine's clock moved past it) and after a 401 (the access token revoked at the provider); two
// refreshes at once spending the rotating refresh token once; a revoked refresh token marking the
// credential "needs reconnecting", the step failing with that; the client credentials grant, its token
// kept until it expires; and a token URL the SSRF guard refuses.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import Provider from 'oidc-provider';
import type { EventBus } from '@flowdesk/bus';
import { TRIGGER_TOPIC } from '@flowdesk/contracts';
import {
  createGuardedHttpClient,
  generateSigningKeys,
  listen,
  parseAllowlist,
  SecretBox,
  signInternalToken,
  SsrfPolicy,
  type GuardedHttpClient,
  type Service,
} from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import { CredentialStore } from '../src/adapters/credential-store.ts';
import { OAuth2Client } from '../src/adapters/oauth2-client.ts';
import { startEngineStack, userCaller, webhookEvent, type EngineStack } from './support.ts';
import { until } from '@flowdesk/service-kit/testing';

const keys = generateSigningKeys();
const PUBLIC_BASE = 'http://flowdesk.test';
const CALLBACK = `${PUBLIC_BASE}/api/v1/credentials/oauth2/callback`;
const CLIENT_SECRET = `cs_${randomBytes(18).toString('base64url')}`;
const ROBOT_SECRET = `rs_${randomBytes(18).toString('base64url')}`;
const CREDENTIALS_KEY = randomBytes(32);

let stack: EngineStack;
let bus: EventBus;
let apiUrl: string;
let engine: Service;
let engineUrl: string;
let guarded: GuardedHttpClient;
let issuer: string;
let providerServer: http.Server;
let apiServer: http.Server;
let resourceUrl: string;
let discovery: Record<string, string>;
/** The engine's clock runs `offsetMs` ahead of the provider's: a test moves it to expire a token. */
let offsetMs = 0;
/** Every grant_type the provider's token endpoint was asked for, in order. */
const grants: string[] = [];
/** While set, the provider's token answers wait for it to resolve; tokenRequestsHeld counts the requests held. */
let hold: Promise<void> | undefined;
let tokenRequestsHeld = 0;
/** Tokens the API no longer takes, though the provider still says they are active (the API's own revocation list). */
const refusedByApi = new Set<string>();
/** The bearer tokens the loopback API saw, and whether the provider said each was active. */
const seen: { token: string; active: boolean }[] = [];

const call = userCaller(keys, () => ({ apiUrl, engineUrl }));

const listenOn = (server: http.Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/** Asks the provider (as `client`) about a token: introspection or revocation. */
async function atProvider(endpoint: 'introspection_endpoint' | 'revocation_endpoint', client: [string, string], token: string, hint?: string) {
  const res = await fetch(discovery[endpoint]!, {
    method: 'POST',
    headers: { authorization: basic(...client), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, ...(hint ? { token_type_hint: hint } : {}) }),
  });
  const text = await res.text();
  assert.ok(res.ok, `${endpoint}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as { active?: boolean }) : {};
}

before(async () => {
  providerServer = http.createServer();
  const providerPort = await listenOn(providerServer);
  issuer = `http://127.0.0.1:${providerPort}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'flowdesk',
        client_secret: CLIENT_SECRET,
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
      { client_id: 'robot', client_secret: ROBOT_SECRET, redirect_uris: [], response_types: [], grant_types: ['client_credentials'], scope: 'api' },
    ],
    scopes: ['openid', 'offline_access', 'api'],
    features: { devInteractions: { enabled: true }, clientCredentials: { enabled: true }, introspection: { enabled: true }, revocation: { enabled: true } },
    // A refresh token for every code (the provider's default asks for offline_access with prompt=consent).
    issueRefreshToken: async () => true,
    rotateRefreshToken: true,
    pkce: { required: () => true },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    cookies: { keys: [randomBytes(16).toString('hex')] },
  });
  // Every grant the token endpoint handled (its own events), in order.
  provider.on('grant.success', (ctx: { oidc: { params?: { grant_type?: unknown } } }) => grants.push(String(ctx.oidc.params?.grant_type)));
  provider.on('grant.error', (ctx: { oidc: { params?: { grant_type?: unknown } } }) => grants.push(`${String(ctx.oidc.params?.grant_type)} refused`));
  const handle = provider.callback();
  providerServer.on('request', (req, res) => {
    // While `hold` is set, the token endpoint's answers wait for it (the test decides when a refresh completes).
    if (hold && req.method === 'POST' && req.url === '/token') {
      const gate = hold;
      tokenRequestsHeld++;
      const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
      res.end = ((...args: unknown[]) => {
        void gate.then(() => end(...args));
        return res;
      }) as typeof res.end;
    }
    void handle(req, res);
  });
  discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;

  // The API the workflows call: 200 when the provider says the bearer token is active, else 401.
  apiServer = http.createServer((req, res) => {
    void (async () => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      const client: [string, string] = req.url?.startsWith('/robot') ? ['robot', ROBOT_SECRET] : ['flowdesk', CLIENT_SECRET];
      const active = token !== '' && !refusedByApi.has(token) && (await atProvider('introspection_endpoint', client, token)).active === true;
      seen.push({ token, active });
      res.writeHead(active ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ active, echoed: token }));
    })();
  });
  const apiPort = await listenOn(apiServer);
  resourceUrl = `http://127.0.0.1:${apiPort}`;

  stack = await startEngineStack({ keys });
  ({ bus, apiUrl } = stack);
  // The provider and the API are on loopback: the SSRF guard lets exactly those two through.
  guarded = createGuardedHttpClient({ policy: new SsrfPolicy(parseAllowlist(`127.0.0.1:${providerPort},127.0.0.1:${apiPort}`)) });
  engine = await buildApp({
    bus,
    db: stack.testDb.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    http: guarded,
    workspace: stack.workspace,
    credentialsKey: { key: CREDENTIALS_KEY, keyId: 'k1' },
    publicBaseUrl: PUBLIC_BASE,
    clock: () => new Date(Date.now() + offsetMs),
    logLevel: 'silent',
  });
  engineUrl = await listen(engine, 0);
});

after(async () => {
  await engine?.close();
  await guarded?.close();
  await stack?.close();
  await new Promise((r) => apiServer?.close(r));
  providerServer?.closeAllConnections();
  await new Promise((r) => providerServer?.close(r));
});

/** The engine's callback as the console's edge calls it (the person's session → a token for `userId`); the redirect it answers. */
async function callback(userId: string, url: string): Promise<URL> {
  const query = new URL(url).search;
  const token = signInternalToken(keys, { sub: userId, aud: 'workflow-engine', scope: 'mcp:read mcp:write', azp: 'test' });
  const res = await fetch(`${engineUrl}/api/v1/credentials/oauth2/callback${query}`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
  assert.equal(res.status, 302, await res.text());
  return new URL(res.headers.get('location')!, PUBLIC_BASE);
}

/**
 * Goes through the provider's pages as a browser: follows redirects with the provider's cookies,
 * fills the login form (any password, dev interactions) and confirms consent, until the provider
 * sends the browser to the callback; answers that URL (with code and state).
 */
async function consentAtProvider(authorizeUrl: string, login = 'ada'): Promise<string> {
  const jar = new Map<string, string>();
  let url = authorizeUrl;
  let init: RequestInit = {};
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as object), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (location) {
      const next = new URL(location, url).href;
      if (next.startsWith(CALLBACK)) return next;
      url = next;
      init = {};
      continue;
    }
    const html = await res.text();
    assert.equal(res.status, 200, `the provider answered ${res.status} at ${url}: ${html.slice(0, 500)}`);
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
    assert.ok(form, `a form at ${url}: ${html.slice(0, 500)}`);
    const fields = new URLSearchParams();
    for (const input of form[2]!.matchAll(/<input[^>]*>/gi)) {
      const name = /name="([^"]+)"/.exec(input[0])?.[1];
      if (!name) continue;
      const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
      fields.set(name, name === 'login' ? login : name === 'password' ? 'any' : value);
    }
    url = new URL(form[1]!.replace(/&amp;/g, '&'), url).href;
    init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: fields.toString() };
  }
  throw new Error('the provider never sent the browser back');
}

async function finishedRun(userId: string, workflowId: string, count: number) {
  for (const deadline = Date.now() + 20_000; ;) {
    const res = await call(userId, 'GET', `/api/v1/workflows/${workflowId}/runs?limit=20`);
    const done = (res.body.items as { id: string; status: string }[]).filter((r) => ['succeeded', 'failed'].includes(r.status));
    if (done.length >= count) return (await call(userId, 'GET', `/api/v1/workflow-runs/${done[0]!.id}`)).body;
    if (Date.now() > deadline) throw new Error(`no finished run of ${workflowId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A workflow with one HTTP Request naming `credential`; `run()` runs it once and answers the run. */
async function workflowUsing(owner: string, credential: string, path = '/user') {
  const wf = await call(owner, 'POST', '/api/v1/workflows', {
    name: `Calls with ${credential}`,
    triggerType: 'webhook',
    active: true,
    graph: {
      nodes: [{ id: 'call', type: 'http_request', params: { method: 'GET', url: `${resourceUrl}${path}`, credential } }],
      edges: [{ from: 'trigger', to: 'call' }],
    },
  });
  assert.equal(wf.status, 201, wf.text);
  let runs = 0;
  return async () => {
    await bus.publish(TRIGGER_TOPIC, [{ key: wf.body.id, value: webhookEvent(wf.body, owner, {}) }]);
    return finishedRun(owner, wf.body.id, ++runs);
  };
}

const credentialOf = async (owner: string, name: string) =>
  ((await call(owner, 'GET', '/api/v1/credentials')).body.credentials as { name: string; connection?: Record<string, string> }[]).find((c) => c.name === name)!;

/** Creates an authorization-code credential `name` for `owner` and connects it through the provider; answers the list's answer text. */
async function connected(owner: string, name: string) {
  const created = await call(owner, 'POST', '/api/v1/credentials', {
    name,
    type: 'oauth2',
    fields: {
      authorizeUrl: discovery.authorization_endpoint,
      tokenUrl: discovery.token_endpoint,
      clientId: 'flowdesk',
      clientSecret: CLIENT_SECRET,
      scopes: 'openid offline_access',
    },
  });
  assert.equal(created.status, 201, created.text);
  const start = await call(owner, 'POST', `/api/v1/credentials/${name}/connect`);
  assert.equal(start.status, 200, start.text);
  const back = await callback(owner, await consentAtProvider(start.body.authorizeUrl));
  assert.equal(back.searchParams.get('connected'), name, back.href);
}

describe('authorization code with PKCE: Connect through the engine and the provider, then runs use the token', () => {
  const owner = randomUUID();

  test('Connect: the provider consent round trip stores the tokens sealed; the state is single-use and bound to the user who started it', async () => {
    const created = await call(owner, 'POST', '/api/v1/credentials', {
      name: 'crm',
      type: 'oauth2',
      fields: {
        authorizeUrl: discovery.authorization_endpoint,
        tokenUrl: discovery.token_endpoint,
        clientId: 'flowdesk',
        clientSecret: CLIENT_SECRET,
        scopes: 'openid offline_access',
      },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.connection, { status: 'not_connected' });
    assert.deepEqual(created.body.secrets, { clientSecret: true, accessToken: false, refreshToken: false });

    const run = await workflowUsing(owner, 'crm');
    const before = await run();
    assert.equal(before.status, 'failed');
    assert.match(before.error, /credential "crm" is not connected: Connect it under Settings → Credentials/);

    const start = await call(owner, 'POST', '/api/v1/credentials/crm/connect');
    assert.equal(start.status, 200, start.text);
    const authorize = new URL(start.body.authorizeUrl);
    assert.equal(authorize.origin + authorize.pathname, discovery.authorization_endpoint);
    assert.deepEqual(
      ['response_type', 'client_id', 'redirect_uri', 'code_challenge_method', 'scope'].map((k) => authorize.searchParams.get(k)),
      ['code', 'flowdesk', CALLBACK, 'S256', 'openid offline_access'],
    );
    assert.match(authorize.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);

    const returned = await consentAtProvider(start.body.authorizeUrl);
    assert.ok(new URL(returned).searchParams.get('code'), returned);
    // Another user with the same state: refused, and the state is not spent.
    const stranger = await callback(randomUUID(), returned);
    assert.match(stranger.searchParams.get('connect_error') ?? '', /expired or was already used/);
    const back = await callback(owner, returned);
    assert.equal(back.pathname, '/settings/credentials');
    assert.equal(back.searchParams.get('connected'), 'crm');
    // The same answer again: the state was spent.
    assert.match((await callback(owner, returned)).searchParams.get('connect_error') ?? '', /expired or was already used/);

    const listed = await call(owner, 'GET', '/api/v1/credentials');
    const crm = listed.body.credentials.find((c: { name: string }) => c.name === 'crm');
    assert.equal(crm.connection.status, 'connected');
    assert.ok(Date.parse(crm.connection.expiresAt) > Date.now());
    assert.deepEqual(crm.secrets, { clientSecret: true, accessToken: true, refreshToken: true });

    const after = await run();
    assert.equal(after.status, 'succeeded', JSON.stringify(after));
    const token = seen.at(-1)!;
    assert.ok(token.active, 'the API got a token the provider says is active');
    assert.ok(!listed.text.includes(token.token) && !listed.text.includes(CLIENT_SECRET), 'no token nor secret in an answer');
    assert.ok(!JSON.stringify(after).includes(token.token), 'nor in the recorded run (the API echoed it)');
  });

  test('the provider refusing consent: back to Settings → Credentials with its error, the credential unchanged', async () => {
    const start = await call(owner, 'POST', '/api/v1/credentials/crm/connect');
    const state = new URL(start.body.authorizeUrl).searchParams.get('state')!;
    const back = await callback(
      owner,
      `${CALLBACK}?error=access_denied&error_description=${encodeURIComponent('End-User aborted interaction')}&state=${state}`,
    );
    assert.equal(back.searchParams.get('connect_error'), 'The provider did not connect "crm" (access_denied: End-User aborted interaction)');
    assert.equal((await credentialOf(owner, 'crm')).connection!.status, 'connected');
  });

  test('an expired access token is refreshed before the request (the engine clock past its expiry); the new one is stored', async () => {
    const run = await workflowUsing(owner, 'crm');
    const first = await run();
    assert.equal(first.status, 'succeeded');
    const firstToken = seen.at(-1)!.token;
    const expiresAt = (await credentialOf(owner, 'crm')).connection!.expiresAt!;
    const refreshes = grants.filter((g) => g === 'refresh_token').length;

    offsetMs = Date.parse(expiresAt) - Date.now() + 1_000;
    try {
      const second = await run();
      assert.equal(second.status, 'succeeded', JSON.stringify(second));
      assert.equal(grants.filter((g) => g === 'refresh_token').length, refreshes + 1, 'one refresh at the token URL');
      assert.notEqual(seen.at(-1)!.token, firstToken, 'the request carried the new token');
      assert.ok(Date.parse((await credentialOf(owner, 'crm')).connection!.expiresAt!) > Date.parse(expiresAt), 'the new expiry is stored');
    } finally {
      offsetMs = 0;
    }
  });

  test('a 401 with the stored token (the API stopped taking it): one refresh, the request once more, and it succeeds', async () => {
    const run = await workflowUsing(owner, 'crm');
    assert.equal((await run()).status, 'succeeded');
    const revoked = seen.at(-1)!.token;
    // (Revoking it at the provider would end its whole grant, refresh token included: oidc-provider does.)
    refusedByApi.add(revoked);
    const before = seen.length;
    const refreshes = grants.filter((g) => g === 'refresh_token').length;

    const again = await run();
    assert.equal(again.status, 'succeeded', JSON.stringify(again));
    assert.deepEqual(
      seen.slice(before).map((s) => [s.token === revoked, s.active]),
      [
        [true, false],
        [false, true],
      ],
      'refused with the revoked token, then accepted with a new one',
    );
    assert.equal(grants.filter((g) => g === 'refresh_token').length, refreshes + 1);
    assert.ok(!JSON.stringify(again).includes(seen.at(-1)!.token), 'the new token is not in the recorded run');
  });

  test('two replicas refreshing at once after a 401: the rotating refresh token is spent once (a lease by compare-and-set), both get the new token', async () => {
    // Two more stores on the same table and key: two replicas of the engine.
    let readsOfB = 0;
    const db = stack.testDb.db;
    const countingDb = new Proxy(db, {
      get: (target, prop) =>
        prop === 'queryAsUser'
          ? (...args: Parameters<typeof db.queryAsUser>) => {
              readsOfB++;
              return target.queryAsUser(...args);
            }
          : Reflect.get(target, prop, target),
    });
    const replica = (d: typeof db) =>
      new CredentialStore(d, new SecretBox(CREDENTIALS_KEY, { keyId: 'k1' }), { client: new OAuth2Client(guarded), clock: () => new Date() });
    const [a, b] = [replica(db), replica(countingDb)];
    const refused = (await storedTokens(owner, 'crm')).accessToken!;
    const refreshes = grants.filter((g) => g === 'refresh_token').length;
    const held = tokenRequestsHeld;
    let release!: () => void;
    hold = new Promise<void>((r) => (release = r));
    try {
      // A takes the lease and asks the provider, whose answer waits; B starts then, and reads the lease.
      const fromA = a.oauth2Token(owner, 'crm', { refused });
      await until('A asked the provider', () => tokenRequestsHeld === held + 1);
      const fromB = b.oauth2Token(owner, 'crm', { refused });
      await until('B read the lease and looked again', () => readsOfB >= 2);
      assert.equal(tokenRequestsHeld, held + 1, 'B sent nothing to the provider while A refreshes');
      release();
      const [tokensA, tokensB] = await Promise.all([fromA, fromB]);
      assert.notEqual(tokensA.accessToken, refused);
      assert.equal(tokensB.accessToken, tokensA.accessToken, 'B uses the token A stored');
      assert.equal(tokenRequestsHeld, held + 1, 'one token request, not two (a second would spend the rotated refresh token again)');
      assert.equal(grants.filter((g) => g === 'refresh_token').length, refreshes + 1);
    } finally {
      release();
      hold = undefined;
    }
    const run = await workflowUsing(owner, 'crm');
    assert.equal((await run()).status, 'succeeded', 'the stored refresh token still works');
  });

  test('Test: a new token from the provider, and until when it is valid', async () => {
    const refreshes = grants.filter((g) => g === 'refresh_token').length;
    const res = await call(owner, 'POST', '/api/v1/credentials/crm/test');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.ok, true);
    assert.match(res.body.message, /^The provider gave an access token, valid until \d{4}-/);
    assert.equal(res.body.connection.status, 'connected');
    assert.equal(grants.filter((g) => g === 'refresh_token').length, refreshes + 1);
  });

  test('a revoked refresh token: the credential needs reconnecting, the step fails naming it, Test says so; Connect again fixes it', async () => {
    const other = randomUUID();
    await connected(other, 'crm');
    const run = await workflowUsing(other, 'crm');
    assert.equal((await run()).status, 'succeeded');
    // The person revoked Flowdesk's access at the provider: its refresh token, and the access token in use.
    const stored = await storedTokens(other, 'crm');
    await atProvider('revocation_endpoint', ['flowdesk', CLIENT_SECRET], stored.refreshToken!, 'refresh_token');
    await atProvider('revocation_endpoint', ['flowdesk', CLIENT_SECRET], stored.accessToken!, 'access_token');

    const failed = await run();
    assert.equal(failed.status, 'failed');
    assert.match(
      failed.error,
      /credential "crm" needs reconnecting \(the provider refused its refresh token: invalid_grant\): Connect it again under Settings → Credentials/,
    );
    const listed = await credentialOf(other, 'crm');
    assert.deepEqual(listed.connection, { status: 'needs_reconnect', problem: 'the provider refused its refresh token: invalid_grant' });
    const tested = await call(other, 'POST', '/api/v1/credentials/crm/test');
    assert.equal(tested.body.ok, false);
    assert.match(tested.body.message, /needs reconnecting/);
    // The next run fails the same way without asking the provider again.
    const asked = grants.length;
    assert.equal((await run()).status, 'failed');
    assert.equal(grants.length, asked);

    const start = await call(other, 'POST', '/api/v1/credentials/crm/connect');
    assert.equal((await callback(other, await consentAtProvider(start.body.authorizeUrl))).searchParams.get('connected'), 'crm');
    assert.equal((await credentialOf(other, 'crm')).connection!.status, 'connected');
    assert.equal((await run()).status, 'succeeded');
  });
});

/** The tokens an OAuth2 credential holds, opened from its row with the engine's key (what only the engine can read). */
async function storedTokens(owner: string, name: string): Promise<Record<string, string>> {
  const rows = await stack.testDb.db.exec(`SELECT value_sealed FROM "engine"."credential" WHERE owner_id = $1 AND name = $2`, [owner, name]);
  return JSON.parse(new SecretBox(CREDENTIALS_KEY, { keyId: 'k1' }).open(String(rows.rows[0]!.value_sealed))) as Record<string, string>;
}

describe('client credentials', () => {
  const owner = randomUUID();

  test('a token fetched with the client id and secret at first use, kept until it expires, then fetched again', async () => {
    const created = await call(owner, 'POST', '/api/v1/credentials', {
      name: 'robot',
      type: 'oauth2',
      fields: { grant: 'client_credentials', tokenUrl: discovery.token_endpoint, clientId: 'robot', clientSecret: ROBOT_SECRET, scopes: 'api' },
    });
    assert.equal(created.status, 201, created.text);
    const connect = await call(owner, 'POST', '/api/v1/credentials/robot/connect');
    assert.equal(connect.status, 400);
    assert.match(connect.body.message, /client credentials: it needs no Connect/);

    const run = await workflowUsing(owner, 'robot', '/robot');
    const fetched = grants.filter((g) => g === 'client_credentials').length;
    const first = await run();
    assert.equal(first.status, 'succeeded', JSON.stringify(first));
    assert.ok(seen.at(-1)!.active);
    const firstToken = seen.at(-1)!.token;
    assert.equal((await run()).status, 'succeeded');
    assert.equal(seen.at(-1)!.token, firstToken, 'the same token while it is valid');
    assert.equal(grants.filter((g) => g === 'client_credentials').length, fetched + 1, 'fetched once');

    const expiresAt = (await credentialOf(owner, 'robot')).connection!.expiresAt!;
    offsetMs = Date.parse(expiresAt) - Date.now() + 1_000;
    try {
      assert.equal((await run()).status, 'succeeded');
      assert.notEqual(seen.at(-1)!.token, firstToken);
      assert.equal(grants.filter((g) => g === 'client_credentials').length, fetched + 2);
    } finally {
      offsetMs = 0;
    }
  });

  test('Test: a wrong client secret says the provider refused it; a token URL the SSRF guard blocks is refused before any request', async () => {
    await call(owner, 'POST', '/api/v1/credentials', {
      name: 'wrong',
      type: 'oauth2',
      fields: { grant: 'client_credentials', tokenUrl: discovery.token_endpoint, clientId: 'robot', clientSecret: 'not-it' },
    });
    const wrong = await call(owner, 'POST', '/api/v1/credentials/wrong/test');
    assert.equal(wrong.status, 200, wrong.text);
    assert.equal(wrong.body.ok, false);
    assert.match(wrong.body.message, /the provider refused it \(invalid_client/);

    const blocked = http.createServer((_req, res) => res.end('{}'));
    const port = await listenOn(blocked);
    try {
      await call(owner, 'POST', '/api/v1/credentials', {
        name: 'inside',
        type: 'oauth2',
        fields: { grant: 'client_credentials', tokenUrl: `http://127.0.0.1:${port}/token`, clientId: 'robot', clientSecret: 'x' },
      });
      let hits = 0;
      blocked.on('request', () => hits++);
      const res = await call(owner, 'POST', '/api/v1/credentials/inside/test');
      assert.equal(res.body.ok, false);
      assert.match(res.body.message, /the token URL could not be reached: .*(blocked|not allowed|SSRF)/i);
      assert.equal(hits, 0);
    } finally {
      await new Promise((r) => blocked.close(r));
    }
  });

  test('a type without a test answers 400; a secret credential cannot connect', async () => {
    await call(owner, 'POST', '/api/v1/credentials', { name: 'plain', value: 'v-123456' });
    const test1 = await call(owner, 'POST', '/api/v1/credentials/plain/test');
    assert.equal(test1.status, 400);
    const connect = await call(owner, 'POST', '/api/v1/credentials/plain/connect');
    assert.equal(connect.status, 400);
    assert.match(connect.body.message, /only an OAuth2 credential connects/);
  });
});
