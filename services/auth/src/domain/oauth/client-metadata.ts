/**
 * OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, as MCP 2025-11-25
 * uses them): a client_id that is an https URL names a JSON document the client publishes there. We
 * fetch it through the SSRF guard (size and time limits), validate it, and cache it in the client's
 * row (auth.oauth_client, keyed by the URL), so grants, codes and tokens work as for a registered client.
 */
import {
  createRateLimiter,
  findCause,
  NetworkError,
  RequestRefusedError,
  RequestTimeoutError,
  SsrfBlockedError,
  type HttpClient,
  type RateLimit,
} from '@flowdesk/service-kit';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import { checkRedirectUri, GRANT_TYPES, toClient, type OAuthClient } from './clients.ts';
import { OAuthError } from '../oauth-error.ts';

/** The limits and the cache bounds (docs/auth.md, "Client ID Metadata Documents"). */
export const CLIENT_METADATA_LIMITS = {
  /** Bytes of document read; a longer one is refused. */
  maxBytes: 5 * 1024,
  /** The whole fetch (connect, redirects, body). */
  timeoutMs: 5_000,
  /** Cache-Control max-age is honoured between these bounds; no max-age (or no-store/no-cache) means the minimum. */
  minCacheSeconds: 60,
  maxCacheSeconds: 24 * 3600,
  /** Without Cache-Control. */
  defaultCacheSeconds: 3600,
  maxRedirectUris: 10,
  /** A document that failed (fetch or validation) is not fetched again for this long: its failure is answered from memory. */
  failureCacheSeconds: 60,
  /** Failed documents remembered at most (per process); past that the oldest goes first. */
  maxRememberedFailures: 10_000,
} as const;

/** Document fetches per caller address (default 20 per 10 minutes, like dynamic registration). */
export const DEFAULT_CLIENT_METADATA_RATE_LIMIT: RateLimit = { max: 20, windowMs: 10 * 60_000 };

/** Why a document was refused: shown on the authorize error page, or as invalid_client at the token endpoint. */
export class ClientMetadataError extends Error {}

/** Over a fetch limit: no fetch was made; `retryAfterSeconds` says when one may be. */
export class ClientMetadataRateLimited extends ClientMetadataError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/**
 * What stands between an anonymous authorization request and a fetch of the document it names
 * (docs/auth.md, "Client ID Metadata Documents", limits): a counter per caller address and one over
 * all addresses (service-kit's fixed-window limiter, as dynamic registration uses), and a memory of
 * documents that failed, so a failing URL is fetched at most once a minute however often it is named.
 * In this process's memory: each replica counts and remembers on its own.
 */
export class MetadataFetchGate {
  private readonly perAddress;
  private readonly overall;
  private readonly failures = new Map<string, { message: string; until: number }>();

  constructor(limits: { perAddress: RateLimit; overall: RateLimit }, now: () => Date) {
    this.perAddress = createRateLimiter(limits.perAddress, now);
    this.overall = createRateLimiter(limits.overall, now);
  }

  /** Counts a fetch for `address`; throws ClientMetadataRateLimited (nothing is fetched) when over a limit. */
  admit(address: string): void {
    const wait = this.perAddress.hit(address);
    if (wait > 0) throw new ClientMetadataRateLimited(`Too many client metadata documents fetched for this address; try again in ${wait} s.`, wait);
    const busy = this.overall.hit('all');
    if (busy > 0) throw new ClientMetadataRateLimited(`Too many client metadata documents are being fetched right now; try again in ${busy} s.`, busy);
  }

  /** The remembered failure of this document, if it failed less than failureCacheSeconds ago. */
  failed(clientId: string, now: Date): string | undefined {
    const hit = this.failures.get(clientId);
    if (!hit) return undefined;
    if (hit.until <= now.getTime()) {
      this.failures.delete(clientId);
      return undefined;
    }
    return `${hit.message} (Remembered from a fetch less than ${CLIENT_METADATA_LIMITS.failureCacheSeconds} s ago; Flowdesk fetches it again in ${Math.ceil((hit.until - now.getTime()) / 1000)} s.)`;
  }

  remember(clientId: string, message: string, now: Date): void {
    if (this.failures.size >= CLIENT_METADATA_LIMITS.maxRememberedFailures && !this.failures.has(clientId)) {
      this.failures.delete(this.failures.keys().next().value!);
    }
    this.failures.delete(clientId);
    this.failures.set(clientId, { message, until: now.getTime() + CLIENT_METADATA_LIMITS.failureCacheSeconds * 1000 });
  }

