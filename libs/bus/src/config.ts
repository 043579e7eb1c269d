import type { Database, MigrationResult } from '@flowdesk/db';
import type { EventBus } from './bus.ts';
import { createEmbeddedBus, migrateBus } from './embedded-bus.ts';
import { createKafkaBus, type KafkaTopicSpec } from './kafka-bus.ts';

/** Which bus a service uses, from its environment (docs/event-bus.md, Configuration). */
export type BusConfig =
  | { kind: 'embedded' }
  | { kind: 'kafka'; brokers: string[]; clientId: string; partitions: number; replicationFactor: number };

function positiveInt(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** KAFKA_BROKERS set → Kafka; unset → the embedded bus on the service's database. */
export function busConfigFromEnv(env: Record<string, string | undefined> = process.env): BusConfig {
  const brokers = (env.KAFKA_BROKERS ?? '').split(',').map((b) => b.trim()).filter(Boolean);
  if (brokers.length === 0) return { kind: 'embedded' };
  for (const b of brokers) if (!/^[^\s:]+:\d+$/.test(b)) throw new Error(`KAFKA_BROKERS: expected host:port, got ${JSON.stringify(b)}`);
  return {
    kind: 'kafka',
    brokers,
    clientId: env.KAFKA_CLIENT_ID || 'flowdesk',
    partitions: positiveInt(env, 'KAFKA_TOPIC_PARTITIONS', 12),
    replicationFactor: positiveInt(env, 'KAFKA_REPLICATION_FACTOR', 3),
  };
}

/** The topic specs an init job creates for `topics` under this configuration. */
export function topicSpecs(config: Extract<BusConfig, { kind: 'kafka' }>, topics: string[]): KafkaTopicSpec[] {
  return topics.map((topic) => ({ topic, numPartitions: config.partitions, replicationFactor: config.replicationFactor }));
}

/**
 * The bus a service's own process uses, from its environment: Kafka when KAFKA_BROKERS is set (the
 * client id gets the service's name), else the embedded bus on the service's database, opened only
 * then (`database`).
 */
export async function openBus(service: string, database: () => Promise<Database>, env: Record<string, string | undefined> = process.env): Promise<EventBus> {
  const config = busConfigFromEnv(env);
  if (config.kind === 'kafka') return createKafkaBus({ brokers: config.brokers, clientId: `${config.clientId}-${service}` });
  return createEmbeddedBus(await database());
}

/**
 * The migration job's part for a service that publishes or consumes events: with the embedded bus
 * (no KAFKA_BROKERS) its tables live in the service's database, so its schema is applied with the
 * service's own migrations (`own`); on Kafka there is nothing to migrate. The summary a job logs.
 */
export async function withBusMigrations(db: Database, own: MigrationResult, env: Record<string, string | undefined> = process.env): Promise<{ applied: string[]; alreadyApplied: number }> {
  const bus = busConfigFromEnv(env).kind === 'embedded' ? await migrateBus(db) : undefined;
  return {
    applied: [...own.applied, ...(bus?.applied.map((m) => `bus/${m}`) ?? [])],
    alreadyApplied: own.skipped.length + (bus?.skipped.length ?? 0),
  };
}
