export {
  DLQ_HEADERS,
  dlqTopicOf,
  type EventBus,
  type MessageHandler,
  type OutgoingMessage,
  type ReceivedMessage,
  type RetryPolicy,
  type SubscribeOptions,
  type Subscription,
} from './bus.ts';
export { DEFAULT_RETRY, backoffMs } from './retry.ts';
export { createEmbeddedBus, migrateBus, type EmbeddedBusOptions } from './embedded-bus.ts';
export { createKafkaBus, ensureKafkaTopics, type KafkaBusOptions, type KafkaTopicSpec } from './kafka-bus.ts';
export { busConfigFromEnv, openBus, topicSpecs, withBusMigrations, type BusConfig } from './config.ts';
