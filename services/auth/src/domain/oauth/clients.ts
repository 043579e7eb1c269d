import type { PrismaClient } from '../../generated/prisma/client.ts';
import { OAuthError } from '../oauth-error.ts';
import { parseBasicAuth } from '../service-clients.ts';
import { hashSecret, newSecret, sameDigest } from './secrets.ts';

export type ClientAuthMethod = 'none' | 'client_secret_basic';
export const CLIENT_AUTH_METHODS: readonly ClientAuthMethod[] = ['none', 'client_secret_basic'];
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

export interface OAuthClient {
  id: string;
  name: string;
  redirectUris: string[];
  grantTypes: string[];
  tokenEndpointAuthMethod: ClientAuthMethod;
  /** Set for a client identified by a Client ID Metadata Document: the URL, which is its client_id (client-metadata.ts). */
  metadataUrl?: string;
  /** The document's https logo, for the consent page. */
  logoUri?: string | null;
}

/** RFC 7591 §3.2.2 error (400). */
const invalidMetadata = (description: string) => new OAuthError(400, 'invalid_client_metadata', description);
const invalidRedirect = (description: string) => new OAuthError(400, 'invalid_redirect_uri', description);

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/**
 * RFC 8252 §7.1: a private-use scheme is a domain name the app controls, reversed
 * (`com.example.app`): at least two dot-separated labels. A scheme without a dot is refused, which
 * keeps out `javascript:`, `data:`, `file:`, `view-source:`, `blob:`, `chrome-extension:` and every
 * other browser-internal scheme, whatever the browser adds next.
 */
const REVERSE_DOMAIN_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)+:$/;

/**
 * RFC 9700 §2.1 / RFC 8252 §7: https anywhere; http only on a loopback host (a native app listening
 * locally); or a reverse-domain private-use scheme (`com.example.app:/callback`) handled by an app.
 * No fragment (RFC 6749 §3.1.2), no credentials in the URL. Matching later is exact string equality.
 */
export function checkRedirectUri(uri: unknown): string {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > 2000) throw invalidRedirect('redirect_uris must be non-empty strings');
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw invalidRedirect(`${uri} is not an absolute URI`);
  }
  if (url.hash || uri.includes('#')) throw invalidRedirect(`${uri} must not contain a fragment`);
  if (url.username || url.password) throw invalidRedirect(`${uri} must not contain credentials`);
  if (url.protocol === 'https:') return uri;
  if (url.protocol === 'http:') {
    if (LOOPBACK_HOSTS.has(url.hostname)) return uri;
    throw invalidRedirect(`${uri}: http is only allowed on a loopback host (127.0.0.1, [::1], localhost); use https`);
  }
  if (REVERSE_DOMAIN_SCHEME.test(url.protocol)) return uri;
  throw invalidRedirect(
    `${uri}: the ${url.protocol} scheme is not allowed; use https, http on a loopback host, or a reverse-domain private-use scheme such as com.example.app:/callback (RFC 8252 §7.1)`,
  );
}

export interface RegistrationRequest {
  redirect_uris?: unknown;
  client_name?: unknown;
  grant_types?: unknown;
  response_types?: unknown;
  token_endpoint_auth_method?: unknown;
  scope?: unknown;
}

export interface RegistrationResponse {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: ['code'];
  token_endpoint_auth_method: ClientAuthMethod;
  client_secret?: string;
  client_secret_expires_at?: 0;
}

