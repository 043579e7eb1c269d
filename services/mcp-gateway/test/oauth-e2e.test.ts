// The whole OAuth flow as an MCP client meets it, driven by the official SDK's client auth only:
// a Client + StreamableHTTPClientTransport with an in-memory OAuthClientProvider and no token, on
// one origin (a path-routing front, like the ingress) serving the gateway and auth:
// bare 401 → discovery → registration → consent in chromium → token → tools → 403 step-up (refresh
// refused once, second consent) → refresh on expiry → revoke; and a token for another resource refused.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TOOLS, insufficientScopeMessage } from '@flowdesk/contracts';
import { createTestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, type Service } from '@flowdesk/service-kit';
import { buildApp as buildAuth, createPrismaClient as createAuthPrisma, createUser, generateServiceSecret, migrateAuth } from '@flowdesk/auth';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';
import { buildApp as buildGateway } from '../src/app.ts';
import { migrateGateway } from '../src/adapters/db.ts';
import { approveConsent, launchChromium, type Browser } from './helpers/browser.ts';
import { MemoryProvider } from '@flowdesk/auth/testing';
import { MCP_PATH, initializeBody, rawMcp } from './helpers/stack.ts';

const PRM_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

/** Which backend serves a path on the public origin: the same split as the ingress (embedded/src/services.ts). */
function routeOf(pathname: string): 'gateway' | 'auth' | undefined {
  if (pathname === MCP_PATH || pathname.startsWith(`${MCP_PATH}/`) || pathname.startsWith('/.well-known/oauth-protected-resource')) return 'gateway';
  if (pathname.startsWith('/.well-known/') || pathname.startsWith('/oauth/') || pathname.startsWith('/auth/')) return 'auth';
  return undefined;
}

/** Every exchange the front passed on (any client), in order: what mcp-remote sent and got back. */
const seen: (Exchange & { accept: string; userAgent: string })[] = [];

