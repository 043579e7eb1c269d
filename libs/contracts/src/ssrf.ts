/**
 * The address half of the SSRF policy (docs/workflow-engine.md): which IP addresses an HTTP Request
 * node may not reach unless the operator allows them with SSRF_ALLOWLIST, and IP parsing that sees
 * *through* IPv6 forms embedding an IPv4 address (`::ffff:127.0.0.1` is judged as 127.0.0.1).
 *
 * Pure code, no Node modules: the SSRF guard applies it at connect time (libs/service-kit/src/outbound/ssrf.ts),
 * and the console's editor uses the same table to warn about a URL before it is ever run
 * (`privateUrlWarning`). Imported by the console as `@flowdesk/contracts/ssrf`, so the browser bundle
 * gets this file alone.
 */

export type IpBytes = Uint8Array; // 4 bytes (IPv4) or 16 bytes (IPv6)

export interface Cidr {
  bytes: IpBytes;
  bits: number;
  text: string;
}

// Node's own grammar for `net.isIP` (lib/internal/net.js), so this parser accepts exactly what the
// engine's sockets and DNS answers use: canonical dotted quads, every IPv6 text form, a zone id.
const V4_SEG = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
const V4 = `(?:${V4_SEG}\\.){3}${V4_SEG}`;
const V6_SEG = '(?:[0-9a-fA-F]{1,4})';
const IPV4 = new RegExp(`^${V4}$`);
const IPV6 = new RegExp(
  '^(?:' +
    `(?:${V6_SEG}:){7}(?:${V6_SEG}|:)|` +
    `(?:${V6_SEG}:){6}(?:${V4}|:${V6_SEG}|:)|` +
    `(?:${V6_SEG}:){5}(?::${V4}|(?::${V6_SEG}){1,2}|:)|` +
    `(?:${V6_SEG}:){4}(?:(?::${V6_SEG}){0,1}:${V4}|(?::${V6_SEG}){1,3}|:)|` +
    `(?:${V6_SEG}:){3}(?:(?::${V6_SEG}){0,2}:${V4}|(?::${V6_SEG}){1,4}|:)|` +
    `(?:${V6_SEG}:){2}(?:(?::${V6_SEG}){0,3}:${V4}|(?::${V6_SEG}){1,5}|:)|` +
    `(?:${V6_SEG}:){1}(?:(?::${V6_SEG}){0,4}:${V4}|(?::${V6_SEG}){1,6}|:)|` +
    `(?::(?:(?::${V6_SEG}){0,5}:${V4}|(?::${V6_SEG}){1,7}|:))` +
    ')(?:%[0-9a-zA-Z-.:]{1,})?$',
);

/** 4, 6 or 0, as Node's `net.isIP` answers. */
export function ipVersion(text: string): 0 | 4 | 6 {
  if (IPV4.test(text)) return 4;
  if (IPV6.test(text)) return 6;
  return 0;
}

/** Strips the brackets a URL puts around an IPv6 host. */
export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Parses a canonical IPv4 dotted quad or any IPv6 text form; null for anything else. */
export function parseIp(text: string): IpBytes | null {
  const host = unbracket(text);
  const kind = ipVersion(host);
  if (kind === 4) return Uint8Array.from(host.split('.').map(Number));
  if (kind === 6) return parseIpv6(host);
  return null;
}

function parseIpv6(text: string): IpBytes | null {
  // Zone ids (fe80::1%eth0) name an interface, not a different address.
  const host = text.split('%')[0] ?? '';
  const bytes = new Uint8Array(16);
  let groups: number[];
  const [head = '', tail] = host.split('::') as [string, string | undefined];
  const toGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const v4 = parseIp(piece);
        if (!v4 || v4.length !== 4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const left = toGroups(head);
  const right = tail === undefined ? [] : toGroups(tail);
  if (!left || !right) return null;
  if (tail === undefined) groups = left;
  else groups = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  if (groups.length !== 8) return null;
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  return bytes;
}

export function formatIp(bytes: IpBytes): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  // Compress the longest run of zero groups, as RFC 5952 does.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** Parses `10.0.0.0/8`, `fc00::/7`, or a bare address (a /32 or /128). Throws on bad input. */
export function parseCidr(text: string): Cidr {
  const [addr = '', bitsText] = text.split('/');
  const bytes = parseIp(addr);
  if (!bytes) throw new Error(`"${text}" is not an IP address or CIDR range`);
  const max = bytes.length * 8;
  const bits = bitsText === undefined ? max : Number(bitsText);
  if (!/^\d{1,3}$/.test(bitsText ?? String(max)) || bits > max) throw new Error(`"${text}" has an invalid prefix length`);
  return { bytes, bits, text };
}

export function inCidr(address: IpBytes, cidr: Cidr): boolean {
  if (address.length !== cidr.bytes.length) return false;
  let bits = cidr.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((address[i]! & mask) !== (cidr.bytes[i]! & mask)) return false;
  }
  return true;
}

