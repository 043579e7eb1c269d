import { mkdir } from 'node:fs/promises';
import { Audience } from '@flowdesk/contracts';
import { signInternalToken } from '@flowdesk/service-kit';
import { migrateAuth } from '@flowdesk/auth';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { migrateWorkspace } from '@flowdesk/workspace-api';
import { migrateGateway } from '@flowdesk/mcp-gateway';
import type { EmbeddedConfig } from './config.ts';
import { openEmbeddedDatabase, type EmbeddedDatabase } from './database.ts';
import { ensureDemoAccount } from './demo-account.ts';
import { ensureDemoUser, readDevFile, updateDevFile } from './dev-file.ts';
import { closeServer, listenServer } from './http-server.ts';
import { loadOrCreateKeys, type EmbeddedKeys } from './keys.ts';
import { createLogger, type Logger } from './log.ts';
import { createProxy } from './proxy.ts';
import { seedWelcome } from './seed.ts';
import { closeServices, PUBLIC_ROUTES, SERVICE_NAMES, startServices, type RunningService } from './services.ts';

export interface Embedded {
  /** The public base URL: PUBLIC_BASE_URL, or the local one. */
  baseUrl: string;
  /** Where this machine reaches the front proxy. */
  localUrl: string;
  /** The demo user, the same on every start with the same home. */
  userId: string;
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
  const backends = new Map<string, string>();
  const proxy = createProxy({ routes: PUBLIC_ROUTES, services: SERVICE_NAMES, target: (name) => backends.get(name), log });
  let database: EmbeddedDatabase | undefined;
  let bus: EventBus | undefined;
  let services: RunningService[] = [];
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await closeServer(proxy);
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
    // The demo user's id is the one dev.json proposed, unless the auth database already knows the demo email.
    const { userId } = await ensureDemoAccount(database.db, config.home, proposedUserId);
    bus = await createEmbeddedBus(database.db);
    services = await startServices({ db: database.db, bus, keys, publicBaseUrl: baseUrl, logLevel: config.logLevel, ssrfAllowlist: config.ssrfAllowlist });
    for (const s of services) backends.set(s.name, s.url);
    await seedOnce({ home: config.home, keys, userId, localUrl, baseUrl, log });
    await updateDevFile(config.home, { baseUrl, userId });
    return { baseUrl, localUrl, userId, close };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}

interface SeedContext {
  home: string;
  keys: EmbeddedKeys;
  userId: string;
  localUrl: string;
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
    await seedWelcome({ localUrl: ctx.localUrl, publicBaseUrl: ctx.baseUrl, token });
    await updateDevFile(ctx.home, { welcomeSeededAt: new Date().toISOString() });
  } catch (err) {
    ctx.log.warn({ err }, 'could not create the welcome project; the next start tries again');
  }
}
