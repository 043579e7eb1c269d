/** The database role every user-scoped transaction runs as: no BYPASSRLS, bound by every policy. */
export const APP_ROLE = 'flowdesk_app';

/** The setting every policy reads (through workspace.current_user_id() and its siblings). */
export const USER_ID = 'app.user_id';

const ROLE = /^[a-z_][a-z0-9_]*$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The longest a user's statement may run before Postgres cancels it (and its transaction). */
export const USER_STATEMENT_TIMEOUT = '10s';

/** The context statement: role, user and a statement timeout, all transaction-local. */
export const CONTEXT_SQL = `SELECT set_config('role', '${APP_ROLE}', true), set_config('${USER_ID}', $1, true), set_config('statement_timeout', '${USER_STATEMENT_TIMEOUT}', true)`;

/**
 * The one statement that makes a transaction a user's (row-level security): run it first in the
 * transaction, with its values. Every user-scoped path uses it (queryAsUser, withUser, the engine's
 * stores), so none can leave out the role, the user or the statement timeout.
 */
export function userContext(userId: string): { text: string; values: [string] } {
  if (typeof userId !== 'string' || !UUID.test(userId)) throw new TypeError('user id must be a UUID');
  return { text: CONTEXT_SQL, values: [userId] };
}

export interface RawCapable {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

export interface TransactionCapable<Tx> {
  $transaction<R>(fn: (tx: Tx) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
}

/**
 * Runs fn in one transaction as `userId`: SET LOCAL ROLE to the app role (so a superuser or table
 * owner connection is still bound by the policies), app.user_id and the statement timeout set
 * transaction-locally (userContext), so the pooled connection carries none of them into the next
 * request once the transaction ends.
 */
export async function withUser<Tx extends RawCapable, R>(
  client: TransactionCapable<Tx>,
  userId: string,
  fn: (tx: Tx) => Promise<R>,
  options: { timeoutMs?: number } = {},
): Promise<R> {
  if (!UUID.test(userId)) throw new TypeError('withUser: user id must be a UUID');
  const context = userContext(userId);
  return client.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(context.text, ...context.values);
      return fn(tx);
    },
    { maxWait: 5_000, timeout: options.timeoutMs ?? 10_000 },
  );
}

/**
 * Runs fn in one transaction as a narrow database role (SET LOCAL, like withUser) with no user set:
 * for the few service lookups that precede any user, e.g. a webhook trigger by workflow id. What the
 * role may read is decided by its grants and policies in the migrations.
 */
export async function withRole<Tx extends RawCapable, R>(client: TransactionCapable<Tx>, role: string, fn: (tx: Tx) => Promise<R>): Promise<R> {
  if (!ROLE.test(role)) throw new TypeError('withRole: invalid role name');
  return client.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(`SELECT set_config('role', '${role}', true)`);
      return fn(tx);
    },
    { maxWait: 5_000, timeout: 10_000 },
  );
}
