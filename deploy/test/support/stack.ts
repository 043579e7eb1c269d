// Flowdesk as production runs it: each service its own process from dist/main.js, production
// configuration (docs/configuration.md) with secrets generated for the test, migrations applied by
// the dist/migrate.js entrypoints first. The bus is Kafka when `kafkaBrokers` is given, else the
// embedded bus on the same Postgres database.
import { randomBytes } from 'node:crypto';
import { generateServiceSecret } from '@flowdesk/auth';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, type SigningKeys } from '@flowdesk/service-kit';
import { freePort, killAll, runMigrate, startService, type ServiceName, type ServiceProcess } from './processes.ts';
import { MIGRATING_SERVICES, SERVICES } from '../k8s-support/repo.ts';

export { SERVICES };

/** The machine's Postgres (trust auth), unless DATABASE_URL names another server. */
export const MACHINE_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

/** A brand-new database on the machine's Postgres (or DATABASE_URL's server), dropped by close(). */
export async function freshDatabase(): Promise<TestDatabase & { url: string }> {
  // createTestDatabase makes a database on DATABASE_URL's server; these tests need a real server
  // (several processes share the database), so the machine's is the default rather than PGlite.
  process.env.DATABASE_URL ||= MACHINE_POSTGRES;
  const db = await createTestDatabase();
  if (!db.url) throw new Error('expected a Postgres database');
  return db as TestDatabase & { url: string };
}

export interface Secrets {
  signing: SigningKeys;
  webhookSecretKey: string;
  /** The engine's CREDENTIALS_KEY (workflow credentials at rest), as the manifests give it. */
  credentialsKey: string;
  serviceClients: Record<'mcp-gateway' | 'webhook-ingest' | 'workflow-engine' | 'console', string>;
}

export function generateSecrets(): Secrets {
  return {
    signing: generateSigningKeys(),
    webhookSecretKey: randomBytes(32).toString('base64'),
    credentialsKey: randomBytes(32).toString('base64'),
    serviceClients: {
      'mcp-gateway': generateServiceSecret(),
      'webhook-ingest': generateServiceSecret(),
      'workflow-engine': generateServiceSecret(),
      console: generateServiceSecret(),
    },
  };
}

/** Every secret value a log line must never contain (the PEM by its base64 body lines). */
export function secretValues(s: Secrets, extra: string[] = []): string[] {
  const pemLines = (pem: string) => pem.split('\n').filter((l) => l && !l.startsWith('-----'));
  return [...pemLines(s.signing.privateKeyPem), s.webhookSecretKey, s.credentialsKey, ...Object.values(s.serviceClients), ...extra];
}

export interface StackOptions {
  databaseUrl: string;
  /** host:port list: the Kafka bus; unset: the embedded bus on databaseUrl. */
  kafkaBrokers?: string;
  logLevel?: string;
  /** SSRF_ALLOWLIST of the engine (the loopback receiver of a test). */
  ssrfAllowlist?: string;
  graceMs?: number;
  /** Extra variables for one service (SHUTDOWN_DRAIN_MS, ENGINE_CONCURRENCY...). */
  env?: Partial<Record<ServiceName, Record<string, string>>>;
}

export interface Stack {
  secrets: Secrets;
  /** The base URL people and webhooks would use (behind an ingress); handed out in URLs only. */
  publicBaseUrl: string;
  url(name: ServiceName): string;
  proc(name: ServiceName): ServiceProcess;
  /** The exact environment a service's process gets. */
  envOf(name: ServiceName): Record<string, string | undefined>;
  /** Starts (or restarts, on its same port) one service and waits for /readyz 200; `env` overrides for this run. */
  start(name: ServiceName, env?: Record<string, string>): Promise<ServiceProcess>;
  /** Kills whatever still runs. */
  close(): Promise<void>;
}

