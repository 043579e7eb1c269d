import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';

/** Listens on host:port and returns the base URL actually bound (port 0 picks a free one). */
export async function listen(app: FastifyInstance, port: number, host = '127.0.0.1'): Promise<string> {
  await app.listen({ port, host });
  const addr = app.server.address();
  const bound = addr && typeof addr === 'object' ? addr.port : port;
  // A wildcard address is where we listen, not where anyone can connect: name loopback instead.
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${bound}`;
}

// Apps that received a shutdown signal. createService's /readyz answers 503 for them, so a load
// balancer stops routing here before the listener goes away. A WeakSet, not a flag on the app:
// fastify forbids decorating or adding hooks once it listens, which is when a signal arrives.
const drainingApps = new WeakSet<object>();

/** True once `app` is shutting down (its /readyz answers 503 from then on). */
export function isDraining(app: object): boolean {
  return drainingApps.has(app);
}

export interface ShutdownLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ShutdownOptions {
  /** How long the whole shutdown may take before the process exits 1 anyway. Default SHUTDOWN_GRACE_MS or 25 000. */
  graceMs?: number;
  /**
   * How long /readyz answers 503 while the service still serves, before it stops accepting (so the
   * load balancer's next probe takes it out of rotation first). Default SHUTDOWN_DRAIN_MS or 0.
   */
  drainMs?: number;
  /** The service's app: /readyz answers 503 from the signal on, and its logger gets the shutdown lines. */
  app?: FastifyInstance;
  /** Where shutdown lines go when there is no app (default: failures to stderr, nothing else). */
  log?: ShutdownLog;
  /** Tests: what exiting means, and where signals come from. */
  exit?: (code: number) => void;
  signals?: { on(event: 'SIGTERM' | 'SIGINT', listener: (signal: NodeJS.Signals) => void): unknown };
}

// Without an app (the embedded start, whose terminal shows a banner): quiet unless it goes wrong.
const quietLog: ShutdownLog = {
  info: () => {},
  error: (obj, msg) => console.error(msg, obj),
};

function msFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number of milliseconds, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * Graceful shutdown on SIGTERM/SIGINT, the same in every service:
 * 1. /readyz answers 503 at once (the app is marked draining), and stays so for `drainMs`;
 * 2. `close` runs: the services close their app first (fastify stops accepting, answers 503 to new
 *    requests on open connections, lets in-flight requests finish, then runs onClose hooks, where bus
 *    consumers finish their in-flight messages and commit), then producers, clients and pools;
 * 3. exit 0 when that resolved, 1 when it threw.
 * A second signal, or the grace period running out, exits 1 at once: whatever was not finished is
 * then not acknowledged either (no 200 sent, no offset committed), so it is retried, not lost.
 * Returns the shutdown function itself, for a caller that decides to stop on its own.
 */
export function onShutdown(close: () => Promise<void>, options: number | ShutdownOptions = {}): (reason: string) => void {
  const o: ShutdownOptions = typeof options === 'number' ? { graceMs: options } : options;
  const graceMs = o.graceMs ?? msFromEnv('SHUTDOWN_GRACE_MS', 25_000);
  const drainMs = o.drainMs ?? msFromEnv('SHUTDOWN_DRAIN_MS', 0);
  const log: ShutdownLog = o.app ? o.app.log : (o.log ?? quietLog);
  const exitProcess = o.exit ?? ((code: number) => process.exit(code));
  let exited = false;
  // Whichever comes first decides the exit code (process.exit ends it anyway; an injected exit must not run twice).
  const exit = (code: number) => {
    if (exited) return;
    exited = true;
    exitProcess(code);
  };
  const signals = o.signals ?? process;
  let closing = false;

  const shutdown = (reason: string) => {
    if (closing) {
      log.error({ reason }, 'second shutdown signal: exiting now');
      exit(1);
      return;
    }
    closing = true;
    const started = Date.now();
    if (o.app) drainingApps.add(o.app);
    log.info({ reason, graceMs, drainMs }, 'shutting down: readiness now fails, finishing in-flight work');
    const timer = setTimeout(() => {
      log.error({ reason, graceMs }, 'shutdown did not finish within the grace period: exiting');
      exit(1);
    }, graceMs);
    // Not unref'd: if close() stalls on something that holds no handle, the process must still end
    // with 1 at the deadline rather than drift out of an empty event loop with 0.
    const drained = drainMs > 0 ? new Promise<void>((r) => setTimeout(r, Math.min(drainMs, graceMs))) : Promise.resolve();
    drained.then(close).then(
      () => {
        clearTimeout(timer);
        log.info({ reason, ms: Date.now() - started }, 'shut down cleanly');
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(timer);
        log.error({ reason, err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  // `on`, not `once`: the second signal must reach the handler (forcing exit) rather than Node's
  // default action, which would end the process by the signal instead of with exit code 1.
  const handler = (signal: NodeJS.Signals) => shutdown(signal);
  signals.on('SIGTERM', handler);
  signals.on('SIGINT', handler);
  return shutdown;
}

/**
 * A one-shot process (a migration job): runs `job`, logs its outcome as pino JSON like the
 * services' lines, and sets the exit code: 0 done, 1 failed (the error, with its cause, in the log).
 * The exit code is set rather than exiting, so the job's own cleanup (closing a pool) still runs.
 */
export async function runJob(service: string, name: string, job: () => Promise<object | void>): Promise<void> {
  const log = pino({ level: process.env.LOG_LEVEL || 'info', base: { service, job: name } });
  const started = Date.now();
  try {
    const result = await job();
    log.info({ ms: Date.now() - started, ...(result ?? {}) }, `${name} done`);
    process.exitCode = 0;
  } catch (err) {
    log.error({ err }, `${name} failed: ${(err as Error)?.message ?? String(err)}`);
    process.exitCode = 1;
  }
}
