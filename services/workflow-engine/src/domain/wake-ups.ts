/**
 * Listening for the database's wake-up notifications (the run queue, wait timers, the scheduler:
 * each a LISTEN channel, wired in app.ts). Calls fn with each notification's payload ('' after a
 * lost connection: look now); resolves with what stops listening.
 */
export type WakeUps = (fn: (payload: string) => void) => Promise<() => Promise<void>>;

/** A listener started by listenForWakeUps. */
export interface WakeUpListener {
  /** Settles once listening began, or failed (then the caller relies on its safety poll). */
  readonly ready: Promise<void>;
  /** Stops listening; never throws. */
  stop(): Promise<void>;
}

/**
 * Starts listening, if the caller was given wake-ups. When listening fails, `unavailable` is called
 * with the error (the caller warns and looks at every poll instead); nothing throws.
 */
export function listenForWakeUps(wakeUps: WakeUps | undefined, fn: (payload: string) => void, unavailable: (err: unknown) => void): WakeUpListener {
  let stopping: Promise<(() => Promise<void>) | undefined> = (wakeUps?.(fn) ?? Promise.resolve(undefined)).then(
    (stop) => stop,
    (err: unknown) => {
      unavailable(err);
      return undefined;
    },
  );
  return {
    ready: stopping.then(() => undefined),
    async stop() {
      const stop = await stopping;
      stopping = Promise.resolve(undefined);
      await stop?.().catch(() => {});
    },
  };
}