/** RFC 7591 §3: validates the client metadata, stores the client, and returns its secret once (if any). */
export async function registerClient(prisma: PrismaClient, req: RegistrationRequest, now: Date): Promise<RegistrationResponse> {
  if (!Array.isArray(req.redirect_uris) || req.redirect_uris.length === 0 || req.redirect_uris.length > 10) {
    throw invalidRedirect('redirect_uris must list 1 to 10 redirect URIs');
  }
  const redirectUris = [...new Set(req.redirect_uris.map(checkRedirectUri))];
  const name = req.client_name === undefined ? 'Unnamed client' : req.client_name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 100) throw invalidMetadata('client_name must be 1 to 100 characters');
  const grantTypes = req.grant_types === undefined ? [...GRANT_TYPES] : req.grant_types;
  if (!Array.isArray(grantTypes) || grantTypes.length === 0 || !grantTypes.every((g) => (GRANT_TYPES as readonly unknown[]).includes(g))) {
    throw invalidMetadata(`grant_types may only contain ${GRANT_TYPES.join(', ')} (no implicit, no password grant)`);
  }
  if (!grantTypes.includes('authorization_code')) throw invalidMetadata('grant_types must include authorization_code');
  if (req.response_types !== undefined && !(Array.isArray(req.response_types) && req.response_types.every((r) => r === 'code'))) {
    throw invalidMetadata('response_types may only contain code');
  }
  // RFC 7591 §2 makes client_secret_basic the default when nothing is said.
  const method = req.token_endpoint_auth_method ?? 'client_secret_basic';
  if (!CLIENT_AUTH_METHODS.includes(method as ClientAuthMethod)) {
    throw invalidMetadata(`token_endpoint_auth_method must be one of: ${CLIENT_AUTH_METHODS.join(', ')}`);
  }
  const secret = method === 'client_secret_basic' ? newSecret('clientSecret') : undefined;
  const row = await prisma.oAuthClient.create({
    data: {
      name: name.trim(),
      redirectUris,
      grantTypes: grantTypes as string[],
      tokenEndpointAuthMethod: method as string,
      secretHash: secret?.hash ?? null,
      createdAt: now,
    },
  });
  return {
    client_id: row.id,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_name: row.name,
    redirect_uris: row.redirectUris,
    grant_types: row.grantTypes,
    response_types: ['code'],
    token_endpoint_auth_method: method as ClientAuthMethod,
    ...(secret ? { client_secret: secret.value, client_secret_expires_at: 0 as const } : {}),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function findClient(prisma: PrismaClient, clientId: string | undefined): Promise<OAuthClient | null> {
  if (!clientId || !UUID.test(clientId)) return null;
  const row = await prisma.oAuthClient.findUnique({ where: { id: clientId } });
  return row && toClient(row);
}

export const toClient = (row: {
  id: string;
  name: string;
  redirectUris: string[];
  grantTypes: string[];
  tokenEndpointAuthMethod: string;
  metadataUrl: string | null;
  logoUri: string | null;
}): OAuthClient => ({
  id: row.id,
  name: row.name,
  redirectUris: row.redirectUris,
  grantTypes: row.grantTypes,
  tokenEndpointAuthMethod: row.tokenEndpointAuthMethod as ClientAuthMethod,
  ...(row.metadataUrl ? { metadataUrl: row.metadataUrl, logoUri: row.logoUri } : {}),
});

const clientAuthFailed = (why: string) =>
  new OAuthError(401, 'invalid_client', `Client authentication failed: ${why}`, { 'www-authenticate': 'Basic realm="flowdesk-oauth", charset="UTF-8"' });

/**
 * RFC 6749 §2.3 at the token and revocation endpoints: a public client names itself (`client_id`),
 * a confidential one authenticates with HTTP Basic. Each client uses the method it registered with.
 */
export async function authenticateClient(
  prisma: PrismaClient,
  authorization: string | undefined,
  body: Record<string, string | undefined>,
): Promise<OAuthClient> {
  const basic = parseBasicAuth(authorization);
  if (body.client_secret !== undefined) throw clientAuthFailed('client_secret_post is not supported; use HTTP Basic');
  const clientId = basic?.clientId ?? body.client_id;
  if (basic && body.client_id !== undefined && body.client_id !== basic.clientId) throw clientAuthFailed('client_id differs from the Basic credentials');
  // A client identified by its metadata document names itself by the URL; the row cached at authorize
  // time is used (the code it redeems was bound to a redirect_uri checked against the document then).
  const row = UUID.test(clientId ?? '')
    ? await prisma.oAuthClient.findUnique({ where: { id: clientId! } })
    : clientId?.startsWith('https://')
      ? await prisma.oAuthClient.findUnique({ where: { metadataUrl: clientId } })
      : null;
  if (!row) throw clientAuthFailed('unknown client');
  if (row.tokenEndpointAuthMethod === 'none') {
    if (basic) throw clientAuthFailed('this is a public client: send client_id, no secret');
    return toClient(row);
  }
  if (!basic || !row.secretHash || !sameDigest(hashSecret(basic.secret), row.secretHash)) throw clientAuthFailed('wrong or missing client secret');
  return toClient(row);
}
