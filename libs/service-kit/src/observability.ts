import { createServer, type Server } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  collectProcessMetrics,
  contextFromHeaders,
  histogram,
  metricsText,
  METRICS_CONTENT_TYPE,
  otelContext,
  otelTrace,
  SECONDS_BUCKETS,
  serviceMetricsText,
  SpanKind,
  SpanStatusCode,
  tracer,
  tracingEnabled,
  type Span,
} from '@flowdesk/telemetry';

const httpDuration = histogram<'service' | 'method' | 'route' | 'status_code'>({
  name: 'flowdesk_http_request_duration_seconds',
  help: 'HTTP requests served, by service, method, route template and status code (its _count is the request rate)',
  labelNames: ['service', 'method', 'route', 'status_code'],
  buckets: SECONDS_BUCKETS,
});

/**
 * The route label is fastify's route template (`/api/v1/tasks/:id`), never the raw path: ids in a
 * label would make one series per task. A request that matched no route is `unmatched`.
 */
export const routeLabel = (req: FastifyRequest): string => req.routeOptions.url ?? 'unmatched';

// The request's server span, for its own hooks (a WeakMap: nothing added to the request's shape).
const spans = new WeakMap<FastifyRequest, { span: Span; ctx: ReturnType<typeof otelContext.active> }>();

/**
 * Every service's HTTP metrics and server spans, added once by createService. The span continues
 * the caller's W3C `traceparent` and is made the active context for the request's hooks and handler,
 * so outbound calls (undici) and bus publishes made while handling it become its children. The
 * context is set again before the handler: fastify reads the body in stream callbacks, which run in
 * the connection's async context, not in the onRequest hook's.
 */
export function instrumentHttp(app: FastifyInstance, service: string): void {
  // Tracing is started before the services are built (main.ts, the embedded start): when it is off,
  // the span hooks are not even registered, so a request pays for the histogram alone.
  if (tracingEnabled()) addSpanHooks(app, service);
  app.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done) => {
    const status = reply.statusCode;
    httpDuration.observe({ service, method: req.method, route: routeLabel(req), status_code: String(status) }, reply.elapsedTime / 1000);
    const s = spans.get(req);
    if (s) {
      s.span.setAttribute('http.response.status_code', status);
      if (status >= 500) s.span.setStatus({ code: SpanStatusCode.ERROR });
      s.span.end();
    }
    done();
  });
}

function addSpanHooks(app: FastifyInstance, service: string): void {
  app.addHook('onRequest', (req, _reply, done) => {
    const parent = contextFromHeaders(req.headers);
    const route = routeLabel(req);
    const span = tracer(service).startSpan(
      `${req.method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'http.route': route, 'flowdesk.service': service } },
      parent,
    );
    const ctx = otelTrace.setSpan(parent, span);
    spans.set(req, { span, ctx });
    otelContext.with(ctx, done);
  });
  app.addHook('preHandler', (req, _reply, done) => {
    const s = spans.get(req);
    if (s) otelContext.with(s.ctx, done);
    else done();
  });
}

export interface MetricsListenerOptions {
  /** Default METRICS_PORT, else 9464 (the port OpenTelemetry's Prometheus exporter uses by convention). */
  port?: number;
  host?: string;
  /**
   * The services in this process. One: `/metrics` is its registry (the process's), `/healthz` and
   * `/readyz` answer as its public port does. Several (the embedded start): `/metrics` is everything,
   * and `/metrics/<service>` each one's part.
   */
  apps: { name: string; app: FastifyInstance }[];
}

/**
 * The metrics and health port: separate from the public one, so the Ingress never exposes
 * `/metrics` and a NetworkPolicy can open it to the monitoring namespace alone. Plain node:http:
 * it must answer while the service's own fastify is busy or draining.
 */
export async function listenMetrics(options: MetricsListenerOptions): Promise<{ url: string; close(): Promise<void> }> {
  collectProcessMetrics();
  const names = new Set(options.apps.map((a) => a.name));
  const single = options.apps.length === 1 ? options.apps[0] : undefined;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    const fail = (err: unknown) => send(500, 'application/json', JSON.stringify({ error: 'internal_error', message: (err as Error).message }));
    if (req.method !== 'GET') return send(405, 'application/json', JSON.stringify({ error: 'method_not_allowed', message: 'GET only' }));
    if (path === '/metrics') return void metricsText().then((t) => send(200, METRICS_CONTENT_TYPE, t), fail);
    const m = /^\/metrics\/([a-z-]+)$/.exec(path);
    if (m && names.has(m[1]!)) return void serviceMetricsText(m[1]!).then((t) => send(200, METRICS_CONTENT_TYPE, t), fail);
    if (single && (path === '/healthz' || path === '/readyz')) {
      // The same answer as the public port's (readiness, draining): one definition of "ready".
      return void single.app.inject({ method: 'GET', url: path }).then((r) => send(r.statusCode, 'application/json', r.body), fail);
    }
    send(404, 'application/json', JSON.stringify({ error: 'not_found', message: `No route for GET ${path}` }));
  });
  const port = options.port ?? Number(process.env.METRICS_PORT || 9464);
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  const bound = addr && typeof addr === 'object' ? addr.port : port;
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host;
  return {
    url: `http://${reachable}:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
