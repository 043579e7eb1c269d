import { type Database } from '@flowdesk/db';
import type { ClaimResult, RunWrite } from '../domain/ports.ts';
import { type RunStep } from '@flowdesk/contracts';
import { checkpointKey, type StepCheckpoint } from '../domain/types.ts';
import { compactLoopResults } from '../domain/loop-results.ts';
import { asUser, jsonText, keyOf } from './run-rows.ts';

/**
 * True when a run write failed because of the data it carries, not the database: Postgres class 22
 * (data exception: a \u0000 or a lone surrogate in a JSON string) or 54 (program limit exceeded: a
 * statement too complex, a stack depth limit), or a RangeError while serialising it (nesting deeper
 * than the call stack). Writing the same data again can never succeed; anything else (the database
 * unreachable) may, so the bus retries it.
 */
export function isUnstorable(err: unknown): boolean {
  if (err instanceof RangeError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('54'));
}

interface Pending {
  write: RunWrite;
  resolve(written: ClaimResult): void;
  reject(err: unknown): void;
}

interface PendingStep {
  write: StepCheckpoint & { ownerId: string; workflowId: string; eventId: string; nodeId: string };
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * The run store's writes, batched: every write asked for during one turn of
 * the event loop (and while the previous batch is in flight) goes to Postgres as one statement,
 * `engine.record_runs(batch)` — one round trip and one commit for the whole batch, row-level security
 * applied per owner inside it. A batch that fails is retried one write at a time, so one bad run (a
 * payload Postgres refuses) fails alone.
 */
export class RunWriteBatcher {
  private queue: Pending[] = [];
  private steps: PendingStep[] = [];
  private scheduled = false;
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxBatch: number;
  private idle: (() => void)[] = [];
  private readonly listeners = new Set<(write: RunWrite) => void>();

  constructor(
    protected readonly db: Database,
    options: { maxInFlight?: number; maxBatch?: number } = {},
  ) {
    // PGlite is one connection: concurrent batches would only queue behind each other.
    this.maxInFlight = options.maxInFlight ?? (db.kind === 'pglite' ? 1 : 2);
    this.maxBatch = options.maxBatch ?? 500;
  }

  /**
   * Records a run (batched). Resolves true when the row was written, false when the run had already
   * finished (a finished run is never changed: for a claim, the event was handled before).
   */
  record(write: RunWrite): Promise<boolean> {
    return this.claim(write).then((r) => r !== false);
  }

  /** As record(), telling a claim of a new run from one of a run an engine claimed before ('resumed'). */
  claim(write: RunWrite): Promise<ClaimResult> {
    return new Promise<ClaimResult>((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.schedule();
    });
  }

  /** The RunRecorder port's isUnstorable: the function below. */
  isUnstorable(err: unknown): boolean {
    return isUnstorable(err);
  }

  /**
   * Stores executed steps of a running run (batched with every other write of the same turn: one
   * statement for runs and checkpoints). A step already stored is kept. Resolves once committed.
   */
  checkpoint(run: { ownerId: string; workflowId: string; eventId: string }, steps: StepCheckpoint[]): Promise<void> {
    if (steps.length === 0) return Promise.resolve();
    // One promise for the run's steps (not one each): resolved when the last is stored, rejected by the first failure.
    return new Promise<void>((resolve, reject) => {
      let left = steps.length;
      let failed = false;
      const done = {
        resolve: () => {
          if (--left === 0 && !failed) resolve();
        },
        reject: (err: unknown) => {
          if (failed) return;
          failed = true;
          reject(err);
        },
      };
      for (const c of steps) this.steps.push({ write: { ...run, nodeId: checkpointKey(c.step.nodeId, c.step.item), ...c }, ...done });
      this.schedule();
    });
  }

  /**
   * The checkpoints of one run, by checkpoint key (the node id; `<id>#<item>` in a loop body), read
   * only when a claim answered 'resumed' (a run taken
   * over, or a parked run woken). Batched: the reads asked for in one turn of the event loop go out
   * as one query per owner (woken runs come in bursts when many timers are due together).
   */
  checkpoints(run: { ownerId: string; workflowId: string; eventId: string }): Promise<Map<string, StepCheckpoint>> {
    return new Promise((resolve, reject) => {
      this.reads.push({ run, resolve, reject });
      if (this.reads.length === 1) setImmediate(() => void this.readCheckpoints(this.reads.splice(0)));
    });
  }

  private reads: { run: { ownerId: string; workflowId: string; eventId: string }; resolve(m: Map<string, StepCheckpoint>): void; reject(e: unknown): void }[] =
    [];

