import { createHash } from 'node:crypto';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { CONTEXT_SQL, userContext } from './with-user.ts';

/**
 * Runs one statement as a user, bound by row-level security: the app role and `app.user_id` are set
 * transaction-locally before the statement, in the same transaction, so nothing outlives it on a
 * pooled connection. One interface, two adapters:
 * - Postgres: ONE round trip. The context statement and the user's statement go out in one write as
 *   extended-protocol messages closed by a single Sync, so both run in one implicit transaction
 *   (committed at Sync, rolled back as a whole if either fails). The user's statement is a named
 *   prepared statement, parsed once per connection; parameters stay bound values, never SQL text.
 * - PGlite: a plain transaction (round trips are in-process calls there).
 * Measured against the alternatives in docs/data-and-rls.md.
 */
export type QueryAsUser = <Row = Record<string, unknown>>(userId: string, text: string, values?: unknown[]) => Promise<Row[]>;

export { CONTEXT_SQL, USER_STATEMENT_TIMEOUT } from './with-user.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function assertUserId(userId: string): void {
  if (typeof userId !== 'string' || !UUID.test(userId)) throw new TypeError('queryAsUser: user id must be a UUID');
}

/** A prepared statement's name: the same text always gets the same name, on every connection. */
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `fd_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    if (statementNames.size < 10_000) statementNames.set(text, name);
  }
  return name;
}

// pg's internals this adapter builds on: the Submittable Query (the same extension point pg-cursor
// uses), the wire-protocol writer of a connection, and pg's own value mapping for bound parameters.
interface Wire {
  stream: { cork?: () => void; uncork?: () => void };
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(m: { text: string; name: string; types?: unknown[] }): void;
  bind(m: { portal: string; statement: string; values: unknown[]; binary?: boolean; valueMapper: unknown }): void;
  describe(m: { type: 'P' | 'S'; name: string }): void;
  execute(m: { portal: string; rows: number }): void;
  close(m: { type: 'P' | 'S'; name: string }): void;
  sync(): void;
}
interface PgQueryInternals {
  text: string;
  name: string;
  values: unknown[] | undefined;
  binary: boolean;
  types: unknown;
  hasBeenParsed(connection: Wire): boolean;
  handleError(err: Error, connection: Wire): void;
}
const { prepareValue } = (pg as unknown as { utils?: { prepareValue: unknown } }).utils ?? {};
const PgQuery = pg.Query as unknown as new (config: pg.QueryConfig) => pg.Query & PgQueryInternals;

/**
 * pg's Query, written as: [Parse stmt, if this connection has not prepared it], Parse/Bind/Describe/
 * Execute of the context statement (unnamed), Bind/Describe/Execute of the named statement, Sync —
 * corked into one write. The statement's Parse goes first so that, if it fails, nothing else runs
 * and pg's bookkeeping of prepared statements stays right. The answer is two results; the caller
 * keeps the second.
 */
class RlsQuery extends PgQuery {
  constructor(
    config: pg.QueryConfig,
    private readonly userId: string,
  ) {
    super(config);
  }

  prepare(connection: Wire): void {
    if (!this.hasBeenParsed(connection)) {
      connection.parse({ text: this.text, name: this.name, types: this.types as unknown[] });
      connection.submittedNamedStatements[this.name] = this.text;
    }
    try {
      connection.parse({ text: CONTEXT_SQL, name: '' });
      connection.bind({ portal: '', statement: '', values: [this.userId], valueMapper: prepareValue });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '', rows: 0 });
      connection.bind({ portal: '', statement: this.name, values: this.values ?? [], binary: this.binary, valueMapper: prepareValue });
    } catch (err) {
      // A value pg cannot map (it throws before the statement's Bind is written): end the round
      // — at most the context statement runs, undone when its implicit transaction ends — and
      // report; the caller discards this connection (a client-side error has no severity).
      connection.sync();
      this.handleError(err as Error, connection);
      return;
    }
    connection.describe({ type: 'P', name: '' });
    connection.execute({ portal: '', rows: 0 });
    connection.sync();
  }
}

/** Postgres: one round trip per statement over the given pool (the same pool Prisma uses). */
export function postgresQueryAsUser(pool: pg.Pool): QueryAsUser {
  return async <Row>(userId: string, text: string, values: unknown[] = []) => {
    assertUserId(userId);
    const query = new RlsQuery({ text, values, name: statementName(text) }, userId);
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      const res = await new Promise<pg.QueryResult[]>((resolve, reject) => {
        client.query(query as unknown as pg.QueryConfig, (err: Error | undefined, r: unknown) => (err ? reject(err) : resolve(r as pg.QueryResult[])));
      });
      return res[1]!.rows as Row[];
    } catch (err) {
      // A server error leaves the connection clean (the implicit transaction ended at Sync); a
      // connection-level failure does not, nor does a FATAL one (the server ends the session:
      // pg_terminate_backend, a shutdown), so that client is discarded, not handed out again.
      const severity = (err as { severity?: string }).severity;
      if (!severity || severity === 'FATAL' || severity === 'PANIC') broken = err as Error;
      throw err;
    } finally {
      client.release(broken);
    }
  };
}

/** PGlite: one in-process transaction with the same context statement. */
export function pgliteQueryAsUser(pglite: PGlite): QueryAsUser {
  return async <Row>(userId: string, text: string, values: unknown[] = []) => {
    assertUserId(userId);
    const context = userContext(userId);
    return pglite.transaction(async (tx) => {
      await tx.query(context.text, context.values);
      return (await tx.query(text, values)).rows as Row[];
    });
  };
}
