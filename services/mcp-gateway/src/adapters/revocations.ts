import type { EventBus, SubscribeOptions } from '@flowdesk/bus';
import { CREDENTIAL_REVOKED_TOPIC } from '@flowdesk/contracts';
import { IN_PROCESS_REVOCATION_ID as IN_PROCESS_ID } from '@flowdesk/service-kit';

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