/** A loopback front door: one origin, routed by path, bodies piped both ways. */
async function startFront(targets: Partial<Record<'gateway' | 'auth', string>>) {
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const service = routeOf(new URL(req.url ?? '/', 'http://front').pathname);
    const base = service && targets[service];
    if (!base) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found', message: 'No route' }));
      return;
    }
    const target = new URL(base);
    const headers = { ...req.headers };
    delete headers.connection;
    const upstream = http.request({ hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (answer) => {
      seen.push({
        method: req.method ?? '',
        path: new URL(req.url ?? '/', 'http://front').pathname,
        status: answer.statusCode ?? 0,
        challenge: answer.headers['www-authenticate'] ?? null,
        auth: req.headers.authorization !== undefined,
        accept: req.headers.accept ?? '',
        userAgent: req.headers['user-agent'] ?? '',
      });
      const out = { ...answer.headers };
      delete out.connection;
      delete out['transfer-encoding'];
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The MCP client's own redirect URI (it lives in the client in reality): a page that says "done". */
async function startCallback() {
  const server = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Connected</title><p>You can close this window.</p>'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every secret handled here: none may reach a log line. */
const secrets: string[] = [];
const remember = <T extends string | undefined>(s: T): T => {
  if (s) secrets.push(s);
  return s;
};

/** What the SDK sent and got back, in order (method, path, status, WWW-Authenticate). */
interface Exchange {
  method: string;
  path: string;
  status: number;
  challenge: string | null;
  auth: boolean;
}

let front: Awaited<ReturnType<typeof startFront>>;
let callback: Awaited<ReturnType<typeof startCallback>>;
let browser: Browser;
let base: string;
let mcpUrl: string;
/** A second gateway on the same auth whose PUBLIC_BASE_URL (hence its resource) is another. */
let foreignGatewayUrl: string;
let authOffset = 0;
const logs: string[] = [];
const apps: Service[] = [];
let closeDb: () => Promise<void>;
let closePrisma: () => Promise<void>;
const user = { email: `e2e-${randomBytes(4).toString('hex')}@example.test`, password: remember(randomBytes(12).toString('base64url')), id: '' };
const exchanges: Exchange[] = [];

/** fetch for the SDK: records every exchange so the test can show the order of the flow. */
const recordingFetch: typeof fetch = async (input, init) => {
  const req = new Request(input, init);
  const res = await fetch(req);
  exchanges.push({
    method: req.method,
    path: new URL(req.url).pathname,
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    auth: req.headers.has('authorization'),
  });
  return res;
};

before(async () => {
  const targets: Partial<Record<'gateway' | 'auth', string>> = {};
  front = await startFront(targets);
  base = front.url;
  mcpUrl = `${base}${MCP_PATH}`;
  callback = await startCallback();
  const testDb = await createTestDatabase();
  closeDb = () => testDb.close();
  const db = testDb.db;
  await migrateWorkspace(db);
  await migrateAuth(db);
  await migrateGateway(db);
  const signingKeys = generateSigningKeys();
  const gatewaySecret = generateServiceSecret();
  const logStream = { write: (line: string) => void logs.push(line) };
  // auth has its own clock: moving it past an access token's lifetime leaves the gateway's
  // sessions (1 h idle limit, measured on the gateway's clock) alone.
  const authClock = () => new Date(Date.now() + authOffset);

  const auth = await buildAuth({
    db,
    signingKeys,
    serviceClients: { 'mcp-gateway': gatewaySecret },
    publicBaseUrl: base,
    logLevel: 'debug',
    logStream,
    clock: authClock,
  });
  apps.push(auth);
  targets.auth = await listen(auth, 0, '127.0.0.1');
  const api = await buildWorkspaceApi({
    db,
    jwtPublicKeyPem: signingKeys.publicKeyPem,
    webhookSecretKey: randomBytes(32),
    publicBaseUrl: base,
    logLevel: 'silent',
  });
  apps.push(api);
  const workspaceApiUrl = await listen(api, 0, '127.0.0.1');
  const gatewayDeps = { db, authUrl: targets.auth, serviceClientSecret: gatewaySecret, workspaceApiUrl, logLevel: 'debug', logStream, introspectionCacheMs: 0 };
  const gateway = await buildGateway({ ...gatewayDeps, publicBaseUrl: base });
  apps.push(gateway);
  targets.gateway = await listen(gateway, 0, '127.0.0.1');
  const foreign = await buildGateway({ ...gatewayDeps, publicBaseUrl: 'https://other.example.test' });
  apps.push(foreign);
  foreignGatewayUrl = await listen(foreign, 0, '127.0.0.1');

  const prisma = createAuthPrisma(db);
  closePrisma = () => prisma.$disconnect();
  user.id = (await createUser(prisma, { email: user.email, password: user.password })).id;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await Promise.allSettled(apps.map((a) => a.close()));
  await closePrisma?.().catch(() => {});
  await front?.close();
  await callback?.close();
  await closeDb?.();
});

const newTransport = (provider: MemoryProvider) => new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, fetch: recordingFetch });

/** Connects as far as the SDK can without a user: it must stop at the redirect to consent. */
async function connectUntilConsent(provider: MemoryProvider) {
  const transport = newTransport(provider);
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' });
  await assert.rejects(client.connect(transport), UnauthorizedError);
  await client.close().catch(() => {});
  assert.ok(provider.authorizationUrl, 'the SDK asked to send the user to the authorization endpoint');
  return transport;
}

async function connected(provider: MemoryProvider) {
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' });
  const transport = newTransport(provider);
  await client.connect(transport);
  return { client, transport };
}

/** The code from where chromium landed, checked against the state the SDK sent. */
function codeFrom(landed: URL, provider: MemoryProvider): string {
  assert.equal(landed.origin + landed.pathname, callback.redirectUri);
  assert.equal(landed.searchParams.get('state'), provider.stateValue);
  assert.equal(landed.searchParams.get('iss'), base);
  return remember(landed.searchParams.get('code')!);
}

/** A raw request on the MCP endpoint with a bearer token, on an existing session. */
/** A raw request with `token`, on the SDK transport's session (its id and its negotiated protocol version) when one is given. */
function raw(token: string, session: { sessionId?: string; protocolVersion?: string } | undefined, body: unknown, url = base) {
  return rawMcp(url, body, {
    authorization: `Bearer ${token}`,
    ...(session?.sessionId ? { 'mcp-session-id': session.sessionId } : {}),
    ...(session?.protocolVersion ? { 'mcp-protocol-version': session.protocolVersion } : {}),
  });
}

const challenge = () => `Bearer resource_metadata="${base}${PRM_PATH}"`;
const toolCall = (name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });

describe('the official MCP SDK client against auth + gateway on one origin', () => {
  const provider = new MemoryProvider('', 'E2E Agent', remember);
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  before(() => {
    Object.assign(provider, { redirectUrl: callback.redirectUri });
  });
  after(async () => {
    await client?.close().catch(() => {});
  });

  test('bare 401 → PRM (path-inserted) → AS metadata → registration → authorization URL with PKCE S256 and resource', async () => {
    exchanges.length = 0;
    transport = await connectUntilConsent(provider);
    const seen = exchanges.map((e) => `${e.method} ${e.path} ${e.status}`);
    // initialize needs no token (docs/mcp-gateway.md, "Authentication"); the next request is the bare 401.
    assert.deepEqual(seen.slice(0, 5), [
      `POST ${MCP_PATH} 200`,
      `POST ${MCP_PATH} 401`,
      `GET ${PRM_PATH} 200`,
      'GET /.well-known/oauth-authorization-server 200',
      'POST /oauth/register 201',
    ]);
    assert.equal(exchanges[1]!.auth, false);
    assert.equal(exchanges[1]!.challenge, challenge());
    assert.equal(exchanges.length, 5, seen.join('\n'));

    assert.ok(provider.client?.client_id, 'registered dynamically');
    const url = provider.authorizationUrl!;
    assert.equal(url.origin + url.pathname, `${base}/oauth/authorize`);
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('client_id'), provider.client.client_id);
    assert.equal(url.searchParams.get('redirect_uri'), callback.redirectUri);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.match(url.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(url.searchParams.get('resource'), mcpUrl, 'the exact MCP URL');
    assert.equal(url.searchParams.get('scope'), 'mcp:read mcp:write', 'from the PRM scopes_supported');
    assert.equal(url.searchParams.get('state'), provider.stateValue);
  });

  test('consent in chromium approving only mcp:read → finishAuth → connect → tools/list and a read tool work', async () => {
    const screenshot = path.join(tmpdir(), 'flowdesk-e2e-consent.png');
    const consent = await approveConsent(browser, provider.authorizationUrl!, {
      email: user.email,
      password: user.password,
      redirectUri: callback.redirectUri,
      untick: ['Change your workspace'],
      screenshot,
    });
    assert.equal(consent.heading, 'Connect E2E Agent to Flowdesk');
    assert.deepEqual(consent.scopesShown, ['Read your workspace', 'Change your workspace']);
    const code = codeFrom(consent.landed, provider);

    await transport.finishAuth(code);
    assert.equal(provider.saved?.scope, 'mcp:read', 'only what the user approved');
    assert.equal(provider.saved?.token_type, 'Bearer');

    ({ client, transport } = await connected(provider));
    const { tools } = await client.listTools();
    assert.equal(tools.length, TOOLS.length);
    const res = await client.callTool({ name: 'list_projects', arguments: {} });
    assert.notEqual(res.isError, true, JSON.stringify(res.content));
    assert.deepEqual((res.structuredContent as { items: unknown[] }).items, []);
  });

  test('a write tool with the read-only token: HTTP 403 insufficient_scope with the forbidden error body', async () => {
    // At the HTTP level, with the very token the SDK holds, on its session.
    const token = provider.saved!.access_token;
    const res = await raw(token, transport, toolCall('create_project', { name: 'Nope' }));
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('www-authenticate'), `Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="${base}${PRM_PATH}"`);
    assert.deepEqual(res.body, { error: 'forbidden', message: insufficientScopeMessage('write') });
  });

  test('step-up: the SDK meets the 403, its refresh is refused (invalid_grant), and it goes to a new authorization asking mcp:read mcp:write', async () => {
    // On insufficient_scope the SDK runs auth() with the challenge's scope; holding a refresh token it
    // refreshes first (a refresh carries no scope). Auth was told of the 403 and refuses that one
    // refresh, so the SDK drops its tokens and redirects to the authorization endpoint.
    exchanges.length = 0;
    provider.authorizationUrl = undefined;
    const registered = provider.client!.client_id;
    await assert.rejects(client.callTool({ name: 'create_project', arguments: { name: 'Nope' } }), UnauthorizedError);
    assert.deepEqual(
      exchanges.map((e) => `${e.method} ${e.path} ${e.status}`).filter((e) => !e.startsWith('GET')),
      [`POST ${MCP_PATH} 403`, 'POST /oauth/token 400'],
    );
    // Read through a function: an assertion on the property itself would narrow it for the lines below.
    const held = () => provider.saved;
    assert.equal(held(), undefined, 'the SDK dropped the read-only tokens');
    const url = provider.authorizationUrl!;
    assert.ok(url, 'and asked to send the user to the authorization endpoint');
    assert.equal(url.searchParams.get('scope'), 'mcp:read mcp:write', "the challenge's scope");
    assert.equal(url.searchParams.get('client_id'), registered, 'no second registration');
    assert.ok(!exchanges.some((e) => e.path === '/oauth/register'));
    assert.equal(url.searchParams.get('resource'), mcpUrl);

    // The user approves both scopes; the SDK redeems the code on the same transport and the very
    // same session now creates the project.
    const consent = await approveConsent(browser, url, { email: user.email, password: user.password, redirectUri: callback.redirectUri });
    assert.deepEqual(consent.scopesShown, ['Read your workspace', 'Change your workspace']);
    await transport.finishAuth(codeFrom(consent.landed, provider));
    assert.equal(provider.saved?.scope, 'mcp:read mcp:write');
    const created = await client.callTool({ name: 'create_project', arguments: { name: 'Launch', color: '#336699' } });
    assert.notEqual(created.isError, true, JSON.stringify(created.content));
    assert.equal((created.structuredContent as { name: string }).name, 'Launch');
    const list = await client.callTool({ name: 'list_projects', arguments: {} });
    assert.deepEqual(
      (list.structuredContent as { items: { name: string }[] }).items.map((p) => p.name),
      ['Launch'],
    );
  });

  test('a token minted for this resource is refused (401) by a gateway protecting another resource', async () => {
    const token = provider.saved!.access_token;
    const here = await rawMcp(base, initializeBody(), { authorization: `Bearer ${token}` });
    assert.equal(here.status, 200, 'valid here');
    const there = await rawMcp(foreignGatewayUrl, initializeBody(), { authorization: `Bearer ${token}` });
    assert.equal(there.status, 401, there.text);
    assert.equal(there.headers.get('www-authenticate'), `Bearer resource_metadata="https://other.example.test${PRM_PATH}"`);
    assert.equal(there.body?.error, 'unauthorized');
    const list = await raw(token, undefined, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, foreignGatewayUrl);
    assert.equal(list.status, 401);
  });

  test('refresh: past the access token lifetime the gateway answers 401 and the SDK refreshes and carries on', async () => {
    const old = { ...provider.saved! };
    authOffset += 3_601_000;
    const expired = await raw(old.access_token, transport, { jsonrpc: '2.0', id: 3, method: 'tools/list' });
    assert.equal(expired.status, 401);
    assert.equal(expired.headers.get('www-authenticate'), challenge());

    exchanges.length = 0;
    const res = await client.callTool({ name: 'list_projects', arguments: {} });
    assert.notEqual(res.isError, true, JSON.stringify(res.content));
    assert.deepEqual(
      exchanges.map((e) => `${e.method} ${e.path} ${e.status}`),
      [`POST ${MCP_PATH} 401`, `GET ${PRM_PATH} 200`, 'GET /.well-known/oauth-authorization-server 200', 'POST /oauth/token 200', `POST ${MCP_PATH} 200`],
    );
    assert.notEqual(provider.saved!.access_token, old.access_token);
    assert.notEqual(provider.saved!.refresh_token, old.refresh_token, 'rotated');
    assert.equal(provider.saved!.scope, 'mcp:read mcp:write');
    const created = await client.callTool({ name: 'create_project', arguments: { name: 'After refresh' } });
    assert.notEqual(created.isError, true, JSON.stringify(created.content));
  });

  test('revoke (RFC 7009) at auth: the next MCP request with that access token gets 401 with the header', async () => {
    const metadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as { revocation_endpoint: string };
    assert.equal(metadata.revocation_endpoint, `${base}/oauth/revoke`);
    const revoke = (token: string, hint: string) =>
      fetch(metadata.revocation_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, token_type_hint: hint, client_id: provider.client!.client_id }),
      });
    const access = provider.saved!.access_token;
    assert.equal((await raw(access, transport, { jsonrpc: '2.0', id: 4, method: 'tools/list' })).status, 200);
    assert.equal((await revoke(access, 'access_token')).status, 200);
    const after = await raw(access, transport, { jsonrpc: '2.0', id: 5, method: 'tools/list' });
    assert.equal(after.status, 401);
    assert.equal(after.headers.get('www-authenticate'), challenge());
    assert.equal(after.body?.error, 'unauthorized');

    // The SDK meets the same 401; its refresh token is still good, so it refreshes and works.
    await client.listTools();
    assert.notEqual(provider.saved!.access_token, access);

    // Revoking the refresh token ends the grant: the SDK's next 401 cannot be refreshed, it drops
    // the tokens and asks for a new authorization.
    const refresh = provider.saved!.refresh_token!;
    const access2 = provider.saved!.access_token;
    assert.equal((await revoke(refresh, 'refresh_token')).status, 200);
    assert.equal((await raw(access2, transport, { jsonrpc: '2.0', id: 6, method: 'tools/list' })).status, 401);
    provider.authorizationUrl = undefined;
    await assert.rejects(client.listTools(), UnauthorizedError);
    assert.equal(provider.saved, undefined, 'the SDK dropped the dead tokens');
    assert.ok(provider.authorizationUrl, 'and went back to the authorization endpoint');
  });
});

