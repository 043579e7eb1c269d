import { SCOPES } from '@flowdesk/contracts';
import { OAuthError } from '../oauth-error.ts';

/** Lifetimes of the OAuth artefacts (docs/auth.md explains each choice). */
export const AUTHORIZATION_CODE_TTL_SECONDS = 60;
/** Short: an access token is a bearer secret the gateway sees on every call. The refresh keeps clients going. */
export const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
/** Each rotation issues a fresh refresh token with this lifetime: a client idle for 30 days logs in again. */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;
/** A rotated refresh token presented again within this window gets the same new pair (two tabs, a retry after a lost answer). */
export const REFRESH_REUSE_GRACE_SECONDS = 5;
/**
 * MCP step-up: after the gateway refused a token for lacking a scope, a refresh of that grant within
 * this window is answered invalid_grant once (the client is stepping up: see requestStepUp). Later
 * refreshes, e.g. on the access token's expiry an hour on, work as usual.
 */
export const STEP_UP_WINDOW_SECONDS = 10 * 60;
/** How long the login + consent page stays usable. */
export const CONSENT_REQUEST_TTL_SECONDS = 10 * 60;
/** Wrong passwords allowed on one consent page before it has to be started over. */
export const MAX_FAILED_LOGINS = 5;

export const MCP_PATH = '/functions/v1/mcp-server-v2';

/** The one protected resource: the gateway's MCP endpoint, exactly as clients name it (RFC 8707 / RFC 9728). */
export const mcpResourceUrl = (publicBaseUrl: string) => `${publicBaseUrl}${MCP_PATH}`;

/**
 * A requested scope, normalised: `mcp:write` always travels with `mcp:read` (writes include reads).
 * `offline_access` is dropped (refresh tokens are always issued); any other unknown scope is refused.
 * No scope at all asks for everything the client may get; the user can approve less.
 */
export function normalizeRequestedScope(scope: string | undefined): string {
  const asked = (scope ?? '').split(/\s+/).filter((s) => s && s !== 'offline_access');
  if (scope === undefined || scope.trim() === '') return SCOPES.join(' ');
  const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0 || asked.length === 0)
    throw new OAuthError(400, 'invalid_scope', `Unknown scope: ${unknown.join(' ') || scope}. Supported: ${SCOPES.join(' ')}`);
  return spell(asked);
}

/** `mcp:read` or `mcp:read mcp:write`, the two grants that exist. */
export const spell = (scopes: readonly string[]): string => (scopes.includes('mcp:write') ? 'mcp:read mcp:write' : 'mcp:read');
