/**
 * The HttpClient port over undici, with the SSRF guard applied where it cannot be bypassed:
 *  - at connect time, through a custom `lookup` that checks EVERY address DNS returns for the
 *    connection being opened (so a rebinding DNS that answered a public address to an earlier
 *    check cannot hand the socket a loopback one);
 *  - for IP-literal hosts, which never reach `lookup` (Node skips DNS for them), in the connector;
 *  - before each hop, including every redirect (followed here, by hand, at most 5), for a clear
 *    error before any socket is opened.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { findCause, NetworkError, RequestRefusedError, RequestTimeoutError, SsrfBlockedError } from './errors.ts';
import { isRedirect, nextHop, type Hop } from './redirect.ts';
import { screenUrl, SsrfPolicy } from './ssrf.ts';
import type { HttpClient, OutboundRequest, OutboundResponse } from './types.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** DNS port: every address of a name. Tests replace it to simulate rebinding. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: ResolveHost = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses: LookupAddress[]) => {
      if (err) reject(err);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

export interface GuardedHttpOptions {
  policy?: SsrfPolicy;
  resolve?: ResolveHost;
  /** TCP/TLS connect timeout; the overall timeout comes with each request. Default 10 s. */
  connectTimeoutMs?: number;
  /** Certificate authorities to trust instead of Node's bundle (PEM): a private CA, or a test's. */
  ca?: string;
}

export interface GuardedHttpClient extends HttpClient {
  close(): Promise<void>;
}

export function createGuardedHttpClient(options: GuardedHttpOptions = {}): GuardedHttpClient {
  const policy = options.policy ?? new SsrfPolicy();
  const resolve = options.resolve ?? systemResolve;
  const agent = new Agent({ connect: guardedConnector(policy, resolve, options.connectTimeoutMs ?? 10_000, options.ca) });

  async function screen(url: URL): Promise<void> {
    const target = screenUrl(url, policy);
    // Names are screened at connect time anyway; doing it here too gives the user a plain error
    // and guarantees no socket is even attempted towards a refused address.
    if (target.literal || policy.allowsHost(target.hostname, target.port)) return;
    for (const a of await resolveOrThrow(resolve, target.hostname)) policy.checkAddress(url.hostname, target.port, a.address);
  }

  async function send(request: OutboundRequest): Promise<OutboundResponse> {
    // Screened before the timer starts: a refused URL must not leave a timer behind.
    let hop: Hop = {
      url: screenUrl(request.url, policy).url,
      method: request.method,
      headers: request.headers,
      body: request.body,
      credentialHeaders: new Set((request.credentialHeaders ?? []).map((h) => h.toLowerCase())),
      ...(request.credentialIn?.length ? { credentialIn: request.credentialIn } : {}),
    };
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new RequestTimeoutError(`no complete response within ${request.timeoutMs} ms`)), request.timeoutMs);
    const signal = request.signal ? AbortSignal.any([timeout.signal, request.signal]) : timeout.signal;
    try {
      for (let redirects = 0; ; redirects++) {
        await screen(hop.url);
        const res = await agent.request({
          origin: hop.url.origin,
          path: `${hop.url.pathname}${hop.url.search}`,
          method: hop.method,
          headers: hop.headers,
          body: hop.body,
          signal,
          headersTimeout: request.timeoutMs,
          bodyTimeout: request.timeoutMs,
        });
        const headers = flattenHeaders(res.headers);
        if (isRedirect(res.statusCode, headers.location)) {
          await res.body.dump();
          hop = nextHop(hop, res.statusCode, headers.location!, redirects);
          continue;
        }
        const { body, truncated } = await readCapped(res.body, request.maxBodyBytes);
        return { status: res.statusCode, headers, body, truncated, url: hop.url.href };
      }
    } catch (err) {
      throw translate(err, signal);
    } finally {
      clearTimeout(timer);
    }
  }

  return { send, close: () => agent.close() };
}

/**
 * An undici connector that judges the peer address before the socket connects. Allowlisted
 * host[:port] entries bypass address checks (the operator named them); literals are checked here
 * because Node performs no lookup for them; names go through the checking `lookup`.
 */
