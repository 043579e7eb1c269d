import { BlockList, isIP } from 'node:net';
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { dropRestOfBody } from '@flowdesk/service-kit';
import type { Logger } from './log.ts';
import { resolve, type Route } from './routing.ts';

export interface ProxyOptions {
  routes: readonly Route[];
  /** Every backend, for `/services/<name>/…` and the front `/healthz` and `/readyz`. */
  services: readonly string[];
  /** A backend's base URL; undefined while it is not running (answers 502). */
  target(service: string): string | undefined;
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

// Meaningful for one connection only; forwarding them would corrupt the next hop's framing.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The front door of the embedded start: one port, routed by path prefix like the cluster's
 * ingress. Bodies are piped both ways, never buffered, so event streams reach the client as the
 * backend writes them.
 */
export function createProxy(options: ProxyOptions): http.Server {
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const dest = resolve(req.url ?? '/', options.routes, options.services);
    if (dest.kind === 'front-health') {
      void frontHealth(options, res);
    } else if (dest.kind === 'front-ready') {
      void frontReadiness(options, res);
    } else if (dest.kind === 'none') {
      sendError(res, 404, 'not_found', `No route for ${req.method} ${(req.url ?? '/').split('?')[0]}`);
    } else {
      const base = options.target(dest.service);
      if (!base) sendError(res, 502, 'unavailable', `${dest.service} is not running`);
      else
        forward(req, res, {
          agent,
          base,
          path: dest.path,
          service: dest.service,
          prefix: dest.strippedPrefix,
          log: options.log,
          client: clientAddress(req, options.trustProxy),
        });
    }
  });
  // Node's default keeps an idle client connection 5 s: a client (a browser, a test's request
  // context) that reuses it just as it closes gets ECONNRESET, and a page can stay idle that long
  // easily. Keep it as long as the services do (fastify's default, 72 s), headers timeout above it.
  server.keepAliveTimeout = 72_000;
  server.headersTimeout = 75_000;
  server.on('close', () => agent.destroy());
  return server;
}

interface Hop {
  agent: http.Agent;
  base: string;
  path: string;
  service: string;
  prefix: string | undefined;
  log: Logger;
  /** The client's address (clientAddress). */
  client: string;
}

function forward(req: IncomingMessage, res: ServerResponse, hop: Hop): void {
  const target = new URL(hop.base);
  const upstream = http.request({
    protocol: target.protocol,
    hostname: target.hostname,
    port: target.port,
    method: req.method,
    path: hop.path,
    headers: forwardedHeaders(req, hop.prefix, hop.client),
    agent: hop.agent,
  });
  let bodyDropped = false;
  upstream.on('response', (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutHopByHop(answer.headers));
    // Headers go out now: an event stream's client must see the response before the first event.
    res.flushHeaders();
    answer.pipe(res);
    answer.on('error', () => res.destroy());
    // An early answer (a 413 for an oversized body) while the client is still sending: the backend
    // stops reading once it has answered, the pipe then waits for a drain that never comes, and the
    // client's keep-alive connection stalls (its next request is never read). So the front stops
    // forwarding, drops the backend's connection, and reads the rest of the body itself (at most
    // 64 MiB, then the connection is cut: the service kit's dropRestOfBody).
    answer.on('end', () => {
      if (req.complete) return;
      bodyDropped = true;
      req.unpipe(upstream);
      upstream.destroy();
      dropRestOfBody(req);
    });
  });
  upstream.on('error', (err) => {
    if (res.destroyed || bodyDropped) return; // the client left first, or we cut the backend off ourselves
    if (res.headersSent) {
      res.destroy(err);
      return;
    }
    hop.log.warn({ upstream: hop.service, err }, 'backend unreachable');
    sendError(res, 502, 'unavailable', `${hop.service} is unavailable`);
  });
  // A client that goes away (closing an event stream) must release the backend's connection too.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}

function forwardedHeaders(req: IncomingMessage, strippedPrefix: string | undefined, client: string): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = withoutHopByHop(req.headers);
  // Replaced, never appended to: the backends trust the front (loopback), so whatever a caller wrote
  // into X-Forwarded-For would otherwise become their idea of the client's address (login
  // throttling is per address). One entry: the address the front determined.
  headers['x-forwarded-for'] = client;
  // What this hop saw, not what the client claims: the front is the edge of the embedded start.
  headers['x-forwarded-proto'] = 'http';
  if (req.headers.host) headers['x-forwarded-host'] = req.headers.host;
  if (strippedPrefix) headers['x-forwarded-prefix'] = strippedPrefix;
  return headers;
}

function withoutHopByHop(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.includes(name)) out[name] = value;
  }
  return out;
}

/**
 * Every backend's answer to `probe`, all at once: 'up' (2xx), 'refused' (it answered otherwise) or
 * 'down' (not running, unreachable, or no answer within the timeout).
 */
async function probeAll(options: ProxyOptions, probe: '/healthz' | '/readyz'): Promise<(readonly [string, 'up' | 'refused' | 'down'])[]> {
  const timeout = options.healthTimeoutMs ?? 2_000;
  return Promise.all(
    options.services.map(async (name) => {
      const base = options.target(name);
      if (!base) return [name, 'down'] as const;
      try {
        const answer = await fetch(`${base}${probe}`, { signal: AbortSignal.timeout(timeout) });
        await answer.body?.cancel();
        return [name, answer.ok ? 'up' : 'refused'] as const;
      } catch {
        return [name, 'down'] as const;
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