// IPv6 prefixes whose last 32 bits (or, for 6to4, bits 16-48) carry an IPv4 address a gateway
// or the host's own stack will reach: judging the IPv6 form alone would let 127.0.0.1 through.
const EMBEDDING: Array<{ cidr: Cidr; offset: number; xor?: boolean }> = [
  { cidr: parseCidr('::ffff:0:0/96'), offset: 12 }, // IPv4-mapped
  { cidr: parseCidr('::/96'), offset: 12 }, // IPv4-compatible (deprecated, still routed by some stacks)
  { cidr: parseCidr('::ffff:0:0:0/96'), offset: 12 }, // SIIT IPv4-translated
  { cidr: parseCidr('64:ff9b::/96'), offset: 12 }, // NAT64 well-known prefix
  { cidr: parseCidr('64:ff9b:1::/48'), offset: 12 }, // NAT64 local-use prefix
  { cidr: parseCidr('2002::/16'), offset: 2 }, // 6to4
  { cidr: parseCidr('2001::/32'), offset: 12, xor: true }, // Teredo client, stored inverted
];

/** The IPv4 address an IPv6 address embeds, if it is one of the known embedding forms. */
export function embeddedIpv4(address: IpBytes): IpBytes | null {
  if (address.length !== 16) return null;
  for (const { cidr, offset, xor } of EMBEDDING) {
    if (!inCidr(address, cidr)) continue;
    const v4 = address.slice(offset, offset + 4);
    return xor ? v4.map((b) => b ^ 0xff) : v4;
  }
  return null;
}

const BLOCKED: Array<{ cidr: Cidr; what: string }> = [
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata)'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignment'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved or broadcast'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['fc00::/7', 'unique-local'],
  ['ff00::/8', 'multicast'],
  ['100::/64', 'discard-only'],
].map(([cidr, what]) => ({ cidr: parseCidr(cidr!), what: what! }));

/** Why an address is refused, or null when it is a public address. */
export function blockedReason(address: IpBytes): string | null {
  for (const { cidr, what } of BLOCKED) if (inCidr(address, cidr)) return what;
  const v4 = embeddedIpv4(address);
  if (v4) {
    const inner = blockedReason(v4);
    if (inner) return `${inner} (IPv4 ${formatIp(v4)} embedded in IPv6)`;
  }
  return null;
}

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
    if (entry.includes('/') || ipVersion(entry) !== 0) {
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

/** True when the operator named this host (any port) or this host:port. */
export function allowlistAllowsHost(allowlist: SsrfAllowlist, host: string, port: number): boolean {
  const h = canonicalHost(host);
  return allowlist.hosts.has(h) || allowlist.hosts.has(`${h}:${port}`);
}

/** True when an allowlisted range holds the address (or the IPv4 address it embeds). */
export function allowlistAllowsAddress(allowlist: SsrfAllowlist, address: IpBytes): boolean {
  const v4 = embeddedIpv4(address);
  return allowlist.cidrs.some((cidr) => inCidr(address, cidr) || (v4 !== null && inCidr(v4, cidr)));
}

/**
 * What the workflow editor says under an HTTP Request URL that the engine's SSRF guard will refuse
 * at run time unless the operator allows it: an IP literal in a blocked range, `localhost` (and
 * `*.localhost`), or null. Judged on the URL as written, before any template is filled in: a URL
 * whose host is a template (`{{trigger.url}}`) or does not parse is not judged here (the run judges
 * the address it resolves to). Host names that resolve to private addresses are only known at run time.
 * `allowlist`: the operator's SSRF_ALLOWLIST (parseAllowlist), which the console learns with the
 * session; a URL it opens gets no warning.
 */
export function privateUrlWarning(raw: string, allowlist: SsrfAllowlist = EMPTY_ALLOWLIST): string | null {
  const text = raw.trim();
  if (!/^https?:\/\//i.test(text)) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.hostname.includes('{') || url.hostname.includes('%7b')) return null;
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const port = url.port ? `:${url.port}` : '';
  const ip = parseIp(host);
  const what = host === 'localhost' || host.endsWith('.localhost') ? 'loopback' : ip ? blockedReason(ip) : null;
  if (!what) return null;
  // The operator's SSRF_ALLOWLIST already opens it (the guard's own test): nothing to warn about.
  const portNumber = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (allowlistAllowsHost(allowlist, url.hostname, portNumber) || (ip && allowlistAllowsAddress(allowlist, ip))) return null;
  return (
    `${url.hostname} is a ${what} address: the SSRF guard refuses it when the workflow runs, ` +
    `unless the operator allows it with SSRF_ALLOWLIST (e.g. SSRF_ALLOWLIST=${url.hostname}${port}, then restart Flowdesk).`
  );
}
