import { CONSOLE_CLIENT_HEADER } from '@flowdesk/contracts';
import { createTestDatabase, type Database } from '@flowdesk/db';
import { generateSigningKeys, listen, type Service, type SigningKeys } from '@flowdesk/service-kit';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { createPrismaClient, migrateAuth, type PrismaClient } from '../../src/adapters/db.ts';
import { buildApp, type AuthDeps } from '../../src/app.ts';
import { createApiKey } from '../../src/domain/api-keys.ts';
import { generateServiceSecret } from '../../src/domain/service-clients.ts';
import { createUser } from '../../src/domain/users.ts';

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestAuth {
  app: Service;
  baseUrl: string;
  db: Database;
  prisma: PrismaClient;
  signingKeys: SigningKeys;
  serviceClients: Record<string, string>;
  /** Every log line the app wrote (level debug), to prove what never appears in them. */
  logs: string[];
  setNow(d: Date | undefined): void;
  /** A new user with a random password; the password is returned so tests can look for it in logs. */
  newUser(): Promise<{ id: string; email: string; password: string }>;
  /** A key created directly in the domain (the HTTP API needs a key to start with). */
  newKey(userId: string, scope: 'mcp:read' | 'mcp:write', name?: string): Promise<{ id: string; secret: string }>;
  /**
   * JSON request; `token` becomes `Authorization: Bearer`. A console session token (`fds_`) goes as
   * the console edge sends it, with the console's credential beside it, unless `asConsole` is false.
   */
  call<T = any>(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string>; asConsole?: boolean },
  ): Promise<Res<T>>;
  /** Form-encoded POST, authenticated as `service` (its configured secret) unless `auth` says otherwise. */
  form<T = any>(path: string, fields: Record<string, string>, auth?: { service?: string; header?: string | null }): Promise<Res<T>>;
  close(): Promise<void>;
}

export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function toRes(res: Response): Promise<Res> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the test sees the text
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** A port free right now on loopback, so the app can know its own public URL before it listens. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface TestAuthOptions {
  registrationRateLimit?: AuthDeps['registrationRateLimit'];
  registrationGlobalRateLimit?: AuthDeps['registrationGlobalRateLimit'];
  /** Where revocation events go (a recording fake in the tests). */
  events?: AuthDeps['events'];
  /** Extra routes on the same origin before listening (a stand-in for what the front routes elsewhere). */
  beforeListen?: (app: Service, baseUrl: string) => void | Promise<void>;
  /** Anything else of AuthDeps (signup mode, session policy, throttle, trustProxy, corsOrigins, the metadata documents' HTTP client). */
  deps?: Partial<
    Pick<
      AuthDeps,
      | 'signupMode'
      | 'sessionPolicy'
      | 'throttle'
      | 'trustProxy'
      | 'corsOrigins'
      | 'clientMetadataHttp'
      | 'clientMetadataRateLimit'
      | 'clientMetadataGlobalRateLimit'
      | 'authorizeRateLimit'
      | 'oauthSweepIntervalMs'
    >
  >;
}

/**
 * The auth service on a fresh database (PGlite, or a new database on DATABASE_URL), over real HTTP.
 * Its PUBLIC_BASE_URL is its own loopback URL, so the URLs of its metadata work as they are.
 */
export async function startTestAuth(options: TestAuthOptions = {}): Promise<TestAuth> {
  const test = await createTestDatabase();
  await migrateAuth(test.db);
  const prisma = createPrismaClient(test.db);
  const signingKeys = generateSigningKeys();
  const serviceClients = {
    'mcp-gateway': generateServiceSecret(),
    'webhook-ingest': generateServiceSecret(),
    'workflow-engine': generateServiceSecret(),
    console: generateServiceSecret(),
  };
  const logs: string[] = [];
  let now: Date | undefined;
  const port = await freePort();
  const app = await buildApp({
    db: test.db,
    signingKeys,
    serviceClients,
    logLevel: 'debug',
    logStream: { write: (line) => void logs.push(line) },
    clock: () => now ?? new Date(),
    publicBaseUrl: `http://127.0.0.1:${port}`,
    registrationRateLimit: options.registrationRateLimit,
    registrationGlobalRateLimit: options.registrationGlobalRateLimit,
    events: options.events,
    ...options.deps,
  });
  await options.beforeListen?.(app, `http://127.0.0.1:${port}`);
  const baseUrl = await listen(app, port, '127.0.0.1');

  return {
    app,
    baseUrl,
    db: test.db,
    prisma,
    signingKeys,
    serviceClients,
    logs,
    setNow: (d) => void (now = d),
    async newUser() {
      const password = randomBytes(12).toString('base64url');
      const user = await createUser(prisma, { email: `u-${randomBytes(4).toString('hex')}@example.test`, password });
      return { id: user.id, email: user.email, password };
    },
    async newKey(userId, scope, name = 'test') {
      const { key, secret } = await createApiKey(prisma, { userId, name, scope });
      return { id: key.id, secret };
    },
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
      if (opts.token?.startsWith('fds_') && opts.asConsole !== false) headers[CONSOLE_CLIENT_HEADER] ??= basic('console', serviceClients.console);
      const init: RequestInit = { method, headers };
      if (opts.body !== undefined) {
        init.body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      return toRes(await fetch(`${baseUrl}${path}`, init));
    },
    async form(path, fields, auth = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      const service = auth.service ?? 'mcp-gateway';
      const header = auth.header === undefined ? basic(service, serviceClients[service as keyof typeof serviceClients] ?? 'x') : auth.header;
      if (header !== null) headers.authorization = header;
      return toRes(await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body: new URLSearchParams(fields).toString() }));
    },
    async close() {
      await app.close();
      await prisma.$disconnect().catch(() => {});
      await test.close();
    },
  };
}
