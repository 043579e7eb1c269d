import type { FastifyInstance } from 'fastify';

/** Listens on host:port and returns the base URL actually bound (port 0 picks a free one). */
export async function listen(app: FastifyInstance, port: number, host = '127.0.0.1'): Promise<string> {
  await app.listen({ port, host });
  const addr = app.server.address();
  if (addr && typeof addr === 'object') return `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
  return `http://${host}:${port}`;
}

/**
 * On SIGTERM/SIGINT: stop accepting, let in-flight requests finish (fastify's close), run cleanup,
 * exit. A second signal, or the grace period running out, exits at once.
 */
export function onShutdown(close: () => Promise<void>, graceMs = Number(process.env.SHUTDOWN_GRACE_MS ?? 25_000)): void {
  let closing = false;
  const handler = (signal: NodeJS.Signals) => {
    if (closing) process.exit(1);
    closing = true;
    const timer = setTimeout(() => process.exit(1), graceMs);
    timer.unref();
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`shutdown after ${signal} failed`, err);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
