import { mkdir } from 'node:fs/promises';
import { Audience, EVENT_TOPICS } from '@flowdesk/contracts';
import { listenMetrics, signInternalToken } from '@flowdesk/service-kit';
import { migrateAuth } from '@flowdesk/auth';
import { createEmbeddedBus, createKafkaBus, embeddedBusOptionsFromEnv, ensureKafkaTopics, topicSpecs, type EventBus } from '@flowdesk/bus';
import { migrateWorkspace } from '@flowdesk/workspace-api';
import { migrateGateway } from '@flowdesk/mcp-gateway';
import { migrateEngine } from '@flowdesk/workflow-engine';
import type { EmbeddedConfig } from './config.ts';
import type { Database } from '@flowdesk/db';
import { openEmbeddedDatabase, type EmbeddedDatabase } from './database.ts';
import { ensureDemoAccount } from './demo-account.ts';
import { ensureDemoUser, readDevFile, updateDevFile } from './dev-file.ts';
import { closeServer, listenServer } from './http-server.ts';
import { loadOrCreateKeys, type EmbeddedKeys } from './keys.ts';
import { createLogger, type Logger } from './log.ts';
import { createProxy, parseFrontTrust, type Backend } from './proxy.ts';
import { seedWelcome } from './seed.ts';
import { closeServices, PUBLIC_ROUTES, SERVICE_NAMES, startServices, type RunningService, type ServiceName } from './services.ts';

export interface Embedded {
  /** The public base URL: PUBLIC_BASE_URL, or the local one. */
  baseUrl: string;
  /** Where this machine reaches the front (it hands each request to its service in process). */
  localUrl: string;
  /** The process's metrics listener: `/metrics` (all services), `/metrics/<service>` (one). */
  metricsUrl: string;
  /** The demo user, the same on every start with the same home. */
  userId: string;
  /** The one database every service uses here (tests read the engine's bookkeeping through it). */
  db: Database;
  /**
   * Each service's own loopback URL (the services not yet called in process call each other there;
   * benchmarks reach one service directly: bench/mcp-latency.ts). The front does not use them: it
   * hands requests to the services in process. Not public: workspace-api accepts internal tokens only.
   */
  serviceUrls: Readonly<Record<ServiceName, string>>;
  /** Closes the proxy, then every service, then the database. Safe to call twice. */
  close(): Promise<void>;
}

/** All of Flowdesk in this process behind one port: what `npm start` runs. */
export async function startEmbedded(config: EmbeddedConfig): Promise<Embedded> {
  const log = createLogger('embedded', config.logLevel);
  await mkdir(config.home, { recursive: true, mode: 0o700 });
  const keys = await loadOrCreateKeys(config.home);
  const proposedUserId = await ensureDemoUser(config.home);

  // Listening before the services exist gives the public base URL they need (PORT=0 picks one);
  // until they are registered the front answers 502, as for any backend that is down.
  const backends = new Map<string, Backend>();
  const proxy = createProxy({
    routes: PUBLIC_ROUTES,
    services: SERVICE_NAMES,
    target: (name) => backends.get(name),
    log,
    trustProxy: parseFrontTrust(config.trustProxy),
  });
  let database: EmbeddedDatabase | undefined;
  let bus: EventBus | undefined;
  let services: RunningService[] = [];
  let metrics: { url: string; close(): Promise<void> } | undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await closeServer(proxy);
      await metrics?.close();
      await closeServices(services);
      await bus?.close();
      await database?.close();
    })());

  try {
    const localUrl = await listenServer(proxy, config.port, config.host);
    const baseUrl = config.publicBaseUrl ?? localUrl;
    database = await openEmbeddedDatabase(config);
    await migrateWorkspace(database.db);
    await migrateAuth(database.db);
    await migrateGateway(database.db);
    await migrateEngine(database.db);
    // The demo user's id is the one dev.json proposed, unless the auth database already knows the demo email.
    const { userId } = await ensureDemoAccount(database.db, config.home, proposedUserId);
    bus = await openStartBus(config, database);
    services = await startServices({
      db: database.db,
      bus,
      keys,
      publicBaseUrl: baseUrl,
      logLevel: config.logLevel,
      ssrfAllowlist: config.ssrfAllowlist,
      traceUrlTemplate: config.traceUrlTemplate,
      engineClock: config.engineClock,
      corsOrigins: config.corsOrigins,
      allowedOrigins: config.allowedOrigins,
      tuning: config,
    });
    for (const s of services) backends.set(s.name, s.app);
    metrics = await listenEmbeddedMetrics(config, services);
    const serviceUrls = Object.fromEntries(services.map((s) => [s.name, s.url])) as Record<ServiceName, string>;
    await seedOnce({ home: config.home, keys, userId, workspaceApiUrl: serviceUrls['workspace-api'], baseUrl, log });
    await updateDevFile(config.home, { baseUrl, userId });
    return { baseUrl, localUrl, metricsUrl: metrics.url, userId, db: database.db, serviceUrls, close };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}

/**
 * One metrics listener for the whole process, apart from the front (so nothing public serves
 * /metrics): every service's series in `/metrics`, each one's in `/metrics/<service>`.
 */
async function listenEmbeddedMetrics(config: EmbeddedConfig, services: RunningService[]): Promise<{ url: string; close(): Promise<void> }> {
  const apps = services.map((s) => ({ name: s.name, app: s.app }));
  try {
    return await listenMetrics({ apps, port: config.metricsPort, host: config.host });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || config.metricsPort === 0) throw err;
    return listenMetrics({ apps, port: 0, host: config.host });
  }
}

/**
 * The embedded bus on the database, or Kafka when KAFKA_BROKERS is set (`npm run kafka:start`
 * prints the line): the topics are created if missing, with KAFKA_TOPIC_PARTITIONS and
 * KAFKA_REPLICATION_FACTOR (1 for a single local broker), as an init job would.
 */
async function openStartBus(config: EmbeddedConfig, database: EmbeddedDatabase): Promise<EventBus> {
  const bus = config.bus;
  if (!bus || bus.kind === 'embedded')
    return createEmbeddedBus(database.db, bus ? { retentionMs: bus.retentionMs, groupExpiryMs: bus.groupExpiryMs } : embeddedBusOptionsFromEnv());
  await ensureKafkaTopics({ brokers: bus.brokers, clientId: bus.clientId }, topicSpecs(bus, [...EVENT_TOPICS]));
  return createKafkaBus({
    brokers: bus.brokers,
    clientId: `${bus.clientId}-embedded`,
    sessionTimeoutMs: bus.sessionTimeoutMs,
    publishTimeoutMs: bus.publishTimeoutMs,
  });
}

interface SeedContext {
  home: string;
  keys: EmbeddedKeys;
  userId: string;
  workspaceApiUrl: string;
  baseUrl: string;
  log: Logger;
}

/**
 * Only until it has worked once: a user who deletes the welcome project does not get it back on
 * the next start. A failure does not stop the start; the next start tries again.
 */
async function seedOnce(ctx: SeedContext): Promise<void> {
  if ((await readDevFile(ctx.home)).welcomeSeededAt) return;
  const token = signInternalToken(ctx.keys.signing, { sub: ctx.userId, aud: Audience.workspaceApi, scope: 'mcp:read mcp:write', azp: 'embedded' });
  try {
    await seedWelcome({ workspaceApiUrl: ctx.workspaceApiUrl, publicBaseUrl: ctx.baseUrl, token });
    await updateDevFile(ctx.home, { welcomeSeededAt: new Date().toISOString() });
  } catch (err) {
    ctx.log.warn({ err }, 'could not create the welcome project; the next start tries again');
  }
}
