import { BlockList, isIP } from 'node:net';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { dropRestOfBody, type Service } from '@flowdesk/service-kit';
import type { Logger } from './log.ts';
import { resolve, type Route } from './routing.ts';

/**
 * A service in this process as the front reaches it: its fastify app. `routing` is fastify's own
 * request handler (the one its HTTP server calls), given the front's request and response as they
 * are; `inject` serves the front's health and readiness probes.
 */
export type Backend = Pick<Service, 'routing' | 'inject'>;

export interface ProxyOptions {
  routes: readonly Route[];
  /** Every backend, for `/services/<name>/…` and the front `/healthz` and `/readyz`. */
  services: readonly string[];
  /** A backend; undefined while it is not running (answers 502). */
  target(service: string): Backend | undefined;
  log: Logger;
  /** How long the front `/healthz` and `/readyz` wait for each backend. */
  healthTimeoutMs?: number;
  /** Which proxies in front of this one to believe (TRUST_PROXY); default none: the peer is the client. */
  trustProxy?: FrontTrust;
}

/** TRUST_PROXY as the front applies it: a hop count, or the addresses/CIDRs of trusted proxies. */
export type FrontTrust = { hops: number } | { trusted: BlockList } | undefined;

const NAMED: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

export function parseFrontTrust(value: string | undefined): FrontTrust {
  const text = (value ?? '').trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return { hops: Number(text) };
  const trusted = new BlockList();
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    for (const item of NAMED[entry] ?? [entry]) {
      const [address, bits] = item.split('/');
      const type = isIP(address ?? '') === 6 ? 'ipv6' : isIP(address ?? '') === 4 ? 'ipv4' : undefined;
      if (!type) throw new Error(`TRUST_PROXY: "${entry}" is not an address, a CIDR or a hop count`);
      if (bits === undefined) trusted.addAddress(address!, type);
      else trusted.addSubnet(address!, Number(bits), type);
    }
  }
  return { trusted };
}

const plain = (address: string) => (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address);

/**
 * The client's address as the front sees it: the TCP peer, unless TRUST_PROXY names the proxies in
 * front of us, in which case X-Forwarded-For is walked from the right past the trusted ones (the
 * same rule as fastify's trustProxy). Whatever else a caller wrote into X-Forwarded-For is ignored.
 */
export function clientAddress(req: IncomingMessage, trust: FrontTrust): string {
  const peer = plain(req.socket.remoteAddress ?? '');
  if (!trust) return peer;
  const forwarded = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((a) => plain(a.trim()))
    .filter(Boolean)
    .reverse();
  const chain = [peer, ...forwarded];
  if ('hops' in trust) return chain[Math.min(trust.hops, chain.length - 1)]!;
  let i = 0;
  while (i < chain.length - 1 && isIP(chain[i]!) && trust.trusted.check(chain[i]!, isIP(chain[i]!) === 6 ? 'ipv6' : 'ipv4')) i++;
  return chain[i]!;
}

// Meaningful for one connection only: the client's connection to the front, not the service's view
// of the request. The body's own framing (Content-Length, Transfer-Encoding) stays: the service reads
// the body from this same request, as Node decoded it.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'upgrade']);
const FRAMING = new Set(['content-length', 'transfer-encoding', 'host']);

/**
 * The front door of the embedded start: one port, routed by path prefix like the cluster's ingress,
 * with no second HTTP hop. The services run in this process, so the front hands each request, as it
 * came, to the target service's own request handling (fastify's `routing`, what its HTTP server
 * would call): the service reads the body from the client's request and writes its answer (event
 * streams included, as it writes them) to the client's response. What a proxy hop did that matters
 * stays here: hop-by-hop headers dropped, X-Forwarded-* replaced (not appended: the services trust
 * the front), the path prefix of `/services/<name>/` stripped, and an early answer's unread body
 * dropped within a bound. Body limits are each service's own (as on their own ports).
 */
export function createProxy(options: ProxyOptions): http.Server {
  const server = http.createServer((req, res) => {
    const dest = resolve(req.url ?? '/', options.routes, options.services);
    if (dest.kind === 'front-health') {
      void frontHealth(options, res);
    } else if (dest.kind === 'front-ready') {
      void frontReadiness(options, res);
    } else if (dest.kind === 'none') {
      sendError(res, 404, 'not_found', `No route for ${req.method} ${(req.url ?? '/').split('?')[0]}`);
    } else {
      const backend = options.target(dest.service);
      if (!backend) sendError(res, 502, 'unavailable', `${dest.service} is not running`);
      else handOver(req, res, backend, dest, clientAddress(req, options.trustProxy), options.log);
    }
  });
  // Node's default keeps an idle client connection 5 s: a client (a browser, a test's request
  // context) that reuses it just as it closes gets ECONNRESET, and a page can stay idle that long
  // easily. Keep it as long as the services do (fastify's default, 72 s), headers timeout above it.
  server.keepAliveTimeout = 72_000;
  server.headersTimeout = 75_000;
  return server;
}

