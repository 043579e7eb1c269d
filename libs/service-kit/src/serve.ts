import type { FastifyInstance } from 'fastify';
import { listen, onShutdown } from './lifecycle.ts';
import { listenMetrics } from './observability.ts';

export interface ServeOptions {
  /** The service's name: its metrics' `service` label and its part of /metrics. */
  name: string;
  port: number;
  host: string;
  /**
   * What closes after the app and the metrics port, in this order (the bus, clients, the database
   * pool, tracing): each runs once the requests in flight have finished.
   */
  closeAfter: (() => Promise<unknown> | undefined)[];
}

/**
 * The last step of a service's own process (its main.ts): /metrics, /healthz and /readyz on
 * METRICS_PORT (9464), never on the public port; graceful shutdown on SIGTERM and SIGINT (onShutdown:
 * /readyz answers 503 at once, app.close() stops accepting and lets the requests in flight finish,
 * then the metrics port and `closeAfter` close; exit 0, or 1 when SHUTDOWN_GRACE_MS runs out),
 * registered before listening so a signal during start-up stops gracefully too; then the public
 * port. Returns the base URL bound.
 */
export async function serveService(app: FastifyInstance, options: ServeOptions): Promise<string> {
  const metrics = await listenMetrics({ apps: [{ name: options.name, app }] });
  onShutdown(
    async () => {
      await app.close();
      await metrics.close();
      for (const close of options.closeAfter) await close();
    },
    { app },
  );
  return listen(app, options.port, options.host);
}
