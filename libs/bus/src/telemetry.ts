import { contextFromHeaders, counter, gauge, histogram, injectTraceHeaders, SECONDS_BUCKETS, SpanKind, tracingEnabled, withSpan } from '@flowdesk/telemetry';
import type { EventBus, SubscribeOptions } from './bus.ts';
import { groupLabel } from './group-id.ts';

/** Bus metrics (docs/observability.md). Labels: topic and group names only, a handful per deployment. */
const publishSeconds = histogram<'topic' | 'result'>({
  name: 'flowdesk_bus_publish_duration_seconds',
  help: 'Time until a publish was durable (Kafka acks=all, or the embedded bus committed), by topic and result',
  labelNames: ['topic', 'result'],
  buckets: SECONDS_BUCKETS,
});
const deliveryDelay = histogram<'topic' | 'group'>({
  name: 'flowdesk_bus_delivery_delay_seconds',
  help: 'Time from publish to the handler starting, by topic and consumer group: the consumer lag in time (every bus)',
  labelNames: ['topic', 'group'],
  buckets: [...SECONDS_BUCKETS, 300, 900, 3600],
});
export const deadLettered = counter<'topic' | 'group'>({
  name: 'flowdesk_bus_dead_lettered_total',
  help: 'Messages moved to <topic>.dlq after their last failed attempt, by original topic and group',
  labelNames: ['topic', 'group'],
});
/** Kafka only: per partition, records behind the partition's end when its last batch was fetched. */
export const consumerLag = gauge<'topic' | 'group' | 'partition'>({
  name: 'flowdesk_bus_consumer_lag_messages',
  help: 'Kafka consumer lag: the partition high watermark minus the next offset to handle, by topic, group and partition',
  labelNames: ['topic', 'group', 'partition'],
});
/**
 * Kafka only: 1 while a partition's fetching is paused because its consumer holds MAX_WINDOW records
 * of it (running, waiting for their key, or finished behind an unfinished one), else 0.
 */
export const consumerPaused = gauge<'topic' | 'group' | 'partition'>({
  name: 'flowdesk_bus_consumer_paused',
  help: "Kafka: 1 while a partition's fetching is paused because its consumer holds its window's limit of records, by topic, group and partition",
  labelNames: ['topic', 'group', 'partition'],
});

/**
 * The bus with metrics and tracing around it, the same for both implementations: publish is timed
 * and, when tracing is on, a producer span whose context travels in each message's `traceparent`
 * header; a handler runs inside a consumer span continuing that context, so one webhook's trace
 * goes on in the engine. Every other method of the bus is passed through.
 */
export function instrumentBus<B extends EventBus>(bus: B): B {
  const wrapped = Object.create(null) as Record<string, unknown>;
  for (let o: object | null = bus; o && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    for (const name of Object.getOwnPropertyNames(o)) {
      const v: unknown = (bus as unknown as Record<string, unknown>)[name];
      if (name !== 'constructor' && typeof v === 'function' && !(name in wrapped)) wrapped[name] = v.bind(bus);
    }
  }
  wrapped.publish = async (topic: string, messages: Parameters<EventBus['publish']>[1]) => {
    const end = publishSeconds.startTimer({ topic });
    const send = async () => {
      try {
        await bus.publish(topic, tracingEnabled() ? messages.map((m) => ({ ...m, headers: injectTraceHeaders(m.headers) })) : messages);
        end({ result: 'ok' });
      } catch (err) {
        end({ result: 'error' });
        throw err;
      }
    };
    return tracingEnabled()
      ? withSpan('flowdesk-bus', `${topic} publish`, send, {
          kind: SpanKind.PRODUCER,
          attributes: { 'messaging.destination.name': topic, 'messaging.batch.message_count': messages.length },
        })
      : send();
  };
  wrapped.subscribe = <T>(options: SubscribeOptions<T>) =>
    bus.subscribe<T>({
      ...options,
      handler: (message) => {
        deliveryDelay.observe({ topic: options.topic, group: groupLabel(options.groupId) }, Math.max(0, Date.now() - message.publishedAt.getTime()) / 1000);
        if (!tracingEnabled()) return options.handler(message);
        return withSpan('flowdesk-bus', `${options.topic} process`, () => options.handler(message), {
          kind: SpanKind.CONSUMER,
          parent: contextFromHeaders(message.headers),
          attributes: {
            'messaging.destination.name': options.topic,
            'messaging.consumer.group.name': options.groupId,
            'messaging.message.id': message.id,
            'flowdesk.attempt': message.attempt,
          },
        });
      },
    });
  return wrapped as unknown as B;
}
