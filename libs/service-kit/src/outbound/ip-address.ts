/**
 * IP address parsing and CIDR matching on raw bytes: libs/contracts' `ssrf` module (pure code, so the
 * console's editor judges URLs with the same table). Own code rather than net.BlockList because the
 * SSRF guard must see *through* IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64,
 * 6to4, Teredo): `::ffff:127.0.0.1` must be judged as 127.0.0.1, which BlockList does not do.
 */
export { embeddedIpv4, formatIp, inCidr, parseCidr, parseIp, unbracket, type Cidr, type IpBytes } from '@flowdesk/contracts/ssrf';
