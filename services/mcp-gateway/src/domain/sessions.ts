import { createHash, randomBytes } from 'node:crypto';

/** A session expires after one hour without a request (docs/mcp-gateway.md, "Sessions"). */
export const SESSION_IDLE_MS = 60 * 60 * 1000;
/**
 * A session opened without a token and never used with one (unbound) lives 5 minutes: enough for a
 * client to sign in and come back, too short for anonymous initializes to pile up rows.
 */
export const UNBOUND_SESSION_IDLE_MS = 5 * 60 * 1000;
/**
 * A request records its use (writes last_seen_at) only when the recorded use is older than this:
 * a write per request was the largest part of the gateway's per-call cost. The price is that the
 * recorded time may trail the real last use by up to this much, so a session idle for more than
 * SESSION_IDLE_MS − SESSION_TOUCH_INTERVAL_MS (59 min 30 s) may already be refused; it is never
 * accepted after SESSION_IDLE_MS idle (the check is always against the database, on every request).
 */
export const SESSION_TOUCH_INTERVAL_MS = 30 * 1000;

/**
 * The one rule for a session whose use was last recorded at `lastSeenAt`, shared by the store and
 * the PGlite cache: refuse it once that is SESSION_IDLE_MS old (UNBOUND_SESSION_IDLE_MS while no
 * credential has used it), use it as is within the touch
 * interval, record this use otherwise.
 */
export function sessionUse(lastSeenAt: Date, now: Date, bound = true): 'expired' | 'recorded' | 'record' {
  const idle = now.getTime() - lastSeenAt.getTime();
  if (idle >= (bound ? SESSION_IDLE_MS : UNBOUND_SESSION_IDLE_MS)) return 'expired';
  return idle < SESSION_TOUCH_INTERVAL_MS ? 'recorded' : 'record';
}

/** Who is behind a credential, as introspection told us. */
export interface Principal {
  userId: string;
  /** The API key or OAuth client id: sessions bind to the credential, not just the user. */
  credentialId: string;
  scope: string;
  /** Introspection's token_type: "Bearer" for an OAuth access token (the only kind that can step up). */
  tokenType?: string;
}

export interface SessionBinding {
  userId: string | null;
  credentialId: string | null;
  /** The recorded last use after this check (what the idle hour counts from). */
  lastSeenAt: Date;
  /** The revision `initialize` negotiated: it holds for the whole session (docs/mcp-gateway.md, "Protocol version"). */
  protocolVersion: string;
}

/** The sessions table, behind a port so the domain does not care where it lives. */
export interface SessionStore {
  create(idHash: string, s: { protocolVersion: string; clientName?: string; clientVersion?: string; principal?: Principal; now: Date }): Promise<void>;
  /**
   * Checks the session is live (its recorded use is within SESSION_IDLE_MS) and records this use when
   * the recorded one is older than SESSION_TOUCH_INTERVAL_MS. Undefined when unknown, expired or deleted.
   */
  touch(idHash: string, now: Date): Promise<SessionBinding | undefined>;
  /** Binds an unbound session to its first identity; false when someone else got there first. */
  bind(idHash: string, principal: Principal): Promise<boolean>;
  delete(idHash: string): Promise<boolean>;
  sweep(now: Date): Promise<void>;
}

/** 32 random bytes (256 bits), base64url: visible ASCII as MCP requires, unguessable. */
export const newSessionId = () => randomBytes(32).toString('base64url');
export const hashSessionId = (id: string) => createHash('sha256').update(id).digest('hex');
/** A session id we could have issued; anything else is unknown without a database round trip. */
export const isSessionIdShaped = (id: string) => /^[A-Za-z0-9_-]{43}$/.test(id);

export type SessionCheck = { ok: true; protocolVersion: string } | { ok: false; reason: 'unknown' | 'foreign' };

/**
 * A live session used by `principal`. An unbound session (initialized without a token) is bound to
 * the first identity that uses it; a session bound to another credential is answered like an
 * unknown one, so a stolen id is worth nothing and its existence is not confirmed.
 */
export async function useSession(store: SessionStore, id: string, principal: Principal, now: Date): Promise<SessionCheck> {
  if (!isSessionIdShaped(id)) return { ok: false, reason: 'unknown' };
  const idHash = hashSessionId(id);
  const binding = await store.touch(idHash, now);
  if (!binding) return { ok: false, reason: 'unknown' };
  const ok = { ok: true, protocolVersion: binding.protocolVersion } as const;
  if (binding.userId === null) {
    if (await store.bind(idHash, principal)) return ok;
    const again = await store.touch(idHash, now);
    return again && sameIdentity(again, principal) ? ok : { ok: false, reason: 'foreign' };
  }
  return sameIdentity(binding, principal) ? ok : { ok: false, reason: 'foreign' };
}

const sameIdentity = (b: SessionBinding, p: Principal) => b.userId === p.userId && b.credentialId === p.credentialId;
