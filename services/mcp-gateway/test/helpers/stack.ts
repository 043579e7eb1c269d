import { randomBytes } from 'node:crypto';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { createTestDatabase, type Database } from '@flowdesk/db';
import { generateSigningKeys, listen, signInternalToken, type Service } from '@flowdesk/service-kit';
import {
  buildApp as buildAuth,
  createApiKey,
  createPrismaClient as createAuthPrisma,
  createUser,
  generateServiceSecret,
  migrateAuth,
  revokeApiKey,
} from '@flowdesk/auth';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';
import { buildApp as buildEngine, createGuardedHttpClient, migrateEngine, workspaceClient } from '@flowdesk/workflow-engine';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_PATH } from '@flowdesk/contracts';
import { buildApp as buildGateway, type McpGatewayDeps } from '../../src/app.ts';
import { migrateGateway } from '../../src/adapters/db.ts';
import { withInProcessRevocations } from '../../src/adapters/revocations.ts';

export { MCP_PATH };

/**
 * Deps of a gateway with nothing behind it, for tests that never reach auth or workspace-api (health,
 * conformance mode): their URLs only have to be well-formed.
 */
export function standaloneGatewayDeps(db: Database, overrides: Partial<McpGatewayDeps> = {}): McpGatewayDeps {
  return {
    db,
    publicBaseUrl: 'http://127.0.0.1',
    authUrl: 'http://127.0.0.1:9',
    serviceClientSecret: 'x'.repeat(32),
    workspaceApiUrl: 'http://127.0.0.1:9',
    logLevel: 'silent',
    ...overrides,
  };
}

export interface TestUser {
  id: string;
  /** Sign-in for the OAuth consent page. */
  email: string;
  password: string;
  readKey: string;
  writeKey: string;
  writeKeyId: string;
}

export interface Stack {
  db: Database;
  /** The embedded bus on the test database, shared by auth (revocation events) and every gateway. */
  bus: EventBus;
  /** auth over loopback (its PUBLIC_BASE_URL is publicBaseUrl, so tokens are minted for the gateway's resource). */
  authUrl: string;
  /** The first gateway; more with addGateway (same database, same clock). */
  gatewayUrl: string;
  publicBaseUrl: string;
  /** Every log line of every service, to prove no credential appears in them. */
  logs: string[];
  /** Another gateway on the same database, clock and bus; `overrides` change its deps (e.g. corsOrigins). */
  addGateway(overrides?: Partial<McpGatewayDeps>): Promise<string>;
  newUser(): Promise<TestUser>;
  revoke(userId: string, keyId: string): Promise<void>;
  /** Moves the shared clock (gateway sessions and caches; auth). */
  advance(ms: number): void;
  /**
   * Stops the shared clock where it is (advance still moves it): a test whose point is not expiry is
   * then not at the mercy of a loaded machine's pauses (a 30 s cache outlived by a slow test).
   */
  freezeClock(): void;
  close(): Promise<void>;
}

