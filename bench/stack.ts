// What the in-process benches share (bench:e2e, bench:wait): the services on one database (a fresh
// Postgres database with DATABASE_URL, else PGlite in memory) — workspace-api publishing on the bus,
// the workflow engine with its workspace client (in process, or over loopback HTTP) — internal tokens, calls as a user, and the CPU of
// this process and of the bench database's Postgres backends from /proc (so other load on the machine does not count).
import { readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, signInternalToken, type GuardedHttpClient, type Service, type SigningKeys } from '@flowdesk/service-kit';
import { buildApp as buildEngine, createGuardedHttpClient, migrateEngine, workspaceClient } from '@flowdesk/workflow-engine';
import { buildApp as buildWorkspaceApi, migrateWorkspace } from '@flowdesk/workspace-api';

// ---- CPU from /proc: a process, and the Postgres backends serving the bench's own database.
const TICK = 100; // USER_HZ
/** utime + stime + cutime + cstime of a process in ms (0 once it is gone). */
export function procCpuMs(pid: number | 'self'): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / TICK;
  } catch {
    return 0;
  }
}
/**
 * The CPU of a changing set of processes over a measurement: `sample` lists the processes to count
 * now (pid and CPU ms), called at start, every 250 ms and at stop. A process first seen after the
 * start did all its work within the measurement (counts from 0); one that exits keeps what it used
 * until its last sample.
 */
export function cpuSampler(sample: () => Iterable<[pid: number, cpuMs: number]>) {
  const seen = new Map<number, { base: number; last: number }>();
  const look = (starting: boolean) => {
    for (const [pid, cpu] of sample()) {
      const known = seen.get(pid);
      if (known) known.last = Math.max(known.last, cpu);
      else seen.set(pid, { base: starting ? cpu : 0, last: cpu });
    }
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      seen.clear();
      look(true);
      timer = setInterval(() => look(false), 250);
    },
    /** CPU ms since start. */
    stop(): number {
      clearInterval(timer);
      look(false);
      let total = 0;
      for (const { base, last } of seen.values()) total += last - base;
      return total;
    },
  };
}

/**
 * CPU of the Postgres processes serving one database: the backends whose process title names it
 * (`postgres: <user> <database> <client> <state>`, autovacuum workers included), and any pid
 * `extraPids` gives (pg_stat_activity's for that datname, bench:idle). The server's shared
 * processes (checkpointer, WAL writer) and other databases' backends (other suites on the machine) are
 * not counted.
 */
export function postgresCpu(database: string | undefined, extraPids: () => Iterable<number> = () => []) {
  return cpuSampler(function* () {
    if (!database) return;
    const extra = new Set(extraPids());
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      const pid = Number(d);
      try {
        if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() !== 'postgres') continue;
        const title = readFileSync(`/proc/${d}/cmdline`, 'utf8').replaceAll('\0', ' ');
        if (!extra.has(pid) && !title.includes(` ${database} `)) continue;
        yield [pid, procCpuMs(pid)];
      } catch {
        // gone meanwhile
      }
    }
  });
}

/**
 * CPU of a process and all its descendants (n8n's task runner, a worker a server forks), sampled like
 * postgresCpu: each process's own utime + stime, so a child reaped by its parent is not counted twice.
 */
