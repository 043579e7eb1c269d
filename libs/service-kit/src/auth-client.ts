import { counter } from '@flowdesk/telemetry';
import { createHash } from 'node:crypto';
import { Pool } from 'undici';
import { ACCESS_TOKEN_TYPE, Audience, TOKEN_EXCHANGE_GRANT, type Introspection, type TokenExchangeResponse } from '@flowdesk/contracts';

/** Who is behind a bearer credential, as introspection told us. */
export interface Principal {
  userId: string;
  /** The API key id, OAuth client id or console session id: what the credential is, beyond its user. */
  credentialId: string;
  scope: string;
  /** Introspection's token_type: api_key, access_token (OAuth), console_session. */
  tokenType?: string;
}

export interface AuthClientOptions {
  /** Base URL of the auth service. */
  url: string;
  /** This service's id and secret at auth (HTTP Basic). */
  clientId: string;
  clientSecret: string;
  now: () => Date;
  /**
   * This gateway's resource (the exact MCP URL, RFC 8707/9728). An OAuth access token is accepted
   * only if it was issued for it (introspection's `aud`); API keys carry no audience.
   */
  resource: string;
  /**
   * How long an "active" introspection answer is reused: also how long a revoked key keeps working
   * here. 30 s keeps the per-call cost off the hot path and revocation effective within seconds.
   */
  activeTtlMs?: number;
  /** "Not active" answers are reused briefly too, so a client retrying a bad key costs auth nothing. */
  inactiveTtlMs?: number;
  /**
   * Credentials without an audience that are accepted whatever `resource` is (introspection's
   * token_type). Default: API keys only; the console's edge also accepts its own sessions.
   */
  audienceFreeTypes?: readonly string[];
}

export class AuthUnavailableError extends Error {}
/** The exchange refused the credential (revoked between introspection and exchange). */
export class CredentialRejectedError extends Error {}

const MAX_ENTRIES = 10_000;

/** Hit rate = hit / (hit + miss); `service` is the calling service's own client id (docs/observability.md). */
const introspections = counter<'service' | 'result'>({
  name: 'flowdesk_auth_introspection_cache_total',
  help: 'Token introspections answered from the cache (hit) or asked of auth (miss), by calling service',
  labelNames: ['service', 'result'],
});
/** Internal tokens are renewed this long before they expire, so a retried upstream call still fits. */
const EXCHANGE_MARGIN_MS = 60_000;

