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
import {
  allowlistAllowsAddress,
  allowlistAllowsHost,
  blockedReason,
  canonicalHost,
  EMPTY_ALLOWLIST,
  parseAllowlist,
  type SsrfAllowlist,
} from '@flowdesk/contracts/ssrf';
import { formatIp, parseIp, unbracket, type IpBytes } from './ip-address.ts';
import { RequestRefusedError, SsrfBlockedError } from './errors.ts';

// The blocked ranges and why (loopback, private, link-local …) live in libs/contracts, where the
// console's editor reads them too: one table for the warning and the refusal.
export { blockedReason };
// The allowlist's syntax and matching live there too: the editor's warning stays quiet for exactly
// what this policy lets through.
export { canonicalHost, EMPTY_ALLOWLIST, parseAllowlist, type SsrfAllowlist };

export class SsrfPolicy {
  constructor(readonly allowlist: SsrfAllowlist = EMPTY_ALLOWLIST) {}

  static fromEnv(env: Record<string, string | undefined>): SsrfPolicy {
    return new SsrfPolicy(parseAllowlist(env.SSRF_ALLOWLIST));
  }

  /** True when the operator named this host (any port) or this host:port. */
  allowsHost(host: string, port: number): boolean {
    return allowlistAllowsHost(this.allowlist, host, port);
  }

  /** True when an allowlisted range holds the address (or the IPv4 address it embeds). */
  allowsAddress(address: IpBytes): boolean {
    return allowlistAllowsAddress(this.allowlist, address);
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