function handOver(
  req: IncomingMessage,
  res: ServerResponse,
  backend: Backend,
  dest: { service: string; path: string; strippedPrefix?: string },
  client: string,
  log: Logger,
): void {
  forwardedHeaders(req, dest.strippedPrefix, client);
  req.url = dest.path;
  // An answer that went out while the client was still sending (a 401 before the body was read; a
  // 413 drains itself, service kit): the rest of the body is read and dropped, at most 64 MiB, then
  // the connection is cut (dropRestOfBody), so the client reads the answer and its keep-alive
  // connection serves the next request.
  res.once('finish', () => {
    if (!req.complete) dropRestOfBody(req);
  });
  try {
    backend.routing(req, res);
  } catch (err) {
    log.warn({ upstream: dest.service, err }, 'service failed to take the request');
    if (!res.headersSent) sendError(res, 502, 'unavailable', `${dest.service} is unavailable`);
    else res.destroy(err as Error);
  }
}

/**
 * The request's headers as the service sees them: without hop-by-hop ones, X-Forwarded-* as the front
 * determined them. Replaced, never appended to: the services trust the front, so whatever a caller
 * wrote into X-Forwarded-For would otherwise become their idea of the client's address (login
 * throttling is per address). One entry: the address the front determined. The raw header list is
 * rebuilt to match, for a service that reads it (the MCP SDK's transport builds its headers from it).
 */
function forwardedHeaders(req: IncomingMessage, strippedPrefix: string | undefined, client: string): void {
  const headers: IncomingHttpHeaders = req.headers;
  const named = headers.connection
    ? String(headers.connection)
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter((h) => !FRAMING.has(h))
    : [];
  for (const name of HOP_BY_HOP) delete headers[name];
  for (const name of named) delete headers[name];
  headers['x-forwarded-for'] = client;
  // What this hop saw, not what the client claims: the front is the edge of the embedded start.
  headers['x-forwarded-proto'] = 'http';
  if (headers.host) headers['x-forwarded-host'] = headers.host;
  else delete headers['x-forwarded-host'];
  if (strippedPrefix) headers['x-forwarded-prefix'] = strippedPrefix;
  else delete headers['x-forwarded-prefix'];
  const raw: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) raw.push(name, v);
    else raw.push(name, value);
  }
  req.rawHeaders = raw;
}

/**
 * Every backend's answer to `probe`, all at once: 'up' (2xx), 'refused' (it answered otherwise) or
 * 'down' (not running, unreachable, or no answer within the timeout).
 */
async function probeAll(options: ProxyOptions, probe: '/healthz' | '/readyz'): Promise<(readonly [string, 'up' | 'refused' | 'down'])[]> {
  const timeout = options.healthTimeoutMs ?? 2_000;
  return Promise.all(
    options.services.map(async (name) => {
      const backend = options.target(name);
      if (!backend) return [name, 'down'] as const;
      let timer: NodeJS.Timeout | undefined;
      try {
        // In process, through the service's own route (its readiness check, its draining state).
        const answer = await Promise.race([
          backend.inject({ method: 'GET', url: probe }),
          new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${name} did not answer ${probe} within ${timeout} ms`)), timeout))),
        ]);
        return [name, answer.statusCode >= 200 && answer.statusCode < 300 ? 'up' : 'refused'] as const;
      } catch {
        return [name, 'down'] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

async function frontHealth(options: ProxyOptions, res: ServerResponse): Promise<void> {
  const states = (await probeAll(options, '/healthz')).map(([name, state]) => [name, state === 'up' ? 'ok' : 'down'] as const);
  const services = Object.fromEntries(states);
  const down = states.filter(([, state]) => state === 'down').map(([name]) => name);
  if (down.length === 0) return sendJson(res, 200, { status: 'ok', services });
  // Still the error shape every 5xx has, plus the per-service view that explains it.
  sendJson(res, 503, { error: 'unavailable', message: `Down: ${down.join(', ')}`, status: 'degraded', services });
}

/**
 * The front `/readyz`: ready only when every service behind the base URL is (each one's own
 * `/readyz`: its database, its bus — Kafka's brokers for webhook-ingest —, not draining). 503 names
 * the ones that are not: 'not_ready' (it answered 503) or 'down' (no answer).
 */
async function frontReadiness(options: ProxyOptions, res: ServerResponse): Promise<void> {
  const states = (await probeAll(options, '/readyz')).map(
    ([name, state]) => [name, state === 'up' ? 'ready' : state === 'refused' ? 'not_ready' : 'down'] as const,
  );
  const services = Object.fromEntries(states);
  const notReady = states.filter(([, state]) => state !== 'ready').map(([name]) => name);
  if (notReady.length === 0) return sendJson(res, 200, { status: 'ready', services });
  sendJson(res, 503, { error: 'unavailable', message: `Not ready: ${notReady.join(', ')}`, status: 'not_ready', services });
}

function sendError(res: ServerResponse, status: number, error: string, message: string): void {
  sendJson(res, status, { error, message });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