/** auth + workspace-api + workflow-engine (the runs API) + mcp-gateway, in-process on one test database, over real loopback HTTP. */
export async function startStack(): Promise<Stack> {
  const test = await createTestDatabase();
  const db = test.db;
  await migrateWorkspace(db);
  await migrateAuth(db);
  await migrateGateway(db);
  await migrateEngine(db);
  const signingKeys = generateSigningKeys();
  const gatewaySecret = generateServiceSecret();
  const logs: string[] = [];
  const logStream = { write: (line: string) => void logs.push(line) };
  let offset = 0;
  let frozenAt: number | undefined;
  const clock = () => new Date((frozenAt ?? Date.now()) + offset);
  const apps: Service[] = [];
  // As embedded/src/services.ts wires it: auth's revocation publish also evicts in this process's gateways before it resolves.
  const bus = withInProcessRevocations(await createEmbeddedBus(db));

  const publicBaseUrl = 'https://flowdesk.example.test';
  const auth = await buildAuth({
    db,
    signingKeys,
    serviceClients: { 'mcp-gateway': gatewaySecret },
    publicBaseUrl,
    logLevel: 'debug',
    logStream,
    clock,
    events: bus,
  });
  apps.push(auth);
  const authUrl = await listen(auth, 0, '127.0.0.1');
  const api = await buildWorkspaceApi({ db, jwtPublicKeyPem: signingKeys.publicKeyPem, webhookSecretKey: randomBytes(32), publicBaseUrl, logLevel: 'silent' });
  apps.push(api);
  const workspaceApiUrl = await listen(api, 0, '127.0.0.1');
  // The engine serves the runs API; its own calls to workspace-api carry tokens signed here.
  const engineHttp = createGuardedHttpClient();
  const engineWorkspace = workspaceClient({
    workspaceApiUrl,
    userToken: async (sub) => signInternalToken(signingKeys, { sub, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp: 'workflow-engine' }),
    serviceToken: async () => signInternalToken(signingKeys, { sub: 'svc:workflow-engine', aud: 'workspace-api', scope: 'internal', azp: 'workflow-engine' }),
  });
  const engine = await buildEngine({ bus, db, jwtPublicKeyPem: signingKeys.publicKeyPem, http: engineHttp, workspace: engineWorkspace, logLevel: 'silent' });
  engine.addHook('onClose', async () => {
    await engineHttp.close();
    await engineWorkspace.close();
  });
  apps.push(engine);
  const engineUrl = await listen(engine, 0, '127.0.0.1');

  const addGateway = async (overrides: Partial<McpGatewayDeps> = {}) => {
    const gw = await buildGateway({
      db,
      publicBaseUrl,
      authUrl,
      serviceClientSecret: gatewaySecret,
      workspaceApiUrl,
      engineUrl,
      logLevel: 'debug',
      logStream,
      clock,
      bus,
      ...overrides,
    });
    apps.push(gw);
    return listen(gw, 0, '127.0.0.1');
  };
  const gatewayUrl = await addGateway();
  const authPrisma = createAuthPrisma(db);

  return {
    db,
    bus,
    authUrl,
    gatewayUrl,
    publicBaseUrl,
    logs,
    addGateway,
    async newUser() {
      const email = `u${randomBytes(6).toString('hex')}@example.test`;
      const password = randomBytes(12).toString('base64url');
      const user = await createUser(authPrisma, { email, password });
      const read = await createApiKey(authPrisma, { userId: user.id, name: 'read', scope: 'mcp:read' });
      const write = await createApiKey(authPrisma, { userId: user.id, name: 'write', scope: 'mcp:write' });
      return { id: user.id, email, password, readKey: read.secret, writeKey: write.secret, writeKeyId: write.key.id };
    },
    async revoke(userId, keyId) {
      await revokeApiKey(authPrisma, userId, keyId, clock());
    },
    advance(ms) {
      offset += ms;
    },
    freezeClock() {
      frozenAt ??= Date.now();
    },
    async close() {
      await Promise.allSettled(apps.map((a) => a.close()));
      await bus.close();
      await authPrisma.$disconnect().catch(() => {});
      await test.close();
    },
  };
}

/** The official SDK client on the gateway, authenticated with `key`; `sse` asks for SSE answers. */
export async function connectClient(url: string, key: string, opts: { sse?: boolean } = {}) {
  const client = new Client({ name: 'flowdesk-test', version: '1.0.0' });
  const fetchWithAccept: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    // The SDK always sends "application/json, text/event-stream" (JSON preferred); list SSE first to prefer it.
    if (opts.sse && headers.get('accept')?.includes('text/event-stream')) headers.set('accept', 'text/event-stream, application/json');
    return fetch(input, { ...init, headers });
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${url}${MCP_PATH}`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    fetch: fetchWithAccept,
  });
  await client.connect(transport);
  return { client, transport };
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** One raw HTTP request to the MCP endpoint with MCP's usual headers unless overridden (null drops one). */
export async function rawMcp(url: string, body: unknown, headers: Record<string, string | null> = {}, method = 'POST'): Promise<RawResponse> {
  const h: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' };
  for (const [k, v] of Object.entries(headers)) {
    if (v === null) delete h[k];
    else h[k] = v;
  }
  const res = await fetch(`${url}${MCP_PATH}`, {
    method,
    headers: h,
    body: method === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

export const initializeBody = (protocolVersion = '2025-06-18') => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** A fresh session over raw HTTP; returns its id. */
export async function openRawSession(url: string, key?: string): Promise<string> {
  const res = await rawMcp(url, initializeBody(), key ? { authorization: `Bearer ${key}` } : {});
  const id = res.headers.get('mcp-session-id');
  if (res.status !== 200 || !id) throw new Error(`initialize → ${res.status} ${res.text}`);
  return id;
}
