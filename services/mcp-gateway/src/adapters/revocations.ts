import { randomUUID } from 'node:crypto';
import type { EventBus, SubscribeOptions, Subscription } from '@flowdesk/bus';
import { CREDENTIAL_REVOKED_TOPIC, type CredentialRevoked } from '@flowdesk/contracts';
import type { AuthClient } from './auth-client.ts';

/**
 * Every replica must see every revocation (each holds its own caches), so each is its own consumer
 * group: a fixed prefix plus a random id per process. With Kafka that means one group per replica
 * process; the group of a replica that is gone stays behind (Kafka expires its offsets; the embedded
 * bus keeps its rows, docs/mcp-gateway.md).
 */
export const revocationGroupId = (): string => `mcp-gateway-revocations-${randomUUID()}`;

export interface RevocationLog {
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The message id of the in-process echo (withInProcessRevocations), told apart in the logs. */
const IN_PROCESS_ID = 'in-process';

const isEvent = (v: unknown): v is CredentialRevoked => {
  const e = v as Partial<CredentialRevoked> | null;
  return (
    typeof e === 'object' && e !== null && typeof e.userId === 'string' && typeof e.clientId === 'string' &&
    (e.tokenSha256 === undefined || (Array.isArray(e.tokenSha256) && e.tokenSha256.every((h) => typeof h === 'string')))
  );
};

/**
 * Evicts the gateway's cached introspection results and internal tokens for each revoked credential
 * as soon as the event arrives. The handler is synchronous (a map walk): nothing in it can fail but a
 * malformed event, which is logged and skipped rather than retried.
 */
export function subscribeToRevocations(bus: Pick<EventBus, 'subscribe'>, auth: AuthClient, log: RevocationLog, now: () => Date): Promise<Subscription> {
  return bus.subscribe<unknown>({
    topic: CREDENTIAL_REVOKED_TOPIC,
    groupId: revocationGroupId(),
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

/**
 * For deployments where auth and the gateway share one process and one bus object (`npm start`, the
 * tests): a bus whose publish of a revocation also runs this process's revocation handlers before it
 * resolves, so auth answers a revoke only after the local gateways evicted. Delivery through the bus
 * still happens (and evicts again: eviction is idempotent), which is what other processes get. Only
 * CREDENTIAL_REVOKED_TOPIC is echoed: other consumers (the engine) must not see messages twice.
 */
export function withInProcessRevocations(bus: EventBus): EventBus {
  const local = new Set<(value: unknown) => void>();
  return {
    async publish(topic, messages) {
      await bus.publish(topic, messages);
      if (topic !== CREDENTIAL_REVOKED_TOPIC) return;
      for (const handle of local) for (const m of messages) handle(m.value);
    },
    async subscribe<T>(options: SubscribeOptions<T>) {
      const subscription = await bus.subscribe<T>(options);
      if (options.topic !== CREDENTIAL_REVOKED_TOPIC) return subscription;
      const handle = (value: unknown) => {
        const message = { id: IN_PROCESS_ID, topic: options.topic, key: '', value: value as T, headers: {}, attempt: 1, publishedAt: new Date() };
        // Synchronously, so a synchronous handler is done before publish resolves. A failure here is
        // left to the bus delivery that follows, which retries.
        try {
          void Promise.resolve(options.handler(message)).catch(() => {});
        } catch {
          // see above
        }
      };
      local.add(handle);
      return {
        close: async () => {
          local.delete(handle);
          await subscription.close();
        },
      };
    },
    close: () => bus.close(),
  };
}
