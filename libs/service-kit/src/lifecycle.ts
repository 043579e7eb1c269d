import type { FastifyInstance } from 'fastify';

/** Listens on host:port and returns the base URL actually bound (port 0 picks a free one). */
export async function listen(app: FastifyInstance, port: number, host = '127.0.0.1'): Promise<string> {
  await app.listen({ port, host });
  const addr = app.server.address();
  const bound = addr && typeof addr === 'object' ? addr.port : port;
  // A wildcard address is where we listen, not where anyone can connect: name loopback instead.
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${bound}`;
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