function guardedConnector(policy: SsrfPolicy, resolve: ResolveHost, timeout: number, ca: string | undefined): buildConnector.connector {
  const tls = ca === undefined ? {} : { ca };
  const direct = buildConnector({ timeout, ...tls });
  // The checking lookup needs the port (for host:port allowlist entries); one connector per port
  // keeps undici's TLS session cache useful.
  const byPort = new Map<number, buildConnector.connector>();
  return (opts, callback) => {
    const host = opts.hostname.replace(/^\[|\]$/g, '');
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    try {
      if (policy.allowsHost(host, port)) return direct(opts, callback);
      if (isIP(host)) {
        policy.checkAddress(opts.hostname, port, host);
        return direct(opts, callback);
      }
    } catch (err) {
      return callback(err as Error, null);
    }
    let checked = byPort.get(port);
    if (!checked) {
      checked = buildConnector({ timeout, ...tls, lookup: checkingLookup(policy, resolve, port) });
      byPort.set(port, checked);
    }
    return checked(opts, callback);
  };
}

function checkingLookup(policy: SsrfPolicy, resolve: ResolveHost, port: number): LookupFunction {
  return (hostname, options, callback) => {
    resolveOrThrow(resolve, hostname)
      .then((all) => {
        // Every address, not just the first: happy-eyeballs may connect to any of them.
        for (const a of all) policy.checkAddress(hostname, port, a.address);
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0) throw new NetworkError(`${hostname} has no IPv${options.family} address`);
        if (options.all) (callback as (e: null, a: LookupAddress[]) => void)(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      })
      .catch((err: NodeJS.ErrnoException) => callback(err, '', 0));
  };
}

/**
 * The SSRF guard for a connection that is not HTTP (a Send Email node's SMTP server), applied as the
 * HTTP client applies it: a host[:port] the allowlist names is reached by name; an IP literal is
 * checked as is; a name is resolved once and EVERY address checked. Answers where to connect: the
 * caller connects to the checked address itself (naming the host for TLS), so DNS cannot hand the
 * socket another address between the check and the connect.
 */
export async function guardedAddress(host: string, port: number, policy: SsrfPolicy, resolve: ResolveHost = systemResolve): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (policy.allowsHost(bare, port)) return bare;
  if (isIP(bare)) {
    policy.checkAddress(host, port, bare);
    return bare;
  }
  const all = await resolveOrThrow(resolve, bare);
  for (const a of all) policy.checkAddress(bare, port, a.address);
  return all[0]!.address;
}

async function resolveOrThrow(resolve: ResolveHost, hostname: string): Promise<ResolvedAddress[]> {
  let all: ResolvedAddress[];
  try {
    all = await resolve(hostname);
  } catch (err) {
    throw new NetworkError(`could not resolve ${hostname}: ${(err as Error).message}`);
  }
  if (all.length === 0) throw new NetworkError(`could not resolve ${hostname}: no address`);
  return all;
}

/** Reads at most `max` bytes, then destroys the stream: a huge answer is never buffered. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, max: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size + chunk.length > max) {
      chunks.push(chunk.subarray(0, max - size));
      size = max;
      body.destroy();
      return { body: new Uint8Array(Buffer.concat(chunks, size)), truncated: true };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { body: new Uint8Array(Buffer.concat(chunks, size)), truncated: false };
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Maps whatever undici or the lookup threw onto the domain's errors. */
function translate(err: unknown, signal: AbortSignal): Error {
  const known = findCause(err, SsrfBlockedError) ?? findCause(err, RequestRefusedError) ?? findCause(err, RequestTimeoutError);
  if (known) return known;
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    return reason instanceof Error ? reason : new NetworkError('request aborted');
  }
  const network = findCause(err, NetworkError);
  if (network) return network;
  const e = err as Error & { code?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (code === 'UND_ERR_INVALID_ARG') return new RequestRefusedError(`invalid request: ${e.message}`);
  return new NetworkError(`${e.message || 'network error'}${code ? ` (${code})` : ''}`);
}
