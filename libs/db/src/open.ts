import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { gauge } from '@flowdesk/telemetry';
import { pgliteQueryAsUser, postgresQueryAsUser, type QueryAsUser } from './rls.ts';
import { openPglite } from './pglite-template.ts';

/**
 * Pool gauges (docs/observability.md), read from the open pools at scrape time: all of a process's
 * pools together (one per service process; the embedded start on Postgres shares one). PGlite has
 * one connection and no pool: nothing to report.
 */
const pools = new Set<pg.Pool>();
gauge<'state'>({
  name: 'flowdesk_db_pool_connections',
  help: 'Postgres pool connections by state: in_use (checked out), idle',
  labelNames: ['state'],
  collect() {
    let total = 0;
    let idle = 0;
    for (const p of pools) {
      total += p.totalCount;
      idle += p.idleCount;
    }
    this.set({ state: 'in_use' }, total - idle);
    this.set({ state: 'idle' }, idle);
  },
});
gauge({
  name: 'flowdesk_db_pool_waiting',
  help: 'Queries waiting for a Postgres pool connection (all at max): the pool is the bottleneck',
  collect() {
    let waiting = 0;
    for (const p of pools) waiting += p.waitingCount;
    this.set(waiting);
  },
});

/** Where the data lives: a Postgres server (production, CI) or PGlite (embedded start, tests without a server). */
export type DatabaseConfig =
  | { kind: 'postgres'; url: string; poolMax?: number }
  /** dataDir: a folder for durable data, or undefined for an in-memory database. */
  | { kind: 'pglite'; dataDir?: string };

/**
 * One opened database: a Prisma driver adapter for the service's client, and plain SQL for the
 * migration runner and tests. Both kinds speak real Postgres, so row-level security is the same.
 */
export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly adapter: SqlDriverAdapterFactory;
  /** Runs SQL outside Prisma (migrations, health checks); several statements allowed when no params. */
  exec: Exec;
  /**
   * Runs one statement as a user under row-level security (role and app.user_id set for its
   * transaction only): one round trip on Postgres, a plain transaction on PGlite. See rls.ts.
   */
  queryAsUser: QueryAsUser;
  /**
   * Runs fn on one dedicated connection, alone: session state (advisory locks, an open transaction)
   * stays on that connection, and on PGlite (one connection by nature) other sessions wait their turn.
   * Not for a transaction across several calls: on PGlite another caller's `exec` or Prisma query
   * could land inside it. Use `transaction` for that.
   */
  session<R>(fn: (exec: Exec) => Promise<R>): Promise<R>;
  /**
   * Runs fn in one transaction on one connection: committed when fn resolves, rolled back when it
   * throws. On PGlite this is PGlite's own transaction, which every other query waits for, so no
   * statement of another caller ever lands inside it (BEGIN through `session` could not ensure that).
   */
  transaction<R>(fn: (exec: Exec) => Promise<R>): Promise<R>;
  /**
   * Calls fn with each notification's payload on `channel` (a lower-case SQL identifier), sent by
   * `pg_notify(channel, payload)` in any statement of any process on the database once it commits:
   * LISTEN on one dedicated connection per Database on Postgres (not from the pool), PGlite's own
   * LISTEN in its one process. After the Postgres listener reconnects (its connection was cut) fn is
   * called once with '' (something may have been sent meanwhile). Resolves once listening; the
   * function it resolves with stops it. A wake-up, not a queue: notifications can be lost (a cut
   * connection), so whoever listens also polls, slowly (docs/event-bus.md, "Wake-ups").
   */
  listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** A channel name as LISTEN takes it (an identifier; only the names this code base chooses). */
function channelName(channel: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new RangeError(`not a channel name: ${JSON.stringify(channel)}`);
  return channel;
}

/**
 * One LISTEN connection for every channel of a Postgres Database, opened on the first listen and
 * reconnected (after 1 s, then up to 30 s apart) when it is cut; closed with the Database.
 */
