/**
 * IP address parsing and CIDR matching on raw bytes. Own code rather than net.BlockList because
 * the SSRF guard must see *through* IPv6 forms that embed an IPv4 address (mapped, compatible,
 * NAT64, 6to4, Teredo): `::ffff:127.0.0.1` must be judged as 127.0.0.1, which BlockList does not do.
 */
import { isIP } from 'node:net';

export type IpBytes = Uint8Array; // 4 bytes (IPv4) or 16 bytes (IPv6)

export interface Cidr {
  bytes: IpBytes;
  bits: number;
  text: string;
}

/** Strips the brackets a URL puts around an IPv6 host. */
export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Parses a canonical IPv4 dotted quad or any IPv6 text form; null for anything else. */
export function parseIp(text: string): IpBytes | null {
  const host = unbracket(text);
  const kind = isIP(host);
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
