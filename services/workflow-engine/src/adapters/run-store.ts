import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, type Database } from '@flowdesk/db';

import type { RunRecorder } from '../domain/ports.ts';
import { RunControlStore } from './run-control-store.ts';
import { RunReads } from './run-reads.ts';
import { RunRetention } from './run-retention.ts';
import { RunWriteBatcher } from './run-writes.ts';

export { isUnstorable } from './run-writes.ts';
export { DEAD_LETTER_ERROR_PREFIX } from './run-rows.ts';
export type { RunListFilter } from './run-reads.ts';
export type { PruneRule } from './run-retention.ts';

export const ENGINE_SCHEMA = 'engine';
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');

/** Applies the engine's pending migrations (its `engine` schema: runs and their steps). */
export const migrateEngine = (db: Database) => migrate(db, MIGRATIONS_DIR, ENGINE_SCHEMA);

/**
 * The engine's runs, on its own schema: one object over four parts, each in its own file — the
 * batched writes (run-writes.ts: claims, outcomes and checkpoints, one statement per turn), the
 * reads (run-reads.ts), run control (run-control-store.ts: queue, cancel) and retention
 * (run-retention.ts).
 */
export class RunStore extends RunWriteBatcher implements RunRecorder {
  private readonly reads_ = new RunReads(this.db);
  private readonly control = new RunControlStore(this.db, (writes, written) => this.announce(writes, written));
  private readonly retention = new RunRetention(this.db);

  readonly list = this.reads_.list.bind(this.reads_);
  readonly getByEvent = this.reads_.getByEvent.bind(this.reads_);
  readonly get = this.reads_.get.bind(this.reads_);
  readonly summary = this.reads_.summary.bind(this.reads_);
  readonly health = this.reads_.health.bind(this.reads_);

  readonly queueManual = this.control.queueManual.bind(this.control);
  readonly cancel = this.control.cancel.bind(this.control);
  readonly keepCancelledSteps = this.control.keepCancelledSteps.bind(this.control);
  readonly cancelledAmong = this.control.cancelledAmong.bind(this.control);

  readonly prune = this.retention.prune.bind(this.retention);
  readonly deleteWorkflowRuns = this.retention.deleteWorkflowRuns.bind(this.retention);
}
