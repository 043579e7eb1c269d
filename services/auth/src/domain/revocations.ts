import { randomUUID } from 'node:crypto';
import { CREDENTIAL_REVOKED_TOPIC, type CredentialRevoked, type EventPublisher } from '@flowdesk/contracts';

/** What a revocation killed, in the terms of the CredentialRevoked event (ids and token hashes, no secret). */
export type Revocation = Pick<CredentialRevoked, 'userId' | 'kind' | 'clientId' | 'tokenSha256'> & { revokedAt: Date };

/** Called by every path that revokes, after its transaction has committed. Never throws. */
export type OnRevoked = (revocation: Revocation) => Promise<void>;

export interface RevocationLog {
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/**
 * How long a revoke waits for the bus. The revocation itself is already committed: a bus that is down
 * must not turn it into a failed or hanging request. Past this, the answer goes out and gateways fall
 * back to their cache TTL (30 s) for this credential.
 */
export const PUBLISH_TIMEOUT_MS = 2_000;

/** SHA-256 as stored (bytes) → the base64url form the gateway keys its caches by. */
export const tokenSha256 = (hash: Uint8Array): string => Buffer.from(hash).toString('base64url');

/**
 * Publishes CredentialRevoked. Awaited by the revoking request (so on the embedded bus the event is
 * committed, and in-process subscribers woken, before the 204/200 goes out), bounded by
 * PUBLISH_TIMEOUT_MS. A failed or slow publish is logged as an error and swallowed: the revocation
 * stands, and the exposure is bounded by the gateways' cache TTL. Without a publisher it does nothing.
 */
export function revocationNotifier(events: EventPublisher | undefined, log: RevocationLog, timeoutMs = PUBLISH_TIMEOUT_MS): OnRevoked {
  if (!events) return async () => {};
  return async ({ revokedAt, ...what }) => {
    const value: CredentialRevoked = { eventId: randomUUID(), ...what, revokedAt: revokedAt.toISOString() };
    const ids = { eventId: value.eventId, kind: value.kind, userId: value.userId, clientId: value.clientId };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        events.publish(CREDENTIAL_REVOKED_TOPIC, [{ key: value.userId, value }]),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`publish did not complete within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      log.debug(ids, 'credential revocation published');
    } catch (err) {
      // Ids only: the event carries no secret, and neither does this line.
      log.error({ ...ids, err: (err as Error).message }, 'credential revocation NOT published: gateways keep cached results until their TTL');
    } finally {
      clearTimeout(timer);
    }
  };
}