  forget(clientId: string): void {
    this.failures.delete(clientId);
  }
}

/** True for a client_id that is a URL, so names a metadata document (checkMetadataUrl then insists on https), not a registered client's id. */
export const isMetadataUrl = (clientId: string | undefined): clientId is string => !!clientId && /^https?:\/\//i.test(clientId);

/**
 * The draft's rules for the URL itself (§3): https, a path, no fragment, no credentials, no dot
 * segments; we also refuse a query (the draft discourages it) so one client cannot mint endless ids.
 */
export function checkMetadataUrl(clientId: string): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new ClientMetadataError('The client_id is not a valid URL.');
  }
  if (url.protocol !== 'https:') throw new ClientMetadataError('A client_id URL must use https.');
  if (url.username || url.password) throw new ClientMetadataError('A client_id URL must not contain credentials.');
  if (clientId.includes('#')) throw new ClientMetadataError('A client_id URL must not contain a fragment.');
  if (url.search || clientId.includes('?')) throw new ClientMetadataError('A client_id URL must not contain a query.');
  if (url.pathname === '/' || url.pathname === '')
    throw new ClientMetadataError('A client_id URL must have a path (e.g. https://app.example/oauth/client.json).');
  if (/(^|\/)\.\.?(\/|$)/.test(clientId.slice(url.origin.length))) throw new ClientMetadataError('A client_id URL must not contain . or .. segments.');
  if (url.href !== clientId) throw new ClientMetadataError('A client_id URL must be in normal form (as a URL parser writes it back).');
  if (clientId.length > 2000) throw new ClientMetadataError('The client_id URL is too long.');
  return url;
}

/** Seconds to keep a document: Cache-Control's max-age within bounds. */
export function cacheSeconds(cacheControl: string | undefined): number {
  const { minCacheSeconds: min, maxCacheSeconds: max, defaultCacheSeconds } = CLIENT_METADATA_LIMITS;
  if (!cacheControl) return defaultCacheSeconds;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return min;
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)).find(Boolean);
  if (!maxAge) return defaultCacheSeconds;
  return Math.min(max, Math.max(min, Number(maxAge[1])));
}

export interface ClientMetadata {
  name: string;
  redirectUris: string[];
  grantTypes: string[];
  logoUri: string | null;
}

/** Fields that would make this a confidential client: a document is public, so they can never be in one. */
const SECRET_FIELDS = ['client_secret', 'client_secret_expires_at'];

/** Validates a parsed document against its URL (draft §4). Unknown fields are ignored (RFC 7591 §2). */
export function validateMetadata(clientId: string, doc: unknown): ClientMetadata {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ClientMetadataError('The client metadata document is not a JSON object.');
  const d = doc as Record<string, unknown>;
  if (d.client_id !== clientId) {
    throw new ClientMetadataError(`The client metadata document's client_id must be exactly its own URL (${clientId}).`);
  }
  for (const f of SECRET_FIELDS) if (f in d) throw new ClientMetadataError(`A client metadata document must not contain ${f}: it is public.`);
  const method = d.token_endpoint_auth_method ?? 'none';
  if (method !== 'none') {
    throw new ClientMetadataError('token_endpoint_auth_method must be none: a client identified by a metadata document has no shared secret (PKCE proves it).');
  }
  const uris = d.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > CLIENT_METADATA_LIMITS.maxRedirectUris) {
    throw new ClientMetadataError(`redirect_uris must list 1 to ${CLIENT_METADATA_LIMITS.maxRedirectUris} redirect URIs.`);
  }
  let redirectUris: string[];
  try {
    redirectUris = [...new Set(uris.map(checkRedirectUri))];
  } catch (err) {
    throw err instanceof OAuthError ? new ClientMetadataError(`redirect_uris: ${err.message}`) : err;
  }
  const grantTypes = d.grant_types ?? [...GRANT_TYPES];
  if (!Array.isArray(grantTypes) || !grantTypes.every((g) => (GRANT_TYPES as readonly unknown[]).includes(g)) || !grantTypes.includes('authorization_code')) {
    throw new ClientMetadataError(`grant_types must include authorization_code and may only contain ${GRANT_TYPES.join(', ')}.`);
  }
  if (d.response_types !== undefined && !(Array.isArray(d.response_types) && d.response_types.every((r) => r === 'code'))) {
    throw new ClientMetadataError('response_types may only contain code.');
  }
  const host = new URL(clientId).host;
  const name = d.client_name ?? host;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 100) throw new ClientMetadataError('client_name must be 1 to 100 characters.');
  return { name: name.trim(), redirectUris, grantTypes: grantTypes as string[], logoUri: checkLogoUri(d.logo_uri) };
}

