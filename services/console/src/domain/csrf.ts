import { createHash } from 'node:crypto';
import { constantTimeEqual } from '@flowdesk/service-kit';

/**
 * The CSRF token of a console session: derived from the session token, so the edge keeps no state
 * for it and it changes with every sign-in. Only someone who can read the edge's answers to this
 * origin (GET /api/v1/session) learns it; a cross-site form or fetch cannot.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHash('sha256').update(`flowdesk-csrf:${sessionToken}`).digest('base64url');
}

export function csrfTokenMatches(sessionToken: string, given: string | undefined): boolean {
  if (!given) return false;
  return constantTimeEqual(csrfTokenFor(sessionToken), given);
}

/** Methods that change something: the ones that need the CSRF token and a same-origin request. */
export const isStateChanging = (method: string): boolean => !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());

export interface OriginHeaders {
  origin?: string | undefined;
  secFetchSite?: string | undefined;
  host?: string | undefined;
}

/**
 * A browser says where a request comes from (Sec-Fetch-Site, Origin). A write from another site is
 * refused whatever else it carries. Clients that send neither (curl, scripts) are not browsers:
 * they pass here and still need the CSRF token when they use the cookie.
 */
export function isCrossOrigin(h: OriginHeaders, allowedOrigins: ReadonlySet<string>): boolean {
  const site = h.secFetchSite?.toLowerCase();
  if (site && site !== 'same-origin' && site !== 'none') return true;
  if (!h.origin) return false;
  if (h.origin === 'null') return true;
  let origin: URL;
  try {
    origin = new URL(h.origin);
  } catch {
    return true;
  }
  if (allowedOrigins.has(origin.origin.toLowerCase())) return false;
  // The origin this request was addressed to (the Host the browser used), e.g. localhost vs 127.0.0.1.
  return !h.host || origin.host.toLowerCase() !== h.host.toLowerCase();
}
