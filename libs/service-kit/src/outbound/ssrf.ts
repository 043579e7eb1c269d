/**
 * The SSRF policy of outbound HTTP: which addresses a workflow may reach. ON by default: a
 * workflow author is not the operator, and without this guard an HTTP Request node could read
 * cloud metadata (169.254.169.254), the engine's own admin ports or anything on the private
 * network. The operator opens named targets with an allowlist (SSRF_ALLOWLIST).
 *
 * This module only decides; the client (guarded-http.ts) applies the decision to every
 * address DNS returns at connect time, to IP-literal hosts (no DNS lookup happens for them) and
 * to every redirect hop.
 */
import { isIP } from 'node:net';
import { blockedReason } from '@flowdesk/contracts/ssrf';
import { embeddedIpv4, formatIp, inCidr, parseCidr, parseIp, unbracket, type Cidr, type IpBytes } from './ip-address.ts';
import { RequestRefusedError, SsrfBlockedError } from './errors.ts';

// The blocked ranges and why (loopback, private, link-local …) live in libs/contracts, where the
// console's editor reads them too: one table for the warning and the refusal.
export { blockedReason };

export interface SsrfAllowlist {
  /** Lower-cased host names and canonical IP literals, optionally as `host:port`. */
  hosts: ReadonlySet<string>;
  /** Address ranges; a bare IP in the configuration is a /32 or /128 range. */
  cidrs: readonly Cidr[];
}

export const EMPTY_ALLOWLIST: SsrfAllowlist = { hosts: new Set(), cidrs: [] };

/**
 * Parses the operator's allowlist, comma or whitespace separated:
 * `api.internal` (that host on any port), `localhost:8080` / `[::1]:8080` (one port),
 * `10.1.0.0/16` / `fd00::/8` (a range), `10.1.2.3` (one address). Throws on a malformed entry so a
 * typo fails at start-up rather than silently opening or closing something.
 */
export function parseAllowlist(text: string | undefined): SsrfAllowlist {
  const hosts = new Set<string>();
  const cidrs: Cidr[] = [];
  for (const raw of (text ?? '').split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry.includes('/') || isIP(entry)) {
      cidrs.push(parseCidr(entry));
      continue;
    }
    const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
    if (!m || (m[2] !== undefined && (Number(m[2]) < 1 || Number(m[2]) > 65535))) {
      throw new Error(`SSRF allowlist entry "${raw}" is not a host, host:port, IP or CIDR`);
    }
    const host = canonicalHost(m[1]!);
    if (m[2] === undefined && parseIp(host)) cidrs.push(parseCidr(unbracket(host)));
    else hosts.add(m[2] === undefined ? host : `${host}:${Number(m[2])}`);
  }
  return { hosts, cidrs };
}

/** Lower-case, no trailing dot, IPv6 literals in canonical bracketed form. */
export function canonicalHost(host: string): string {
  const h = host.toLowerCase().replace(/\.$/, '');
  const ip = parseIp(h);
  if (ip && ip.length === 16) return `[${formatIp(ip)}]`;
  return ip ? formatIp(ip) : h;
}

export class SsrfPolicy {
  constructor(readonly allowlist: SsrfAllowlist = EMPTY_ALLOWLIST) {}

  static fromEnv(env: Record<string, string | undefined>): SsrfPolicy {
    return new SsrfPolicy(parseAllowlist(env.SSRF_ALLOWLIST));
  }

  /** True when the operator named this host (any port) or this host:port. */
  allowsHost(host: string, port: number): boolean {
    const h = canonicalHost(host);
    return this.allowlist.hosts.has(h) || this.allowlist.hosts.has(`${h}:${port}`);
  }

  /** True when an allowlisted range holds the address (or the IPv4 address it embeds). */
  allowsAddress(address: IpBytes): boolean {
    const v4 = embeddedIpv4(address);
    return this.allowlist.cidrs.some((c) => inCidr(address, c) || (v4 !== null && inCidr(v4, c)));
  }

  /**
   * Throws SsrfBlockedError unless `address` may be reached for `host:port`. `host` is what the
   * URL named, for the message and for host allowlist entries.
   */
  checkAddress(host: string, port: number, address: string): void {
    if (this.allowsHost(host, port)) return;
    const bytes = parseIp(address);
    if (!bytes) throw new SsrfBlockedError(`request to ${host} refused: "${address}" is not an IP address`);
    if (this.allowsAddress(bytes)) return;
    const reason = blockedReason(bytes);
    if (!reason) return;
    const shown = formatIp(bytes);
    const literal = parseIp(unbracket(host)) !== null;
    const target = literal ? `${shown} is` : `${host} resolves to ${shown},`;
    throw new SsrfBlockedError(
      `request to ${host} refused by the SSRF guard: ${target} a ${reason} address. ` + 'An operator can allow it with SSRF_ALLOWLIST.',
    );
  }
}

export const ALLOWED_SCHEMES = new Set(['http:', 'https:']);

export interface HttpTarget {
  url: URL;
  /** The host without IPv6 brackets, as a socket would use it. */
  hostname: string;
  port: number;
  /** Set when the host is an IP literal: no DNS lookup will happen, so it is checked here. */
  literal: string | null;
}

/**
 * Parses and screens a URL before any connection: http/https only, no credentials smuggled in
 * the authority, and IP-literal hosts judged now. The WHATWG parser has already normalised
 * `2130706433`, `0177.0.0.1`, `127.1` and `0x7f.1` to 127.0.0.1, so they meet the same check.
 */
export function screenUrl(raw: string | URL, policy: SsrfPolicy): HttpTarget {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new RequestRefusedError(`"${String(raw).slice(0, 200)}" is not a valid absolute URL`);
  }
  if (!ALLOWED_SCHEMES.has(url.protocol)) {
    throw new RequestRefusedError(`URL scheme "${url.protocol}" is not allowed (only http and https)`);
  }
  const hostname = unbracket(url.hostname);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const literal = parseIp(hostname) ? hostname : null;
  if (literal) policy.checkAddress(url.hostname, port, literal);
  return { url, hostname, port, literal };
}