/** https only (a consent page served over https shows no mixed content), no credentials; absent is fine (a fallback is shown). */
function checkLogoUri(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > 2000) throw new ClientMetadataError('logo_uri must be an https URL.');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ClientMetadataError('logo_uri must be an https URL.');
  }
  if (url.protocol !== 'https:' || url.username || url.password) throw new ClientMetadataError('logo_uri must be an https URL without credentials.');
  return url.href;
}

/** Fetches and validates a document; every failure is a ClientMetadataError with a message for people. */
export async function fetchMetadata(http: HttpClient, clientId: string): Promise<{ metadata: ClientMetadata; maxAgeSeconds: number }> {
  checkMetadataUrl(clientId);
  const { maxBytes, timeoutMs } = CLIENT_METADATA_LIMITS;
  let res;
  try {
    res = await http.send({ method: 'GET', url: clientId, headers: { accept: 'application/json' }, timeoutMs, maxBodyBytes: maxBytes });
  } catch (err) {
    const blocked = findCause(err, SsrfBlockedError);
    if (blocked) throw new ClientMetadataError(`The client metadata document cannot be fetched: its address is not public (${blocked.message})`);
    if (findCause(err, RequestTimeoutError)) throw new ClientMetadataError(`The client metadata document did not arrive within ${timeoutMs / 1000} s.`);
    const known = findCause(err, RequestRefusedError) ?? findCause(err, NetworkError);
    if (known) throw new ClientMetadataError(`The client metadata document cannot be fetched: ${known.message}`);
    throw err;
  }
  if (res.url !== clientId) throw new ClientMetadataError('The client metadata document must be served at its own URL, not through a redirect.');
  if (res.status !== 200) throw new ClientMetadataError(`The client metadata document's URL answered ${res.status}, not 200.`);
  if (res.truncated) throw new ClientMetadataError(`The client metadata document is larger than ${maxBytes / 1024} KB.`);
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(res.body).toString('utf8'));
  } catch {
    throw new ClientMetadataError('The client metadata document is not valid JSON.');
  }
  return { metadata: validateMetadata(clientId, doc), maxAgeSeconds: cacheSeconds(res.headers['cache-control']) };
}

/**
 * The client a document describes: from the cache while it is fresh, else fetched, validated and
 * stored again (an upsert keyed by the URL, so parallel first requests make one row). With a gate
 * (the authorize endpoint), a document that failed lately is refused from memory without a fetch,
 * and each fetch is counted for the caller's address first.
 */
export async function resolveMetadataClient(
  prisma: PrismaClient,
  http: HttpClient,
  clientId: string,
  now: Date,
  gate?: { gate: MetadataFetchGate; address: string },
): Promise<OAuthClient> {
  checkMetadataUrl(clientId);
  const cached = await prisma.oAuthClient.findUnique({ where: { metadataUrl: clientId } });
  if (cached && cached.metadataExpiresAt && cached.metadataExpiresAt > now) return toClient(cached);
  const failed = gate?.gate.failed(clientId, now);
  if (failed) throw new ClientMetadataError(failed);
  gate?.gate.admit(gate.address);
  let fetched;
  try {
    fetched = await fetchMetadata(http, clientId);
  } catch (err) {
    if (err instanceof ClientMetadataError) gate?.gate.remember(clientId, err.message, now);
    throw err;
  }
  gate?.gate.forget(clientId);
  const { metadata, maxAgeSeconds } = fetched;
  const fields = {
    name: metadata.name,
    redirectUris: metadata.redirectUris,
    grantTypes: metadata.grantTypes,
    logoUri: metadata.logoUri,
    metadataFetchedAt: now,
    metadataExpiresAt: new Date(now.getTime() + maxAgeSeconds * 1000),
  };
  const row = await prisma.oAuthClient.upsert({
    where: { metadataUrl: clientId },
    create: { ...fields, metadataUrl: clientId, tokenEndpointAuthMethod: 'none', createdAt: now },
    update: fields,
  });
  return toClient(row);
}
