import type { PrismaClient } from '../../generated/prisma/client.ts';
import { OAuthError } from '../oauth-error.ts';
import type { HttpClient } from '@flowdesk/service-kit';
import { findClient, toClient, type OAuthClient } from './clients.ts';
import { ClientMetadataError, ClientMetadataRateLimited, isMetadataUrl, resolveMetadataClient, type MetadataFetchGate } from './client-metadata.ts';
import { upsertGrant } from './grants.ts';
import { AUTHORIZATION_CODE_TTL_SECONDS, CONSENT_REQUEST_TTL_SECONDS, MAX_FAILED_LOGINS, normalizeRequestedScope } from './policy.ts';
import { hashSecret, looksLike, newSecret, S256_CHALLENGE } from './secrets.ts';

/**
 * An authorization request that cannot be sent back to the client: unknown client, missing or
 * unregistered redirect_uri. RFC 6749 §4.1.2.1: shown to the user, never redirected (an open redirector otherwise).
 */
export class AuthorizePageError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** Extra answer headers (Retry-After of a 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** An error the client learns on its redirect_uri (RFC 6749 §4.1.2.1), with the state it sent. */
export class AuthorizeRedirectError extends Error {
  constructor(
    readonly redirectUri: string,
    readonly state: string | undefined,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

export interface AuthorizeQuery {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  resource?: string;
}

export interface ValidAuthorizeRequest {
  client: OAuthClient;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  resource: string;
  state: string | undefined;
}

/**
 * Checks an authorization request in the order RFC 6749 §4.1.2.1 needs: first whether we may redirect
 * at all (client and exact redirect_uri), then everything else as a redirect with `error`.
 */
export async function validateAuthorizeRequest(
  prisma: PrismaClient,
  q: AuthorizeQuery,
  mcpResource: string,
  metadata: { http: HttpClient; now: Date; gate?: { gate: MetadataFetchGate; address: string } },
): Promise<ValidAuthorizeRequest> {
  const client = isMetadataUrl(q.client_id) ? await metadataClient(prisma, metadata, q.client_id) : await findClient(prisma, q.client_id);
  if (!client)
    throw new AuthorizePageError(400, 'This application is not registered with Flowdesk (unknown client_id). Go back to the application and connect again.');
  if (!q.redirect_uri) throw new AuthorizePageError(400, 'The request has no redirect_uri, so Flowdesk cannot send you back to the application.');
  // Exact string comparison (RFC 9700 §2.1): no prefix, no wildcard, no normalisation.
  if (!client.redirectUris.includes(q.redirect_uri)) {
    throw new AuthorizePageError(400, 'The redirect_uri is not one this application registered, so Flowdesk will not send you there.');
  }
  const fail = (error: string, message: string) => new AuthorizeRedirectError(q.redirect_uri!, q.state, error, message);
  if (q.response_type !== 'code') throw fail('unsupported_response_type', 'Only response_type=code is supported');
  if (!client.grantTypes.includes('authorization_code')) throw fail('unauthorized_client', 'This client did not register the authorization_code grant');
  if (!q.code_challenge) throw fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256');
  // RFC 7636 §4.3: a missing method means plain, and plain is refused (RFC 9700 §2.1.1).
  if (q.code_challenge_method !== 'S256') throw fail('invalid_request', 'code_challenge_method must be S256 (plain is not supported)');
  if (!S256_CHALLENGE.test(q.code_challenge)) throw fail('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
  // RFC 8707: the token's audience. The MCP endpoint is the one resource we protect; clients that
  // do not name it (no protected resource metadata seen) get it by default.
  const resource = q.resource ?? mcpResource;
  if (resource !== mcpResource) throw fail('invalid_target', `resource must be ${mcpResource}`);
  let scope: string;
  try {
    scope = normalizeRequestedScope(q.scope);
  } catch (err) {
    throw err instanceof OAuthError ? fail(err.error, err.message) : err;
  }
  return { client, redirectUri: q.redirect_uri, codeChallenge: q.code_challenge, scope, resource, state: q.state };
}

/** A client_id that is an https URL: its metadata document (cached or fetched); a refused document is an error page. */
async function metadataClient(
  prisma: PrismaClient,
  metadata: { http: HttpClient; now: Date; gate?: { gate: MetadataFetchGate; address: string } },
  clientId: string,
): Promise<OAuthClient> {
  try {
    return await resolveMetadataClient(prisma, metadata.http, clientId, metadata.now, metadata.gate);
  } catch (err) {
    if (err instanceof ClientMetadataRateLimited) throw new AuthorizePageError(429, err.message, { 'retry-after': String(err.retryAfterSeconds) });
    if (err instanceof ClientMetadataError)
      throw new AuthorizePageError(400, `Flowdesk cannot use this application's client metadata document: ${err.message}`);
    throw err;
  }
}

export interface ConsentPage {
  /** The form's hidden single-use token. */
  csrfToken: string;
  /** The value of the cookie binding the form to this browser. */
  browserToken: string;
}

/** Stores a validated request until the user answers the login + consent page. */
export async function startConsent(prisma: PrismaClient, req: ValidAuthorizeRequest, now: Date, knownBrowser?: string): Promise<ConsentPage> {
  const csrf = newSecret('csrf');
  // A browser keeps its cookie across pages, so two tabs with two requests both work.
  const browser = knownBrowser ? { value: knownBrowser, hash: hashSecret(knownBrowser) } : newSecret('csrf');
  await prisma.oAuthConsentRequest.create({
    data: {
      clientId: req.client.id,
      redirectUri: req.redirectUri,
      codeChallenge: req.codeChallenge,
      scope: req.scope,
      resource: req.resource,
      state: req.state ?? null,
      csrfHash: csrf.hash,
      browserHash: browser.hash,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CONSENT_REQUEST_TTL_SECONDS * 1000),
    },
  });
  return { csrfToken: csrf.value, browserToken: browser.value };
}

export interface PendingConsent {
  id: string;
  client: OAuthClient;
  redirectUri: string;
  scope: string;
  state: string | undefined;
  failedLogins: number;
}

/**
 * The pending request behind a posted form, or an AuthorizePageError: the CSRF token must be one we
 * handed out, unused, unexpired, and posted from the browser that loaded the page (its cookie).
 */
export async function findConsent(prisma: PrismaClient, csrfToken: string | undefined, browserToken: string | undefined, now: Date): Promise<PendingConsent> {
  const stale = new AuthorizePageError(400, 'This sign-in page has expired or was already used. Go back to the application and connect again.');
  if (!looksLike('csrf', csrfToken)) throw stale;
  const row = await prisma.oAuthConsentRequest.findUnique({ where: { csrfHash: hashSecret(csrfToken) }, include: { client: true } });
  if (!row || row.completedAt || row.expiresAt <= now) throw stale;
  if (!looksLike('csrf', browserToken) || Buffer.compare(Buffer.from(hashSecret(browserToken)), Buffer.from(row.browserHash)) !== 0) {
    throw new AuthorizePageError(403, 'This form was not loaded in this browser (missing or wrong cookie). Go back to the application and connect again.');
  }
  return {
    id: row.id,
    client: toClient(row.client),
    redirectUri: row.redirectUri,
    scope: row.scope,
    state: row.state ?? undefined,
    failedLogins: row.failedLogins,
  };
}

/**
 * Spends the posted form token, atomically: it is replaced by a new one in one conditional update,
 * so of any number of parallel posts with one token exactly one goes on (to check a password,
 * approve or deny) and the others get the "already used" page. Returns the new token, which the page
 * carries if it is shown again.
 */
export async function claimConsent(prisma: PrismaClient, consent: PendingConsent, postedCsrf: string, now: Date): Promise<string> {
  const next = newSecret('csrf');
  const { count } = await prisma.oAuthConsentRequest.updateMany({
    where: { id: consent.id, csrfHash: hashSecret(postedCsrf), completedAt: null, expiresAt: { gt: now } },
    data: { csrfHash: next.hash },
  });
  if (count !== 1) throw new AuthorizePageError(400, 'This sign-in page was already used. Go back to the application and connect again.');
  return next.value;
}

/**
 * The page is shown again (wrong password, nothing ticked) with the token claimConsent issued. Too
 * many wrong passwords end the request.
 */
export async function reissueConsent(prisma: PrismaClient, consent: PendingConsent, failedLogin: boolean, now: Date): Promise<void> {
  if (!failedLogin) return;
  const failedLogins = consent.failedLogins + 1;
  if (failedLogins >= MAX_FAILED_LOGINS) {
    await prisma.oAuthConsentRequest.updateMany({ where: { id: consent.id }, data: { completedAt: now } });
    throw new AuthorizePageError(429, 'Too many failed sign-in attempts. Go back to the application and connect again.');
  }
  await prisma.oAuthConsentRequest.updateMany({ where: { id: consent.id, completedAt: null }, data: { failedLogins: { increment: 1 } } });
}

/** Ends the request once (Deny or Approve); false when another submission got there first. */
async function complete(prisma: PrismaClient | Parameters<Parameters<PrismaClient['$transaction']>[0]>[0], consentId: string, now: Date): Promise<boolean> {
  const { count } = await prisma.oAuthConsentRequest.updateMany({ where: { id: consentId, completedAt: null }, data: { completedAt: now } });
  return count === 1;
}

export async function denyConsent(prisma: PrismaClient, consent: PendingConsent, now: Date): Promise<void> {
  if (!(await complete(prisma, consent.id, now))) throw new AuthorizePageError(400, 'This sign-in page was already used.');
}

/**
 * The user approved `scope` (at most what was asked): records the grant and mints the code, bound to
 * the client, redirect_uri, PKCE challenge, scope, resource and user (through the grant).
 */
export async function approveConsent(prisma: PrismaClient, consent: PendingConsent, userId: string, scope: string, now: Date): Promise<string> {
  const code = newSecret('code');
  await prisma.$transaction(async (tx) => {
    if (!(await complete(tx, consent.id, now))) throw new AuthorizePageError(400, 'This sign-in page was already used.');
    const row = await tx.oAuthConsentRequest.findUniqueOrThrow({ where: { id: consent.id } });
    const grantId = await upsertGrant(tx, userId, consent.client.id, scope, now);
    await tx.oAuthAuthorizationCode.create({
      data: {
        codeHash: code.hash,
        grantId,
        clientId: consent.client.id,
        redirectUri: row.redirectUri,
        codeChallenge: row.codeChallenge,
        scope,
        resource: row.resource,
        createdAt: now,
        expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_SECONDS * 1000),
      },
    });
  });
  return code.value;
}