function postgresListener(url: string): { listen: Database['listen']; close(): Promise<void> } {
  const handlers = new Map<string, Set<(payload: string) => void>>();
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let retryMs = 1_000;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  const connect = (): Promise<pg.Client> =>
    (connecting ??= (async () => {
      const c = new pg.Client({ connectionString: url });
      c.on('error', ignoreConnectionError);
      c.on('notification', (n) => {
        for (const fn of handlers.get(n.channel) ?? []) fn(n.payload ?? '');
      });
      c.on('end', () => {
        if (client !== c) return;
        client = undefined;
        if (!closed) reconnect();
      });
      try {
        await c.connect();
        for (const ch of handlers.keys()) await c.query(`LISTEN ${ch}`);
      } catch (err) {
        c.end().catch(() => {});
        throw err;
      } finally {
        connecting = undefined;
      }
      client = c;
      retryMs = 1_000;
      return c;
    })());
  const reconnect = () => {
    clearTimeout(retry);
    retry = setTimeout(() => {
      connect().then(
        () => {
          // Notifications sent while nobody listened are gone: every listener looks once.
          for (const set of handlers.values()) for (const fn of set) fn('');
        },
        () => {
          retryMs = Math.min(30_000, retryMs * 2);
          if (!closed) reconnect();
        },
      );
    }, retryMs);
    retry.unref();
  };
  return {
    async listen(channel, fn) {
      const ch = channelName(channel);
      let set = handlers.get(ch);
      const first = !set;
      if (!set) handlers.set(ch, (set = new Set()));
      set.add(fn);
      const c = client ?? (await connect());
      if (first) await c.query(`LISTEN ${ch}`);
      return async () => {
        set.delete(fn);
        if (set.size === 0 && handlers.get(ch) === set) {
          handlers.delete(ch);
          await client?.query(`UNLISTEN ${ch}`).catch(() => {});
        }
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = client ?? (await connecting?.catch(() => undefined));
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}

export type Exec = (sql: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

type Queryable = { query(sql: string, params?: unknown[]): Promise<unknown> };

/** A multi-statement query answers one result per statement; keep the last one's rows. */
function execOn(q: Queryable): Exec {
  return async (sql, params) => {
    const res = (await q.query(sql, params)) as { rows?: unknown[] } | { rows?: unknown[] }[];
    const last = Array.isArray(res) ? res[res.length - 1] : res;
    return { rows: (last?.rows ?? []) as Record<string, unknown>[] };
  };
}

/** The error reaches the statement in flight (or the holder's next one); nothing else to do here. */
function ignoreConnectionError(): void {}

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  if (config.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: config.url, max: config.poolMax ?? 10 });
    // An idle client that errors (server restart) must not crash the process; the pool drops it.
    pool.on('error', () => {});
    // A checked-out client has no listener of the pool's (pg-pool removes its idle listener at
    // checkout), so a connection cut while one is held — pg_terminate_backend, a failover, a pooler
    // restart — would emit an unhandled 'error' and end the process. Every client gets its own
    // listener for its whole life: the statement in flight, or the holder's next one, fails instead
    // ("not queryable"), and the pool discards the client when it is released.
    pool.on('connect', (client) => client.on('error', ignoreConnectionError));
    pools.add(pool);
    const listener = postgresListener(config.url);
    return {
      kind: 'postgres',
      listen: listener.listen,
      adapter: new PrismaPg(pool),
      exec: execOn(pool),
      queryAsUser: postgresQueryAsUser(pool),
      async session(fn) {
        const client = await pool.connect();
        try {
          return await fn(execOn(client));
        } finally {
          client.release();
        }
      },
      async transaction(fn) {
        const client = await pool.connect();
        let broken = false;
        try {
          await client.query('BEGIN');
          const result = await fn(execOn(client));
          await client.query('COMMIT');
          return result;
        } catch (err) {
          // A connection whose ROLLBACK fails is in an unknown state: the pool drops it.
          await client.query('ROLLBACK').catch(() => (broken = true));
          throw err;
        } finally {
          client.release(broken);
        }
      },
      close: async () => {
        pools.delete(pool);
        await listener.close();
        await pool.end();
      },
    };
  }
  const pglite = await openPglite(config.dataDir);
  const exec: Exec = async (sql, params) => {
    if (params && params.length > 0) {
      const res = await pglite.query(sql, params);
      return { rows: res.rows as Record<string, unknown>[] };
    }
    const results = await pglite.exec(sql);
    return { rows: results[results.length - 1]?.rows ?? [] };
  };
  let queue: Promise<unknown> = Promise.resolve();
  return {
    kind: 'pglite',
    adapter: new PrismaPGlite(pglite),
    exec,
    queryAsUser: pgliteQueryAsUser(pglite),
    session(fn) {
      const run = queue.then(() => fn(exec));
      queue = run.catch(() => {});
      return run;
    },
    transaction: (fn) => pglite.transaction((tx) => fn(execOn(tx))),
    async listen(channel, fn) {
      const unlisten = await pglite.listen(channelName(channel), fn);
      return () => unlisten();
    },
    close: () => pglite.close(),
  };
}
