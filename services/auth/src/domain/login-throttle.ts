import { HttpError } from '@flowdesk/contracts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { normalizeEmail } from './users.ts';

/**
 * Login throttling (docs/auth.md, "Login throttling"): every password check — console sign-in,
 * password change, the OAuth login form — first reserves an attempt for the account (normalised
 * email) and for the client address. The first `free` attempts of a key pass at once; after that
 * each one opens the next only after an exponentially growing wait (1 s, 2 s, 4 s … capped). An
 * attempt is counted BEFORE its password is checked, in one conditional upsert per key, so parallel
 * requests queue on the row and cannot slip through together, and a correct password does not pass
 * a running wait either. A successful sign-in clears the account's count and gives the address its
 * attempt back. The counters live in the database (auth.login_throttle), so every auth replica
 * shares them.
 */
export interface ThrottlePolicy {
  /** Attempts allowed without any wait. */
  free: number;
  /** The first wait after the free ones; doubled for each further attempt. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A key untouched this long starts again from zero. */
  forgetAfterMs: number;
}

export interface ThrottlePolicies {
  account: ThrottlePolicy;
  address: ThrottlePolicy;
}

const DAY = 24 * 60 * 60_000;
export const DEFAULT_THROTTLE: ThrottlePolicies = {
  account: { free: 5, baseDelayMs: 1_000, maxDelayMs: 15 * 60_000, forgetAfterMs: DAY },
  // Larger: several people behind one NAT share an address.
  address: { free: 20, baseDelayMs: 1_000, maxDelayMs: 15 * 60_000, forgetAfterMs: DAY },
};

/** The wait opened by the n-th counted attempt. */
export const delayAfter = (p: ThrottlePolicy, n: number): number =>
  n <= p.free ? 0 : Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** Math.min(n - p.free - 1, 40));

export interface ThrottleTicket {
  accountKey: string;
  addressKey: string;
}

/** The `next_allowed_at` of a key that has no wait open. */
const NO_WAIT = new Date(0);

export class TooManyAttempts extends HttpError {
  constructor(readonly retryAfterSeconds: number) {
    super('too_many_requests', `Too many sign-in attempts. Try again in ${retryAfterSeconds} s.`, { 'retry-after': String(retryAfterSeconds) });
  }
}

export class LoginThrottle {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly policies: ThrottlePolicies = DEFAULT_THROTTLE,
  ) {}

  /**
   * Counts one attempt for the address, then for the account; throws TooManyAttempts (nothing else
   * counted) while either has to wait. The caller checks the password only after this returned.
   */
  async reserve(email: string, address: string, now: Date): Promise<ThrottleTicket> {
    const ticket = { accountKey: `account:${normalizeEmail(email)}`, addressKey: `address:${address}` };
    await this.take(ticket.addressKey, this.policies.address, now);
    await this.take(ticket.accountKey, this.policies.account, now);
    return ticket;
  }

  /** The password was right: the account starts from zero, the address gets its attempt back. */
  async succeeded(ticket: ThrottleTicket): Promise<void> {
    await this.prisma.loginThrottle.deleteMany({ where: { key: ticket.accountKey } });
    const free = this.policies.address.free;
    await this.prisma.$executeRaw`
      UPDATE "auth"."login_throttle"
         SET "failures" = GREATEST("failures" - 1, 0),
             "next_allowed_at" = CASE WHEN "failures" - 1 <= ${free} THEN ${NO_WAIT} ELSE "next_allowed_at" END
       WHERE "key" = ${ticket.addressKey}`;
  }

  private async take(key: string, p: ThrottlePolicy, now: Date): Promise<void> {
    const forgetBefore = new Date(now.getTime() - p.forgetAfterMs);
    // "No wait" is stored as the epoch, not as `now`: requests run concurrently with clocks read a
    // moment apart, and an attempt whose `now` is a millisecond older than the one stored by its
    // neighbour must not be refused while the key is still within its free attempts.
    const first = delayAfter(p, 1) === 0 ? NO_WAIT : new Date(now.getTime() + delayAfter(p, 1));
    // The new count, and the wait it opens, computed in the statement from the row as locked: two
    // concurrent attempts see each other's count, never the same one.
    const rows = await this.prisma.$queryRaw<{ failures: number }[]>`
      INSERT INTO "auth"."login_throttle" AS t ("key", "failures", "next_allowed_at", "updated_at")
      VALUES (${key}, 1, ${first}, ${now})
      ON CONFLICT ("key") DO UPDATE SET
        "failures" = CASE WHEN t."updated_at" < ${forgetBefore} THEN 1 ELSE t."failures" + 1 END,
        "next_allowed_at" = CASE WHEN (CASE WHEN t."updated_at" < ${forgetBefore} THEN 1 ELSE t."failures" + 1 END) <= ${p.free} THEN ${NO_WAIT}
          ELSE ${now}::timestamptz + make_interval(secs => LEAST(${p.maxDelayMs}::float8,
                 ${p.baseDelayMs}::float8 * power(2::float8, LEAST((CASE WHEN t."updated_at" < ${forgetBefore} THEN 1 ELSE t."failures" + 1 END) - ${p.free} - 1, 40))) / 1000.0)
          END,
        "updated_at" = ${now}
      WHERE t."next_allowed_at" <= ${now}
      RETURNING t."failures"`;
    if (rows.length > 0) return;
    const row = await this.prisma.loginThrottle.findUnique({ where: { key } });
    const waitMs = row ? row.nextAllowedAt.getTime() - now.getTime() : 1000;
    throw new TooManyAttempts(Math.max(1, Math.ceil(waitMs / 1000)));
  }
}