  private async readCheckpoints(reads: RunWriteBatcher['reads']): Promise<void> {
    const byOwner = new Map<string, RunWriteBatcher['reads']>();
    for (const r of reads) byOwner.set(r.run.ownerId, [...(byOwner.get(r.run.ownerId) ?? []), r]);
    for (const [owner, rs] of byOwner) {
      try {
        const { rows } = await asUser(this.db, owner, (exec) =>
          exec(
            `SELECT workflow_id::text || '/' || event_id AS k, node_id, step::text AS step, output::text AS output, branch FROM "engine"."run_step"
              WHERE (workflow_id, event_id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
            [rs.map((r) => r.run.workflowId), rs.map((r) => r.run.eventId)],
          ),
        );
        const maps = new Map<string, Map<string, StepCheckpoint>>();
        for (const r of rows) {
          const k = String(r.k);
          if (!maps.has(k)) maps.set(k, new Map());
          maps
            .get(k)!
            .set(String(r.node_id), { step: jsonText(r.step) as RunStep, output: jsonText(r.output), ...(r.branch ? { branch: r.branch as string } : {}) });
        }
        for (const r of rs) r.resolve(maps.get(keyOf(r.run)) ?? new Map<string, StepCheckpoint>());
      } catch (err) {
        for (const r of rs) r.reject(err);
      }
    }
  }

  /**
   * Calls `listener` with every write that reached the table (claims and outcomes), after its batch
   * committed: the runs stream (routes/runs.ts) is fed from here. Returns the unsubscribe.
   */
  onRecorded(listener: (write: RunWrite) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells the onRecorded listeners of these writes (and of a cancel: RunControlStore). */
  announce(writes: RunWrite[], written: Map<string, ClaimResult>): void {
    if (this.listeners.size === 0) return;
    for (const w of writes) {
      if (!written.has(keyOf(w))) continue;
      for (const l of this.listeners) {
        try {
          l(w);
        } catch {
          // A listener's failure (a closed stream) never fails the write.
        }
      }
    }
  }

  /** Resolves once every write asked for so far has been answered. */
  async drain(): Promise<void> {
    if (this.queue.length === 0 && this.steps.length === 0 && this.inFlight === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || (this.queue.length === 0 && this.steps.length === 0)) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.inFlight >= this.maxInFlight || (this.queue.length === 0 && this.steps.length === 0)) return;
      const batch = this.queue.splice(0, this.maxBatch);
      const steps = this.steps.splice(0, this.maxBatch);
      this.inFlight++;
      void this.flush(batch, steps).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0 || this.steps.length > 0) this.schedule();
        else if (this.inFlight === 0) for (const done of this.idle.splice(0)) done();
      });
    });
  }

  private async flush(batch: Pending[], steps: PendingStep[]): Promise<void> {
    // One row per run and batch: ON CONFLICT cannot touch a row twice in one statement. The last
    // write of a run wins; earlier ones of the same run in this batch get its answer.
    const byKey = new Map<string, Pending[]>();
    for (const p of batch) {
      const k = `${p.write.ownerId}/${keyOf(p.write)}`;
      byKey.set(k, [...(byKey.get(k) ?? []), p]);
    }
    const writes = [...byKey.values()].map((ps) => ps[ps.length - 1]!.write);
    const answer = (p: Pending, written: Map<string, ClaimResult>) => p.resolve(written.get(keyOf(p.write)) ?? false);
    try {
      const written = await this.write(
        writes,
        steps.map((s) => s.write),
      );
      this.announce(writes, written);
      for (const ps of byKey.values()) for (const p of ps) answer(p, written);
      for (const s of steps) s.resolve();
    } catch (err) {
      if (writes.length + steps.length === 1) {
        for (const p of batch) p.reject(err);
        for (const s of steps) s.reject(err);
        return;
      }
      for (const ps of byKey.values()) {
        try {
          const written = await this.write([ps[ps.length - 1]!.write], []);
          this.announce([ps[ps.length - 1]!.write], written);
          for (const p of ps) answer(p, written);
        } catch (one) {
          for (const p of ps) p.reject(one);
        }
      }
      for (const s of steps)
        await this.write([], [s.write]).then(
          () => s.resolve(),
          (e: unknown) => s.reject(e),
        );
    }
  }

  /** One statement for the batch: checkpoints first, then the runs; a '+' before a key is a resumed claim. */
  private async write(writes: RunWrite[], steps: PendingStep['write'][]): Promise<Map<string, ClaimResult>> {
    const stored = writes.map((w) => (w.steps ? { ...w, steps: compactLoopResults(w.steps) } : w));
    const { rows } = await this.db.exec('SELECT "engine".record_runs($1::jsonb, $2::jsonb) AS k', [JSON.stringify(stored), JSON.stringify(steps)]);
    return new Map(rows.map((r) => String(r.k)).map((k) => (k.startsWith('+') ? [k.slice(1), 'resumed'] : [k, 'new'])));
  }
}
