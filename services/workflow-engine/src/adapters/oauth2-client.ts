/**
 * The OAuth2 token endpoint as the engine calls it (docs/credentials.md, "OAuth2"): the authorization
 * code exchange (with the PKCE verifier), refreshes and the client credentials grant, each one POST
 * through the guarded HTTP client (the SSRF guard: a token URL on a private address is refused unless
 * SSRF_ALLOWLIST names it). The client authenticates with HTTP Basic when it has a secret
 * (client_secret_basic, RFC 6749 §2.3.1), else sends its id in the body (a public client).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { HttpClient } from '@flowdesk/service-kit';

/** What a token endpoint answered, kept sealed in the credential. */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** ISO; absent when the provider gave no expires_in. */
  expiresAt?: string;
}

/**
 * The provider refused the grant (RFC 6749 §5.2: invalid_grant, invalid_client…): a refresh token
 * refused this way will not work again, so the credential needs reconnecting.
 */
export class OAuth2RefusedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The token endpoint could not be reached or answered something that is no token (a retry may work). */
export class OAuth2UnavailableError extends Error {}

/** How long one token request may take; the largest answer read. */
export const OAUTH2_TOKEN_TIMEOUT_MS = 10_000;
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

export const pkceVerifier = (): string => randomBytes(32).toString('base64url');
export const pkceChallenge = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

export interface OAuth2ClientConfig {
  tokenUrl: string;
  clientId: string;
  clientSecret?: string;
  scopes?: string;
  audience?: string;
}

const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');

export class OAuth2Client {
  constructor(
    private readonly http: HttpClient,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  exchangeCode(c: OAuth2ClientConfig, code: string, verifier: string, redirectUri: string, signal?: AbortSignal): Promise<TokenSet> {
    return this.request(c, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }, signal);
  }

  refresh(c: OAuth2ClientConfig, refreshToken: string, signal?: AbortSignal): Promise<TokenSet> {
    return this.request(c, { grant_type: 'refresh_token', refresh_token: refreshToken }, signal);
  }

  clientCredentials(c: OAuth2ClientConfig, signal?: AbortSignal): Promise<TokenSet> {
    return this.request(
      c,
      { grant_type: 'client_credentials', ...(c.scopes ? { scope: c.scopes } : {}), ...(c.audience ? { audience: c.audience } : {}) },
      signal,
    );
  }

  private async request(c: OAuth2ClientConfig, params: Record<string, string>, signal?: AbortSignal): Promise<TokenSet> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    const body = { ...params };
    if (c.clientSecret) headers.authorization = `Basic ${Buffer.from(`${formEncode(c.clientId)}:${formEncode(c.clientSecret)}`).toString('base64')}`;
    else body.client_id = c.clientId;
    const sentAt = this.clock().getTime();
    let res;
    try {
      res = await this.http.send({
        method: 'POST',
        url: c.tokenUrl,
        headers,
        // The client's secret and the grant never follow a redirect to another origin.
        credentialHeaders: ['authorization'],
        credentialIn: ['the token request'],
        body: new URLSearchParams(body).toString(),
        timeoutMs: OAUTH2_TOKEN_TIMEOUT_MS,
        maxBodyBytes: MAX_TOKEN_ANSWER_BYTES,
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      throw new OAuth2UnavailableError(`the token URL could not be reached: ${(err as Error).message}`);
    }
    let answer: Record<string, unknown> = {};
    try {
      answer = JSON.parse(new TextDecoder().decode(res.body)) as Record<string, unknown>;
    } catch {
      // Not JSON: said below by status.
    }
    if (res.status >= 400) {
      const code = typeof answer.error === 'string' ? answer.error.slice(0, 100) : '';
      const why = typeof answer.error_description === 'string' ? `: ${answer.error_description.slice(0, 300)}` : '';
      // RFC 6749 §5.2: 400 (or 401 for invalid_client) with an error code is a refusal; anything else is the server's trouble.
      if (code && (res.status === 400 || res.status === 401)) throw new OAuth2RefusedError(code, `the provider refused it (${code}${why})`);
      throw new OAuth2UnavailableError(`the token URL answered HTTP ${res.status}${code ? ` (${code}${why})` : ''}`);
    }
    if (typeof answer.access_token !== 'string' || answer.access_token === '')
      throw new OAuth2UnavailableError(`the token URL answered HTTP ${res.status} without an access_token`);
    const expiresIn = Number(answer.expires_in);
    return {
      accessToken: answer.access_token,
      ...(typeof answer.refresh_token === 'string' && answer.refresh_token !== '' ? { refreshToken: answer.refresh_token } : {}),
      ...(Number.isFinite(expiresIn) && expiresIn > 0 ? { expiresAt: new Date(sentAt + expiresIn * 1000).toISOString() } : {}),
    };
  }
}
