/**
 * What to do with a 3xx answer. Redirects are followed by hand (never by undici) so that each
 * hop goes through the SSRF screen again: a public URL answering `302 Location: http://127.0.0.1/`
 * is the classic way round a guard that only checks the first URL.
 */
import { RequestRefusedError } from './errors.ts';
import { SECRET_HEADER_NAME } from '@flowdesk/contracts';
import { ALLOWED_SCHEMES } from './ssrf.ts';
import type { HttpMethod } from './types.ts';

export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Credentials meant for one origin must not be handed to the next (browsers, undici and curl drop
// Authorization; we go further). Dropped on a cross-origin hop: Authorization, Cookie,
// Proxy-Authorization, every secret-looking name (the masking rule: *token*, *secret*, *-key,
// api-key, *signature*, *session*, *credential*, password) and anything with "key" or "auth" in it
// (X-Key-Id, X-Auth). Headers whose value came from a credential are dropped whatever their name.
const ORIGIN_BOUND_NAME = /key|auth|sig/i;

/** Whether a header must not follow a redirect that leaves the origin (by its name alone). */
export function isOriginBoundHeader(name: string): boolean {
  return SECRET_HEADER_NAME.test(name) || ORIGIN_BOUND_NAME.test(name);
}

export interface Hop {
  url: URL;
  method: HttpMethod;
  headers: Record<string, string>;
  body: string | undefined;
  /** Lower-cased names of headers carrying a credential: sent to the first origin only. */
  credentialHeaders?: ReadonlySet<string>;
  /** Where the request carries a credential (OutboundRequest.credentialIn). */
  credentialIn?: readonly string[];
}

export function isRedirect(status: number, location: string | undefined): boolean {
  return REDIRECT_STATUSES.has(status) && !!location;
}

/** The next hop for a redirect answer; throws when the target or the count is not acceptable. */
export function nextHop(current: Hop, status: number, location: string, hopsSoFar: number): Hop {
  if (hopsSoFar >= MAX_REDIRECTS) throw new RequestRefusedError(`too many redirects (more than ${MAX_REDIRECTS})`);
  let url: URL;
  try {
    url = new URL(location, current.url);
  } catch {
    throw new RequestRefusedError(`redirect to an invalid URL "${location.slice(0, 200)}"`);
  }
  if (!ALLOWED_SCHEMES.has(url.protocol)) {
    throw new RequestRefusedError(`redirect to scheme "${url.protocol}" refused (only http and https)`);
  }
  // 303 always, and 301/302 after POST, become a GET without body (what every client does).
  const toGet = status === 303 || ((status === 301 || status === 302) && current.method === 'POST');
  const sameOrigin = url.origin === current.url.origin;
  // A 307/308 repeats the request as it was (method, body, and a URL the first origin may have built
  // from it): headers can be dropped, a credential in the body or the query cannot. Such a hop to
  // another origin is refused rather than followed with the credential in it; so is any other hop
  // that keeps a body carrying one (a PUT answered 301/302).
  const credentialIn = current.credentialIn ?? [];
  if (!sameOrigin && credentialIn.length > 0 && (status === 307 || status === 308 || (!toGet && credentialIn.includes('the body')))) {
    throw new RequestRefusedError(
      `redirect ${status} from ${current.url.origin} to another origin (${url.origin}) not followed: the request carries a credential in ${credentialIn.join(', ')}`,
    );
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(current.headers)) {
    const name = k.toLowerCase();
    if (!sameOrigin && (isOriginBoundHeader(name) || current.credentialHeaders?.has(name))) continue;
    if (toGet && (name === 'content-type' || name === 'content-length')) continue;
    headers[k] = v;
  }
  return {
    url,
    method: toGet ? 'GET' : current.method,
    headers,
    body: toGet ? undefined : current.body,
    credentialHeaders: current.credentialHeaders,
    ...(current.credentialIn ? { credentialIn: current.credentialIn } : {}),
  };
}