test('no token, code, verifier or password reaches the logs of auth or the gateway', () => {
  const text = logs.join('');
  assert.ok(text.includes('/oauth/token') && text.includes(MCP_PATH), 'the logs were captured');
  assert.ok(secrets.length > 10, `${secrets.length} secrets checked`);
  for (const s of secrets) assert.ok(!text.includes(s), `a secret (${s.slice(0, 6)}…) is in the logs`);
});

describe('mcp-remote (what Claude Desktop users run): first OAuth sign-in with the URL alone', () => {
  test('its unauthenticated probe gets the 401 challenge, it registers, the user approves in chromium, and it lists the tools over stdio', async () => {
    const { spawn } = await import('node:child_process');
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { createRequire } = await import('node:module');
    const configDir = await mkdtemp(path.join(tmpdir(), 'flowdesk-mcp-remote-'));
    const port = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    const bin = createRequire(import.meta.url).resolve('mcp-remote/dist/proxy.js');
    const mark = seen.length;
    // Its default transport, as Claude Desktop's configuration runs it: the URL alone, no --transport.
    // BROWSER=true: mcp-remote's attempt to open a browser does nothing; chromium below plays the user.
    const child = spawn(process.execPath, [bin, mcpUrl, String(port), '--allow-http'], {
      env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true', NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    /** Resolves once `pattern` appears in what the process wrote, or fails when it exits first. */
    const waitFor = (stream: 'stdout' | 'stderr', pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(stream === 'stdout' ? stdout : stderr);
          if (m) {
            child.stdout.off('data', check);
            child.stderr.off('data', check);
            resolve(m);
          }
        };
        child.stdout.on('data', (d: Buffer) => void (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
        child.stdout.on('data', check);
        child.stderr.on('data', check);
        void exited.then((code) => reject(new Error(`mcp-remote exited (${code}) before ${pattern}:\n${stderr}`)));
        check();
      });
    try {
      const [, authorizationUrl] = await waitFor('stderr', /Please authorize this client by visiting:\s*(\S+)/);
      const url = new URL(authorizationUrl!);
      assert.equal(url.origin + url.pathname, `${base}/oauth/authorize`);
      const redirectUri = url.searchParams.get('redirect_uri')!;
      assert.match(redirectUri, new RegExp(`^http://(localhost|127\\.0\\.0\\.1):${port}/`));
      const consent = await approveConsent(browser, url, { email: user.email, password: user.password, redirectUri });
      assert.ok(consent.landed.searchParams.get('code'), 'chromium came back to mcp-remote with a code');
      // Connected: now speak MCP to it over stdio, as Claude Desktop does.
      const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'claude-desktop-like', version: '1' } },
      });
      await waitFor('stdout', /"id":1[,}]/);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
      await waitFor('stdout', /"id":2[,}]/);
      const answer = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id?: number; result?: { tools: { name: string }[] } })
        .find((m) => m.id === 2);
      assert.equal(answer?.result?.tools.length, TOOLS.length, stdout.slice(0, 500));
      assert.ok(answer.result.tools.some((t) => t.name === 'get_workspace_overview'));
      // Its default transport (http-first, SSE as the fallback) stayed on Streamable HTTP: every probe
      // it made without a token was answered 401 with the challenge (or 200 for initialize, which
      // needs no token), never a 405/404/400 that would send it to SSE or make it give up.
      assert.match(stderr, /Using transport strategy: http-first/);
      assert.match(stderr, /Connected to remote server using StreamableHTTPClientTransport/);
      assert.doesNotMatch(stderr, /SSEClientTransport|falling back/i);
      const mcp = seen.slice(mark).filter((e) => e.path === MCP_PATH);
      const anonymous = mcp.filter((e) => !e.auth);
      assert.deepEqual(
        [anonymous[0]?.method, anonymous[0]?.status, anonymous[0]?.challenge],
        ['GET', 401, challenge()],
        'its first probe: an unauthenticated GET, answered 401 with the challenge',
      );
      for (const e of anonymous)
        assert.ok(e.status === 401 ? e.challenge === challenge() : e.method === 'POST' && e.status === 200, `${e.method} without a token → ${e.status}`);
      assert.ok(
        mcp.some((e) => e.auth && e.method === 'POST' && e.status === 200),
        'then it speaks MCP with its token',
      );
    } finally {
      child.kill();
      await exited;
      await rm(configDir, { recursive: true, force: true });
    }
  });
});
