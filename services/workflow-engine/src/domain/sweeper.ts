import type { LogPort } from './ports.ts';

/**
 * A housekeeping task run every `intervalMs` on this replica (each replica runs its own; the tasks are
 * idempotent deletes of rows past their time): one round at a time, a failure logged and tried again
 * at the next round, stopped with the engine (waits for a round in flight).
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly log: LogPort,
    private readonly task: () => Promise<unknown>,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  /** One round now (tests; also what the timer calls). Never rejects. */
  runOnce(): Promise<void> {
    this.round ??= this.task()
      .then(
        () => undefined,
        (err: unknown) => this.log.warn({ err }, 'a housekeeping sweep failed; trying again at the next round'),
      )
      .finally(() => {
        this.round = undefined;
      });
    return this.round;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.round;
  }
}
