// The plain-HTTP OAuth flow for tests; other packages import it as @flowdesk/auth/testing.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';

export interface OAuthTokens {
  clientId: string;
  access: string;
  refresh: string;
}

const REDIRECT = 'http://127.0.0.1:9/callback';

/**
 * The authorization code flow as plain HTTP against auth at `authUrl` (what a browser and a public
 * client do): register, load the consent page (keeping its cookie), approve with the user's password,
 * redeem the code with the PKCE verifier. `clientId` reuses a registered client (same grant).
 */
export async function obtainTokens(authUrl: string, user: { email: string; password: string }, clientId?: string): Promise<OAuthTokens> {
  const { fields } = await authorizationCode(authUrl, user, clientId);
  const token = await tokenRequest(authUrl, fields);
  assert.equal(token.status, 200, JSON.stringify(token.body));
  return { clientId: fields.client_id, access: token.body.access_token, refresh: token.body.refresh_token };
}

/** Up to the redirect with the code: returns the token request that redeems it. */
export async function authorizationCode(authUrl: string, user: { email: string; password: string }, clientId?: string) {
  const id = clientId ?? (await register(authUrl));
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: id,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 's',
    scope: 'mcp:read mcp:write',
  });
  const page = await fetch(`${authUrl}/oauth/authorize?${query.toString()}`, { redirect: 'manual' });
  const html = await page.text();
  assert.equal(page.status, 200, html);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  const cookie = page.headers.get('set-cookie')?.split(';')[0];
  assert.ok(csrf && cookie);
  const form = new URLSearchParams({ csrf_token: csrf, decision: 'approve', email: user.email, password: user.password });
  form.append('scope', 'mcp:read');
  form.append('scope', 'mcp:write');
  const approved = await fetch(`${authUrl}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: form,
  });
  assert.equal(approved.status, 302, await approved.text());
  const code = new URL(approved.headers.get('location')!).searchParams.get('code');
  assert.ok(code);
  return { code, fields: { grant_type: 'authorization_code', client_id: id, code, code_verifier: verifier, redirect_uri: REDIRECT } };
}

export async function register(authUrl: string): Promise<string> {
  const res = await fetch(`${authUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Revocation test client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  const body = (await res.json()) as { client_id: string };
  assert.equal(res.status, 201);
  return body.client_id;
}

/** A public client's form POST to /oauth/token or /oauth/revoke (no client authentication header). */
export async function tokenRequest(authUrl: string, fields: Record<string, string>, path = '/oauth/token'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${authUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export const sha256 = (token: string) => createHash('sha256').update(token).digest('base64url');