/** Ports, secrets and environments for the six services; nothing runs yet. */
export async function defineStack(o: StackOptions): Promise<Stack> {
  const secrets = generateSecrets();
  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await freePort()] as const))) as Record<ServiceName, number>;
  const url = (s: ServiceName) => `http://127.0.0.1:${ports[s]}`;
  const publicBaseUrl = 'https://flowdesk.example';
  const common = {
    NODE_ENV: 'production',
    LOG_LEVEL: o.logLevel ?? 'warn',
    DATABASE_URL: o.databaseUrl,
    KAFKA_BROKERS: o.kafkaBrokers,
    SHUTDOWN_GRACE_MS: String(o.graceMs ?? 10_000),
  };
  const own: Record<ServiceName, Record<string, string | undefined>> = {
    'workspace-api': {
      INTERNAL_JWT_PUBLIC_KEY: secrets.signing.publicKeyPem,
      WEBHOOK_SECRET_KEY: secrets.webhookSecretKey,
      PUBLIC_BASE_URL: publicBaseUrl,
    },
    auth: {
      INTERNAL_JWT_PRIVATE_KEY: secrets.signing.privateKeyPem,
      SERVICE_CLIENT_SECRETS: Object.entries(secrets.serviceClients)
        .map(([id, s]) => `${id}=${s}`)
        .join(','),
      PUBLIC_BASE_URL: publicBaseUrl,
    },
    'mcp-gateway': {
      PUBLIC_BASE_URL: publicBaseUrl,
      AUTH_URL: url('auth'),
      WORKSPACE_API_URL: url('workspace-api'),
      WORKFLOW_ENGINE_URL: url('workflow-engine'),
      MCP_GATEWAY_CLIENT_SECRET: secrets.serviceClients['mcp-gateway'],
    },
    'webhook-ingest': {
      AUTH_URL: url('auth'),
      WORKSPACE_API_URL: url('workspace-api'),
      WEBHOOK_INGEST_CLIENT_SECRET: secrets.serviceClients['webhook-ingest'],
    },
    'workflow-engine': {
      AUTH_URL: url('auth'),
      WORKSPACE_API_URL: url('workspace-api'),
      WORKFLOW_ENGINE_CLIENT_SECRET: secrets.serviceClients['workflow-engine'],
      INTERNAL_JWT_PUBLIC_KEY: secrets.signing.publicKeyPem,
      CREDENTIALS_KEY: secrets.credentialsKey,
      SSRF_ALLOWLIST: o.ssrfAllowlist,
    },
    console: {
      PUBLIC_BASE_URL: publicBaseUrl,
      AUTH_URL: url('auth'),
      WORKSPACE_API_URL: url('workspace-api'),
      WORKFLOW_ENGINE_URL: url('workflow-engine'),
      CONSOLE_CLIENT_SECRET: secrets.serviceClients.console,
    },
  };
  const envOf = (s: ServiceName) => ({ ...common, ...own[s], ...o.env?.[s] });
  const procs = new Map<ServiceName, ServiceProcess>();
  const all = new Set<ServiceProcess>();
  return {
    secrets,
    publicBaseUrl,
    url,
    envOf,
    proc(name) {
      const p = procs.get(name);
      if (!p) throw new Error(`${name} was not started`);
      return p;
    },
    async start(name, env) {
      const p = await startService(name, ports[name], { ...envOf(name), ...env }).catch((err: Error) => {
        throw new Error(`${name}: ${err.message}`);
      });
      procs.set(name, p);
      all.add(p);
      return p;
    },
    close: () => killAll(all),
  };
}

/** What a migration Job does before the rollout: each migrate entrypoint once; throws with its log on failure. */
export async function migrateAll(stack: Stack): Promise<void> {
  // Sequential on purpose: the bus schema is migrated by both auth's and the gateway's job, and
  // their advisory lock makes that safe, but a readable log on failure matters more than a second.
  for (const s of MIGRATING_SERVICES) {
    const r = await runMigrate(s, stack.envOf(s));
    if (r.code !== 0) throw new Error(`${s} dist/migrate.js exited ${r.code}:\n${[...r.stdout, ...r.stderr].join('\n')}`);
  }
}

/** Migrations, then every service (in parallel: they need each other only per request). */
export async function startStack(o: StackOptions, only: readonly ServiceName[] = SERVICES): Promise<Stack> {
  const stack = await defineStack(o);
  try {
    await migrateAll(stack);
    await Promise.all(only.map((s) => stack.start(s)));
    return stack;
  } catch (err) {
    await stack.close();
    throw err;
  }
}
