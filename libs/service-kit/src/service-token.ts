import { TOKEN_EXCHANGE_GRANT, USER_ID_TOKEN_TYPE } from '@flowdesk/contracts';
import { basicAuthorization } from './auth-client.ts';

/**
 * A service's own internal token for calling another service as itself (`svc:<id>`): obtained from
 * the auth service with the OAuth client_credentials grant (HTTP Basic with the service's secret and
 * the target `audience`), cached until shortly before it expires, and shared by concurrent callers.
 */
export interface ServiceTokenSourceOptions {
  /** Base URL of the auth service (its /oauth/token). */
  authUrl: string;
  clientId: string;
  clientSecret: string;
  /** The service the token is for, e.g. workspace-api. */
  audience: string;
  /** Renew this long before expiry. Default 30 s. */
  renewBeforeMs?: number;
  now?: () => number;
}

export type ServiceTokenSource = () => Promise<string>;

export function serviceTokenSource(options: ServiceTokenSourceOptions): ServiceTokenSource {
  const now = options.now ?? Date.now;
  const renewBefore = options.renewBeforeMs ?? 30_000;
  const basic = basicAuthorization(options.clientId, options.clientSecret);
  let cached: { token: string; expiresAt: number } | undefined;
  let inflight: Promise<string> | undefined;

  const fetchToken = async (): Promise<string> => {
    const res = await fetch(new URL('/oauth/token', options.authUrl), {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', audience: options.audience }).toString(),
      signal: AbortSignal.timeout(5_000),
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number; error?: string };
    if (!res.ok || !body.access_token) throw new Error(`auth refused a service token for ${options.audience}: ${res.status} ${body.error ?? ''}`.trim());
    cached = { token: body.access_token, expiresAt: now() + (body.expires_in ?? 60) * 1000 };
    return body.access_token;
  };

  return async () => {
    if (cached && cached.expiresAt - renewBefore > now()) return cached.token;
    inflight ??= fetchToken().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
}

/**
 * An internal token for a given user, for a service that acts for users without holding their
 * credential (the workflow engine running a workflow as its owner): RFC 8693 token exchange by user
 * id, which the auth service allows only to the services configured for it. Cached per user.
 */
export type UserTokenSource = (userId: string) => Promise<string>;

export function userTokenSource(options: ServiceTokenSourceOptions & { maxUsers?: number }): UserTokenSource {
  const now = options.now ?? Date.now;
  const renewBefore = options.renewBeforeMs ?? 30_000;
  const basic = basicAuthorization(options.clientId, options.clientSecret);
  const cache = new Map<string, { token: string; expiresAt: number }>();
  const inflight = new Map<string, Promise<string>>();

  const fetchToken = async (userId: string): Promise<string> => {
    const res = await fetch(new URL('/oauth/token', options.authUrl), {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: TOKEN_EXCHANGE_GRANT,
        subject_token: userId,
        subject_token_type: USER_ID_TOKEN_TYPE,
        audience: options.audience,
      }).toString(),
      signal: AbortSignal.timeout(5_000),
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number; error?: string };
    if (!res.ok || !body.access_token) throw new Error(`auth refused a token for user ${userId}: ${res.status} ${body.error ?? ''}`.trim());
    if (cache.size >= (options.maxUsers ?? 10_000)) cache.clear();
    cache.set(userId, { token: body.access_token, expiresAt: now() + (body.expires_in ?? 60) * 1000 });
    return body.access_token;
  };

  return async (userId) => {
    const hit = cache.get(userId);
    if (hit && hit.expiresAt - renewBefore > now()) return hit.token;
    let pending = inflight.get(userId);
    if (!pending) {
      pending = fetchToken(userId).finally(() => inflight.delete(userId));
      inflight.set(userId, pending);
    }
    return pending;
  };
}
