/**
 * The OAuth edge's background sweep (docs/auth.md, "Rows the sweep deletes"; docs/operations.md):
 * rows that anonymous requests leave behind and nothing else would ever delete.
 *
 * - pending consent requests (`oauth_consent_request`) past their expiry, answered or not: every
 *   `GET /oauth/authorize` stores one, and an expired one can never be used again;
 * - clients of Client ID Metadata Documents (`oauth_client` with a `metadata_url`) that nobody uses:
 *   no live grant, no pending consent, and their cached document expired (10 minutes ago or more). Such a row is only a stale
 *   copy of a document the next authorization request would fetch again anyway (and then makes a new
 *   row). Its revoked grants, codes and tokens go with it (ON DELETE CASCADE): none of them works.
 *
 * In batches (each its own statement), so a large backlog never holds locks for long; every replica
 * may run it at once (a row is deleted once, the others find nothing).
 */
import type { PrismaClient } from '../../generated/prisma/client.ts';
import { CONSENT_REQUEST_TTL_SECONDS } from './policy.ts';

export const OAUTH_SWEEP = {
  /** How often each replica sweeps. */
  intervalMs: 5 * 60_000,
  /** Rows per delete statement. */
  batch: 1000,
  /** Batches per table and round: a bigger backlog is worked off over the following rounds. */
  maxBatches: 20,
  /**
   * A document client goes only once its document has been expired this long (the life of a consent
   * page): a request that found the row still fresh a moment ago can finish storing its consent.
   */
  metadataClientGraceMs: CONSENT_REQUEST_TTL_SECONDS * 1000,
} as const;

export interface SweepResult {
  consentRequests: number;
  metadataClients: number;
}

export async function sweepOAuthRows(prisma: PrismaClient, now: Date, opts: { batch?: number; maxBatches?: number } = {}): Promise<SweepResult> {
  const batch = opts.batch ?? OAUTH_SWEEP.batch;
  const maxBatches = opts.maxBatches ?? OAUTH_SWEEP.maxBatches;
  const result: SweepResult = { consentRequests: 0, metadataClients: 0 };
  for (let i = 0; i < maxBatches; i++) {
    const n = await prisma.$executeRaw`
      DELETE FROM "auth"."oauth_consent_request" WHERE "id" IN (
        SELECT "id" FROM "auth"."oauth_consent_request" WHERE "expires_at" <= ${now} LIMIT ${batch})`;
    result.consentRequests += n;
    if (n < batch) break;
  }
  const expiredBefore = new Date(now.getTime() - OAUTH_SWEEP.metadataClientGraceMs);
  for (let i = 0; i < maxBatches; i++) {
    // The conditions are checked again on the row itself as it is deleted (READ COMMITTED re-evaluates
    // a concurrently updated row): a document fetched again meanwhile has a new expiry and stays.
    const n = await prisma.$executeRaw`
      DELETE FROM "auth"."oauth_client" c WHERE c."id" IN (
        SELECT x."id" FROM "auth"."oauth_client" x
        WHERE x."metadata_url" IS NOT NULL AND x."metadata_expires_at" <= ${expiredBefore}
        AND NOT EXISTS (SELECT 1 FROM "auth"."oauth_grant" g WHERE g."client_id" = x."id" AND g."revoked_at" IS NULL)
        AND NOT EXISTS (SELECT 1 FROM "auth"."oauth_consent_request" r WHERE r."client_id" = x."id" AND r."expires_at" > ${now})
        LIMIT ${batch})
      AND c."metadata_url" IS NOT NULL AND c."metadata_expires_at" <= ${expiredBefore}
      AND NOT EXISTS (SELECT 1 FROM "auth"."oauth_grant" g WHERE g."client_id" = c."id" AND g."revoked_at" IS NULL)
      AND NOT EXISTS (SELECT 1 FROM "auth"."oauth_consent_request" r WHERE r."client_id" = c."id" AND r."expires_at" > ${now})`;
    result.metadataClients += n;
    if (n < batch) break;
  }
  return result;
}

/** Runs the sweep every `intervalMs` until stopped; a failed round is logged and the next one tries again. */
export function startOAuthSweep(
  prisma: PrismaClient,
  now: () => Date,
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void },
  intervalMs: number = OAUTH_SWEEP.intervalMs,
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const round = async () => {
    try {
      const swept = await sweepOAuthRows(prisma, now());
      if (swept.consentRequests + swept.metadataClients > 0) log.info(swept, 'oauth rows swept');
    } catch (err) {
      log.warn({ err }, 'oauth sweep failed; the next round tries again');
    }
  };
  const timer = setInterval(() => {
    if (!running) running = round().finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
