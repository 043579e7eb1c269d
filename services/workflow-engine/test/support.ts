// Shared test helpers: a loopback HTTP server that records what it received, and a quiet ports set.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signInternalToken, type SigningKeys } from '@flowdesk/service-kit';
import { callJson, type JsonAnswer } from '@flowdesk/service-kit/testing';
import type { EnginePorts, LogPort } from '../src/domain/ports.ts';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  port: number;
  /** Base URL, e.g. http://127.0.0.1:1234 */
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export type Handler = (req: Received, res: http.ServerResponse, count: number) => void;

export async function startServer(handler: Handler, host = '127.0.0.1'): Promise<TestServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      received.push(r);
      handler(r, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    port,
    url: `http://${shown}:${port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const silentLog: LogPort = { info() {}, warn() {}, error() {} };

export function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function fixedClock(): EnginePorts['clock'] {
  let t = Date.parse('2025-03-01T10:00:00.000Z');
  return () => new Date((t += 5));
}

/** The public API's paths the engine serves (runs, credentials); the rest of /api/v1 is workspace-api's. */
const ENGINE_PATH = /^\/api\/v1\/(workflows\/[^/]+\/runs|workflow-runs|credentials)/;

/**
 * Calls the public API as a user, as the console's edge would: the request goes to the service that
 * owns the path with a token for that audience. `urls` is read at each call (the servers start in
 * the suite's `before`).
 */
export function userCaller(keys: SigningKeys, urls: () => { apiUrl: string; engineUrl: string }) {
  return (userId: string, method: string, path: string, body?: unknown, scope = 'mcp:read mcp:write'): Promise<JsonAnswer> => {
    const toEngine = ENGINE_PATH.test(path);
    const token = signInternalToken(keys, { sub: userId, aud: toEngine ? 'workflow-engine' : 'workspace-api', scope, azp: 'test' });
    const { apiUrl, engineUrl } = urls();
    return callJson(`${toEngine ? engineUrl : apiUrl}${path}`, token, method, body);
  };
}
