import { CREDENTIAL_REVOKED_TOPIC, TRIGGER_TOPIC, WORKFLOW_CHANGED_TOPIC } from './events.ts';
import { OWNER_THROTTLE_TOPIC } from './owner-throttle.ts';
import { ENTITY_CHANGED_TOPIC } from './triggers.ts';
import { WEBHOOK_REPLY_TOPIC } from './webhook-reply.ts';

/**
 * Every topic the services publish to, as `npm start` on Kafka and the deploy tests' init create them
 * (deploy/k8s/base/kafka-topics.yaml lists the same, with their dead-letter topics).
 */
export const EVENT_TOPICS = [
  TRIGGER_TOPIC,
  CREDENTIAL_REVOKED_TOPIC,
  WORKFLOW_CHANGED_TOPIC,
  ENTITY_CHANGED_TOPIC,
  WEBHOOK_REPLY_TOPIC,
  OWNER_THROTTLE_TOPIC,
] as const;