export function processTreeCpu(root: number) {
  const own = (pid: number): { ppid: number; cpu: number } | undefined => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return { ppid: Number(f[1]), cpu: ((Number(f[11]) + Number(f[12])) * 1000) / TICK };
    } catch {
      return undefined;
    }
  };
  return cpuSampler(function* () {
    const all = new Map<number, { ppid: number; cpu: number }>();
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      const s = own(Number(d));
      if (s) all.set(Number(d), s);
    }
    const tree = new Set<number>([root]);
    for (let grew = true; grew;) {
      grew = false;
      for (const [pid, s] of all)
        if (!tree.has(pid) && tree.has(s.ppid)) {
          tree.add(pid);
          grew = true;
        }
    }
    for (const pid of tree) {
      const s = all.get(pid);
      if (s) yield [pid, s.cpu];
    }
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** workspace-api tokens signed with `keys` (an hour long), one per subject, client and scope. */
export function tokenSigner(keys: SigningKeys) {
  const tokens = new Map<string, string>();
  return (sub: string, azp: string, scope = 'mcp:read mcp:write') => {
    const id = `${sub} ${azp} ${scope}`;
    let t = tokens.get(id);
    if (!t) tokens.set(id, (t = signInternalToken(keys, { sub, aud: 'workspace-api', scope, azp }, { ttlSeconds: 3600 })));
    return t;
  };
}

export interface BenchStackOptions {
  /** The bus on the database (default: the embedded bus polling every 20 ms). */
  bus?: (db: TestDatabase) => Promise<EventBus>;
  /** The HTTP Request node's client (default: the guarded client, no allowlist); the stack closes it. */
  http?: GuardedHttpClient;
  /** The workflow engine's options beyond the stack's (concurrency, …). */
  engine?: Partial<Parameters<typeof buildEngine>[0]>;
  /**
   * How the engine reaches workspace-api: 'in-process' (default; as `npm start` does, through its
   * routes without a socket) or 'http' (its loopback port, as separate containers do).
   */
  workspaceTransport?: 'in-process' | 'http';
}

export interface BenchStack {
  keys: SigningKeys;
  token: ReturnType<typeof tokenSigner>;
  db: TestDatabase;
  bus: EventBus;
  api: Service;
  apiUrl: string;
  engine: Service;
  /** workspace-api's public API as `owner` (the bench's client): the JSON answer. */
  asUser(owner: string, method: string, path: string, body?: unknown): Promise<any>;
  /** Closes the engine, the bus, workspace-api and the database (services built on top close first). */
  close(): Promise<void>;
}

/** A fresh database with both services' migrations, a bus, workspace-api and the workflow engine, quiet. */
export async function startBenchStack(options: BenchStackOptions = {}): Promise<BenchStack> {
  const keys = generateSigningKeys();
  const token = tokenSigner(keys);
  const db = await createTestDatabase();
  await migrateWorkspace(db.db);
  await migrateEngine(db.db);
  const bus = await (options.bus ?? ((d) => createEmbeddedBus(d.db, { pollIntervalMs: 20 })))(db);
  const api = await buildWorkspaceApi({
    db: db.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    webhookSecretKey: randomBytes(32),
    publicBaseUrl: 'http://bench',
    logLevel: 'silent',
    events: bus,
  });
  const apiUrl = await listen(api, 0);
  const workspace = workspaceClient({
    ...(options.workspaceTransport === 'http' ? { workspaceApiUrl: apiUrl } : { workspaceApi: api }),
    userToken: async (sub) => token(sub, 'workflow-engine'),
    serviceToken: async () => token('svc:workflow-engine', 'workflow-engine', 'internal'),
  });
  const http = options.http ?? createGuardedHttpClient({});
  const engine = await buildEngine({ bus, db: db.db, jwtPublicKeyPem: keys.publicKeyPem, http, workspace, logLevel: 'silent', ...options.engine });
  await listen(engine, 0);
  return {
    keys,
    token,
    db,
    bus,
    api,
    apiUrl,
    engine,
    asUser: async (owner, method, path, body) =>
      (
        await fetch(`${apiUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${token(owner, 'bench')}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        })
      ).json(),
    async close() {
      await engine.close();
      await bus.close();
      await http.close();
      await workspace.close();
      await api.close();
      await db.close();
    },
  };
}

/** The name of the bench's own Postgres database (undefined on PGlite, which runs in this process). */
export const benchDatabaseName = (db: TestDatabase): string | undefined => (db.url ? decodeURIComponent(new URL(db.url).pathname.slice(1)) : undefined);
