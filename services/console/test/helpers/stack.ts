import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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

/** A request as a service behind the edge received it. */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

export interface ConsoleStack {
  /** The console (edge + pages) over loopback: what the ingress sends `/` and `/api/v1` to. */
  url: string;
  authUrl: string;
  /** Every request the edge sent to auth (introspection and exchange included), as auth received it. */
  authReceived: Received[];
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
export async function startConsoleStack(
  opts: {
    publicBaseUrl?: string;
    introspectionCacheMs?: number;
    engineUrl?: string;
    /** false: the edge gets no revocation events (a replica the event has not reached yet). */
    revocationEvents?: boolean;
    /** SSRF_ALLOWLIST, which GET /session hands the editor. */
    ssrfAllowlist?: string;
  } = {},
): Promise<ConsoleStack> {
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
  // The edge reaches auth through a recording pass-through, so a test sees what auth received.
  const authReceived: Received[] = [];
  const tap = http.createServer((req, res) => {
    authReceived.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    const target = new URL(authUrl);
    const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => tap.listen(0, '127.0.0.1', resolve));
  const tapUrl = `http://127.0.0.1:${(tap.address() as AddressInfo).port}`;
  const api = await buildWorkspaceApi({ db, jwtPublicKeyPem: signingKeys.publicKeyPem, webhookSecretKey: randomBytes(32), publicBaseUrl, logLevel: 'silent' });
  apps.push(api);
  const workspaceApiUrl = await listen(api, 0, '127.0.0.1');
  // The runs API's upstream is not started here (embedded/test/webhook-flow reads real runs); a test may
  // pass a stand-in (edge-stream.test.ts).
  const edge = await buildApp({
    publicBaseUrl,
    authUrl: tapUrl,
    workspaceApiUrl,
    engineUrl: opts.engineUrl ?? 'http://127.0.0.1:9',
    serviceClientSecret: consoleSecret,
    webRoot,
    introspectionCacheMs: opts.introspectionCacheMs ?? 30_000,
    ssrfAllowlist: opts.ssrfAllowlist,
    bus: opts.revocationEvents === false ? undefined : bus,
    logLevel: 'debug',
    logStream,
  });
  apps.push(edge);
  const url = await listen(edge, 0, '127.0.0.1');
  const authPrisma = createAuthPrisma(db);

  return {
    url,
    authUrl,
    authReceived,
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
      tap.closeAllConnections();
      await new Promise((resolve) => tap.close(resolve));
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
