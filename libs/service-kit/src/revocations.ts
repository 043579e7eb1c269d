import { instanceGroupId, type EventBus, type Subscription } from '@flowdesk/bus';
import { CREDENTIAL_REVOKED_TOPIC, type CredentialRevoked } from '@flowdesk/contracts';
import type { AuthClient } from './auth-client.ts';

/** The message id of the in-process echo (the gateway's withInProcessRevocations), told apart in the logs. */
export const IN_PROCESS_REVOCATION_ID = 'in-process';
const IN_PROCESS_ID = IN_PROCESS_REVOCATION_ID;

export interface RevocationLog {
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

const isEvent = (v: unknown): v is CredentialRevoked => {
  const e = v as Partial<CredentialRevoked> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.userId === 'string' &&
    typeof e.clientId === 'string' &&
    (e.tokenSha256 === undefined || (Array.isArray(e.tokenSha256) && e.tokenSha256.every((h) => typeof h === 'string')))
  );
};

/**
 * Every replica must see every revocation (each holds its own caches), so each is its own consumer
 * group: `<service>-revocations.<host>.<uuid>` (instanceGroupId), a new one per process. With Kafka
 * that means one group per replica process; the group of a replica that is gone stays behind (Kafka
 * expires its offsets; the embedded bus keeps its rows, docs/mcp-gateway.md). Its metrics carry the
 * stable `group="<service>-revocations.instance"` (groupLabel in libs/bus), never the random part.
 */
export const revocationGroupId = (service: string): string => instanceGroupId(`${service}-revocations`);

/**
 * Evicts the gateway's cached introspection results and internal tokens for each revoked credential
 * as soon as the event arrives. The handler is synchronous (a map walk): nothing in it can fail but a
 * malformed event, which is logged and skipped rather than retried.
 */
export function subscribeToRevocations(
  bus: Pick<EventBus, 'subscribe'>,
  auth: Pick<AuthClient, 'evict'>,
  log: RevocationLog,
  now: () => Date,
  service = 'mcp-gateway',
): Promise<Subscription> {
  return bus.subscribe<unknown>({
    topic: CREDENTIAL_REVOKED_TOPIC,
    groupId: revocationGroupId(service),
    // Keyed by user: different users' events need not wait for each other (a new group starts with the stored backlog).
    concurrency: 16,
    handler: (message) => {
      if (!isEvent(message.value)) {
        log.warn({ messageId: message.id }, 'ignored a malformed credential revocation event');
        return;
      }
      const e = message.value;
      const dropped = auth.evict({ userId: e.userId, credentialId: e.clientId, tokenSha256: e.tokenSha256 });
      // How long from the revocation's commit to the eviction here: the window a revoked credential still worked.
      const lagMs = now().getTime() - Date.parse(e.revokedAt);
      const fields = { eventId: e.eventId, kind: e.kind, userId: e.userId, dropped, lagMs, inProcess: message.id === IN_PROCESS_ID };
      if (dropped > 0) log.info(fields, 'evicted a revoked credential');
      else log.debug(fields, 'credential revocation received, nothing cached');
    },
  });
}
