import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { createTestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, type Service } from '@flowdesk/service-kit';
import { buildApp as buildAuth, createApiKey, createPrismaClient as createAuthPrisma, createUser, generateServiceSecret, migrateAuth } from '@flowdesk/auth';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';
import { buildApp } from '../../src/app.ts';

export interface TestUser {
  id: string;
  email: string;
  password: string;
  readKey: string;
  writeKey: string;
  writeKeyId: string;
}

export interface ConsoleStack {
  /** The console (edge + pages) over loopback: what the ingress sends `/` and `/api/v1` to. */
  url: string;
  authUrl: string;
  workspaceApiUrl: string;
  bus: EventBus;
  logs: string[];
  newUser(): Promise<TestUser>;
  close(): Promise<void>;
}

/**
 * auth + workspace-api + console on one test database over real loopback HTTP. The console serves a
 * small stand-in for the built front end (its own directory), so these tests do not need a build.
 */
export async function startConsoleStack(opts: { publicBaseUrl?: string; introspectionCacheMs?: number; engineUrl?: string } = {}): Promise<ConsoleStack> {
  const test = await createTestDatabase();
  const db = test.db;
  await migrateWorkspace(db);
  await migrateAuth(db);
  const signingKeys = generateSigningKeys();
  const consoleSecret = generateServiceSecret();
  const logs: string[] = [];
  const logStream = { write: (line: string) => void logs.push(line) };
  const apps: Service[] = [];
  const bus = await createEmbeddedBus(db);
  const publicBaseUrl = opts.publicBaseUrl ?? 'http://flowdesk.example.test';
  const webRoot = await mkdtemp(path.join(tmpdir(), 'flowdesk-console-web-'));
  await writeFile(
    path.join(webRoot, 'index.html'),
    '<!doctype html><html lang="en"><head><title>Flowdesk</title></head><body><div id="root"></div></body></html>',
  );

  const auth = await buildAuth({ db, signingKeys, serviceClients: { console: consoleSecret }, publicBaseUrl, logLevel: 'debug', logStream, events: bus });
  apps.push(auth);
  const authUrl = await listen(auth, 0, '127.0.0.1');
  const api = await buildWorkspaceApi({ db, jwtPublicKeyPem: signingKeys.publicKeyPem, webhookSecretKey: randomBytes(32), publicBaseUrl, logLevel: 'silent' });
  apps.push(api);
  const workspaceApiUrl = await listen(api, 0, '127.0.0.1');
  // The runs API's upstream is not started here (embedded/test/webhook-flow reads real runs); a test may
  // pass a stand-in (edge-stream.test.ts).
  const edge = await buildApp({
    publicBaseUrl,
    authUrl,
    workspaceApiUrl,
    engineUrl: opts.engineUrl ?? 'http://127.0.0.1:9',
    serviceClientSecret: consoleSecret,
    webRoot,
    introspectionCacheMs: opts.introspectionCacheMs ?? 30_000,
    bus,
    logLevel: 'debug',
    logStream,
  });
  apps.push(edge);
  const url = await listen(edge, 0, '127.0.0.1');
  const authPrisma = createAuthPrisma(db);

  return {
    url,
    authUrl,
    workspaceApiUrl,
    bus,
    logs,
    async newUser() {
      const email = `u${randomBytes(6).toString('hex')}@example.test`;
      const password = randomBytes(12).toString('base64url');
      const user = await createUser(authPrisma, { email, password });
      const read = await createApiKey(authPrisma, { userId: user.id, name: 'read', scope: 'mcp:read' });
      const write = await createApiKey(authPrisma, { userId: user.id, name: 'write', scope: 'mcp:write' });
      return { id: user.id, email, password, readKey: read.secret, writeKey: write.secret, writeKeyId: write.key.id };
    },
    async close() {
      for (const app of [...apps].reverse()) await app.close().catch(() => {});
      await bus.close();
      await authPrisma.$disconnect().catch(() => {});
      await test.close();
      await rm(webRoot, { recursive: true, force: true });
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** fetch with a JSON body, returning the parsed answer. */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: unknown; bearer?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), redirect: 'manual' });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body };
}
