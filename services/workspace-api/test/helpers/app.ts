import { randomBytes, randomUUID } from 'node:crypto';
import { generateSigningKeys, listen, signInternalToken, type Service, type SigningKeys } from '@flowdesk/service-kit';
import { buildApp } from '../../src/app.ts';
import { openTestWorkspace, type TestWorkspace } from './db.ts';

export const PUBLIC_BASE_URL = 'https://flowdesk.example.test';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestApi {
  app: Service;
  baseUrl: string;
  keys: SigningKeys;
  workspace: TestWorkspace;
  /** A new user's id and a helper calling the API as that user with the given scope. */
  user(scope?: string): TestUser;
  /** Sets the clock the app sees. */
  setNow(d: Date): void;
  close(): Promise<void>;
}

export interface TestUser {
  id: string;
  token: string;
  call<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
}

/** workspace-api on a fresh database, listening on loopback; requests go over real HTTP. */
export async function startTestApi(options: { bodyLimit?: number; logStream?: { write(line: string): void }; versionsKeep?: number } = {}): Promise<TestApi> {
  const workspace = await openTestWorkspace();
  const keys = generateSigningKeys();
  let now: Date | undefined;
  const app = await buildApp({
    db: workspace.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    webhookSecretKey: randomBytes(32),
    publicBaseUrl: PUBLIC_BASE_URL,
    clock: () => now ?? new Date(),
    logLevel: options.logStream ? 'info' : 'silent',
    logStream: options.logStream,
    bodyLimit: options.bodyLimit,
    versionsKeep: options.versionsKeep,
  });
  const baseUrl = await listen(app, 0);

  const request = async (method: string, path: string, body: unknown, headers: Record<string, string>): Promise<ApiResponse> => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, init);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the test sees the text
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };

  return {
    app,
    baseUrl,
    keys,
    workspace,
    user(scope = 'mcp:read mcp:write') {
      const id = randomUUID();
      const token = signInternalToken(keys, { sub: id, aud: 'workspace-api', scope, azp: 'test' });
      return {
        id,
        token,
        call: (method, path, body, headers = {}) => request(method, path, body, { authorization: `Bearer ${token}`, ...headers }),
      };
    },
    setNow(d) {
      now = d;
    },
    async close() {
      await app.close();
      await workspace.close();
    },
  };
}

/** Calls without any user (for 401 checks). */
export async function rawCall(baseUrl: string, method: string, path: string, init: RequestInit = {}) {
  const res = await fetch(`${baseUrl}${path}`, { method, ...init });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: res.status, headers: res.headers, body };
}

/** Status and body, for assertion messages. */
export const show = (r: ApiResponse) => `${r.status} ${JSON.stringify(r.body)}`;

/** POSTs and insists on 201; returns the created resource. */
export async function created<T>(user: TestUser, path: string, body: unknown): Promise<T> {
  const res = await user.call<T>('POST', path, body);
  if (res.status !== 201) throw new Error(`POST ${path} → ${show(res)}`);
  return res.body;
}

export const createProject = (user: TestUser, name = 'Project') => created<import('@flowdesk/contracts').Project>(user, '/api/v1/projects', { name });
