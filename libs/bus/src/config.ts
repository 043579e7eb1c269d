import { openDatabase, type Database, type MigrationResult } from '@flowdesk/db';
import type { EventBus } from './bus.ts';
import { createEmbeddedBus, DEFAULT_GROUP_EXPIRY_MS, DEFAULT_RETENTION_MS, migrateBus, type EmbeddedBusOptions } from './embedded-bus.ts';
import { createKafkaBus, type KafkaTopicSpec } from './kafka-bus.ts';

/** Which bus a service uses, from its environment (docs/event-bus.md, Configuration). */
export type BusConfig =
  | { kind: 'embedded'; retentionMs: number; groupExpiryMs: number }
  | {
      kind: 'kafka';
      brokers: string[];
      clientId: string;
      partitions: number;
      replicationFactor: number;
      /** KAFKA_SESSION_TIMEOUT_MS: a consumer silent this long loses its partitions to the others of its group. */
      sessionTimeoutMs: number;
      /** KAFKA_PUBLISH_TIMEOUT_MS: longest a publish (a webhook's 200) waits for the brokers' acknowledgement. */
      publishTimeoutMs: number;
    };

function positiveInt(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** A duration in ms: a non-negative integer, or `off` (Infinity: never). */
function durationMs(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'off') return Infinity;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer (milliseconds) or "off", got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * KAFKA_BROKERS set → Kafka; unset → the embedded bus on the service's database, with its retention
 * (BUS_RETENTION_MS, default 24 h) and group expiry (BUS_GROUP_EXPIRY_MS, default 7 days).
 */
export function busConfigFromEnv(env: Record<string, string | undefined> = process.env): BusConfig {
  const brokers = (env.KAFKA_BROKERS ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  if (brokers.length === 0) {
    return {
      kind: 'embedded',
      retentionMs: durationMs(env, 'BUS_RETENTION_MS', DEFAULT_RETENTION_MS),
      groupExpiryMs: durationMs(env, 'BUS_GROUP_EXPIRY_MS', DEFAULT_GROUP_EXPIRY_MS),
    };
  }
  for (const b of brokers) if (!/^[^\s:]+:\d+$/.test(b)) throw new Error(`KAFKA_BROKERS: expected host:port, got ${JSON.stringify(b)}`);
  return {
    kind: 'kafka',
    brokers,
    clientId: env.KAFKA_CLIENT_ID || 'flowdesk',
    partitions: positiveInt(env, 'KAFKA_TOPIC_PARTITIONS', 12),
    replicationFactor: positiveInt(env, 'KAFKA_REPLICATION_FACTOR', 3),
    sessionTimeoutMs: positiveInt(env, 'KAFKA_SESSION_TIMEOUT_MS', 30_000),
    publishTimeoutMs: positiveInt(env, 'KAFKA_PUBLISH_TIMEOUT_MS', 5_000),
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
  if (config.kind === 'kafka') {
    return createKafkaBus({
      brokers: config.brokers,
      clientId: `${config.clientId}-${service}`,
      sessionTimeoutMs: config.sessionTimeoutMs,
      publishTimeoutMs: config.publishTimeoutMs,
    });
  }
  return createEmbeddedBus(await database(), embeddedBusOptionsFromEnv(env));
}

/** The embedded bus's settings from the environment (BUS_RETENTION_MS, BUS_GROUP_EXPIRY_MS), for callers that create it themselves. */
export function embeddedBusOptionsFromEnv(env: Record<string, string | undefined> = process.env): EmbeddedBusOptions {
  const config = busConfigFromEnv({ ...env, KAFKA_BROKERS: '' });
  return config.kind === 'embedded' ? { retentionMs: config.retentionMs, groupExpiryMs: config.groupExpiryMs } : {};
}

/**
 * The migration job's part for a service that publishes or consumes events: with the embedded bus
 * (no KAFKA_BROKERS) its tables live in the service's database, so its schema is applied with the
 * service's own migrations (`own`); on Kafka there is nothing to migrate. The summary a job logs.
 */
export async function withBusMigrations(
  db: Database,
  own: MigrationResult,
  env: Record<string, string | undefined> = process.env,
): Promise<{ applied: string[]; alreadyApplied: number }> {
  const bus = busConfigFromEnv(env).kind === 'embedded' ? await migrateBus(db) : undefined;
  return {
    applied: [...own.applied, ...(bus?.applied.map((m) => `bus/${m}`) ?? [])],
    alreadyApplied: own.skipped.length + (bus?.skipped.length ?? 0),
  };
}

/**
 * A service's migration job (its src/migrate.ts, run through service-kit's runJob): opens the
 * Postgres database at `url`, applies the service's own migrations and the bus's (withBusMigrations),
 * closes it, and returns the summary the job logs.
 */
export async function migrateServiceDatabase(
  url: string,
  migrateOwn: (db: Database) => Promise<MigrationResult>,
  env: Record<string, string | undefined> = process.env,
): Promise<{ applied: string[]; alreadyApplied: number }> {
  const db = await openDatabase({ kind: 'postgres', url });
  try {
    return await withBusMigrations(db, await migrateOwn(db), env);
  } finally {
    await db.close();
  }
}

export { instanceGroupId } from './group-id.ts';