/** `Basic base64(id:secret)` with both parts form-encoded (RFC 6749 §2.3.1): a service's credential at auth. */
export const basicAuthorization = (clientId: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/**
 * Introspection and token exchange at the auth service, with small caches keyed by a hash of the
 * credential (the credential itself is never kept as a key, logged or sent anywhere but auth).
 */
export class AuthClient {
  private readonly pool: Pool;
  private readonly basic: string;
  private readonly introspected = new Map<string, { principal: Principal | null; until: number }>();
  private readonly exchanged = new Map<string, { token: string; until: number; principal: Principal | null }>();
  /** Tokens for the workflow engine's runs API (audience workflow-engine), same keys and rules. */
  private readonly exchangedForEngine = new Map<string, { token: string; until: number; principal: Principal | null }>();
  /**
   * Bumped by every eviction. An introspection or exchange that was in flight while a revocation was
   * evicted may carry the answer from before it: such an answer is used for its request, not cached.
   */
  private generation = 0;
  private readonly activeTtl: number;
  private readonly inactiveTtl: number;

  constructor(private readonly opts: AuthClientOptions) {
    this.pool = new Pool(opts.url, { connections: 16, keepAliveTimeout: 30_000, headersTimeout: 5_000, bodyTimeout: 5_000 });
    this.basic = basicAuthorization(opts.clientId, opts.clientSecret);
    this.activeTtl = opts.activeTtlMs ?? 30_000;
    this.inactiveTtl = opts.inactiveTtlMs ?? 5_000;
  }

  /** The principal behind a bearer credential, or null when it is not a working one. */
  async introspect(token: string): Promise<Principal | null> {
    const key = hash(token);
    const now = this.opts.now().getTime();
    const hit = this.introspected.get(key);
    if (hit && hit.until > now) {
      introspections.inc({ service: this.opts.clientId, result: 'hit' });
      return hit.principal;
    }
    introspections.inc({ service: this.opts.clientId, result: 'miss' });
    const generation = this.generation;
    const res = await this.form('/oauth/introspect', { token });
    if (res.status !== 200) throw new AuthUnavailableError(`introspection answered ${res.status}`);
    const body = res.body as Introspection;
    // MCP authorization: a token minted for another resource must never be accepted here (confused deputy).
    const forUs = body.active && ((this.opts.audienceFreeTypes ?? ['api_key']).includes(body.token_type) || body.aud === this.opts.resource);
    const principal = body.active && forUs ? { userId: body.sub, credentialId: body.client_id, scope: body.scope, tokenType: body.token_type } : null;
    // An OAuth access token may expire before the cache entry would: never trust it past its exp.
    const exp = body.active && body.exp ? body.exp * 1000 : Infinity;
    if (generation === this.generation)
      remember(this.introspected, key, { principal, until: Math.min(now + (principal ? this.activeTtl : this.inactiveTtl), exp) });
    return principal;
  }

  /**
   * An internal JWT for workspace-api (or, with `audience`, the workflow engine) acting as the
   * credential's user (RFC 8693), cached until shortly before expiry.
   */
  async internalToken(token: string, audience: string = Audience.workspaceApi): Promise<string> {
    const key = hash(token);
    const now = this.opts.now().getTime();
    const cache = audience === Audience.workflowEngine ? this.exchangedForEngine : this.exchanged;
    const hit = cache.get(key);
    if (hit && hit.until > now) return hit.token;
    const generation = this.generation;
    const res = await this.form('/oauth/token', {
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: token,
      subject_token_type: ACCESS_TOKEN_TYPE,
      audience,
    });
    if (res.status === 400) throw new CredentialRejectedError('The credential is no longer valid');
    if (res.status !== 200) throw new AuthUnavailableError(`token exchange answered ${res.status}`);
    const body = res.body as TokenExchangeResponse;
    if (generation === this.generation) {
      // Who it is for, so an eviction by user × credential finds it even if its introspection entry is gone.
      const principal = this.introspected.get(key)?.principal ?? null;
      remember(cache, key, { token: body.access_token, until: now + body.expires_in * 1000 - EXCHANGE_MARGIN_MS, principal });
    }
    return body.access_token;
  }

  /** Drops what is cached for a credential (after the exchange refused it). */
  forget(token: string): void {
    const key = hash(token);
    this.introspected.delete(key);
    this.exchanged.delete(key);
    this.exchangedForEngine.delete(key);
  }

  /**
   * Drops everything cached for revoked credentials (a CredentialRevoked event): the listed token
   * hashes, or else every token of `userId` whose introspection named `credentialId` as its client_id
   * (one API key; every token of one OAuth grant). Synchronous, so it is done when the handler returns.
   * Returns how many cache entries went.
   */
  evict(target: { userId: string; credentialId: string; tokenSha256?: readonly string[] }): number {
    this.generation++;
    let dropped = 0;
    if (target.tokenSha256) {
      for (const key of target.tokenSha256)
        dropped += Number(this.introspected.delete(key)) + Number(this.exchanged.delete(key)) + Number(this.exchangedForEngine.delete(key));
      return dropped;
    }
    const matches = (p: Principal | null) => p !== null && p.userId === target.userId && p.credentialId === target.credentialId;
    for (const map of [this.introspected, this.exchanged, this.exchangedForEngine] as Map<string, { principal: Principal | null }>[]) {
      for (const [key, entry] of map) {
        if (matches(entry.principal)) {
          map.delete(key);
          dropped++;
        }
      }
    }
    return dropped;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /**
   * MCP step-up (docs/auth.md): tell auth that this OAuth access token was refused for lacking
   * `scope`, so the grant's next refresh sends the client to a new authorization. Best effort: the
   * 403 goes out whatever auth answers.
   */
  async requestStepUp(token: string, scope: string): Promise<boolean> {
    const res = await this.form('/oauth/step-up', { token, scope });
    if (res.status !== 200) throw new AuthUnavailableError(`step-up answered ${res.status}`);
    return (res.body as { recorded?: boolean }).recorded === true;
  }

  private async form(path: string, fields: Record<string, string>): Promise<{ status: number; body: unknown }> {
    try {
      const res = await this.pool.request({
        method: 'POST',
        path,
        headers: { authorization: this.basic, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams(fields).toString(),
      });
      const text = await res.body.text();
      return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
    } catch (err) {
      throw new AuthUnavailableError(`auth unreachable: ${(err as Error).message}`);
    }
  }
}

const hash = (token: string) => createHash('sha256').update(token).digest('base64url');

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  // Bounded: a flood of distinct bad keys must not grow memory without end. Oldest entries go first.
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value!);
  map.delete(key);
  map.set(key, value);
}
