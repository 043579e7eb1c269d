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
export {
  createEmbeddedBus,
  migrateBus,
  DEFAULT_GROUP_EXPIRY_MS,
  DEFAULT_RETENTION_MS,
  type EmbeddedBusOptions,
  type EmbeddedEventBus,
} from './embedded-bus.ts';
export { BusUnavailableError, busProducer, createKafkaBus, ensureKafkaTopics, type KafkaBusOptions, type KafkaTopicSpec } from './kafka-bus.ts';
export {
  busConfigFromEnv,
  embeddedBusOptionsFromEnv,
  instanceGroupId,
  openBus,
  topicSpecs,
  withBusMigrations,
  migrateServiceDatabase,
  type BusConfig,
} from './config.ts';
