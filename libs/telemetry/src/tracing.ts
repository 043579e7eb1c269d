import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node';

export { SpanKind, SpanStatusCode, type Span };

/**
 * Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (or a test hands an exporter): then no
 * tracer provider is registered, every span below is the API's no-op one, and the helpers return
 * before building headers or attributes, so tracing costs a boolean check per call.
 */
let enabled = false;
let provider: NodeTracerProvider | undefined;

export function tracingEnabled(): boolean {
  return enabled;
}

export interface TracingOptions {
  /** service.name of the spans' resource (`flowdesk` for the embedded start: one process, all services). */
  serviceName: string;
  /** Default OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the exporter reads them itself). */
  env?: Record<string, string | undefined>;
  /** Tests: spans go here, each at once (SimpleSpanProcessor), instead of by OTLP. */
  exporter?: SpanExporter;
}

/**
 * Starts tracing for this process when configured; returns how to flush and stop it. Idempotent:
 * the first call wins (a process has one global tracer provider).
 *
 * Manual spans (the API) for what Flowdesk does — server requests (service-kit), bus publish and
 * handling (libs/bus), runs and nodes (engine), tool calls (gateway) — plus the undici
 * instrumentation for outbound HTTP, which hooks undici's diagnostics channels rather than patching
 * modules, so it works under ESM and tsx without a loader (docs/observability.md).
 */
export function startTracing(options: TracingOptions): { shutdown(): Promise<void> } {
  const env = options.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (provider) return { shutdown: () => provider!.shutdown() };
  if (!options.exporter && !endpoint) return { shutdown: async () => {} };
  const processor = options.exporter ? new SimpleSpanProcessor(options.exporter) : new BatchSpanProcessor(new OTLPTraceExporter());
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || options.serviceName }),
    spanProcessors: [processor],
  });
  // Registers the AsyncLocalStorage context manager and the W3C traceparent/baggage propagator.
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [new UndiciInstrumentation()],
  });
  enabled = true;
  return { shutdown: () => provider!.shutdown() };
}

/** The tracer of one service or library (its instrumentation scope names who made the span). */
export const tracer = (name: string) => trace.getTracer(name);

/**
 * Runs fn inside a new span (child of `parent`, else of the current span); the span ends when fn
 * settles, with an error status when it throws. Off: fn runs as is.
 */
export function withSpan<T>(
  scope: string,
  name: string,
  fn: (span: Span | undefined) => Promise<T> | T,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context } = {},
): Promise<T> {
  if (enabled) return spanned(scope, name, fn, options);
  // Off: fn's own promise, not one wrapped around it (the engine calls this once per step).
  try {
    return Promise.resolve(fn(undefined));
  } catch (err) {
    return Promise.reject(err);
  }
}

async function spanned<T>(
  scope: string,
  name: string,
  fn: (span: Span | undefined) => Promise<T> | T,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer(scope).startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
    throw err;
  } finally {
    span.end();
  }
}

/** Headers with the current context's `traceparent` (and `tracestate`) added; the same object when off. */
export function injectTraceHeaders(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!enabled) return headers;
  const out: Record<string, string> = { ...headers };
  propagation.inject(context.active(), out);
  return out;
}

/** The context a `traceparent` in these headers names (root when none). */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  return enabled ? propagation.extract(ROOT_CONTEXT, headers) : ROOT_CONTEXT;
}

/** The current span's trace id, for a record to keep (the engine's run); undefined when off. */
export function currentTraceId(): string | undefined {
  if (!enabled) return undefined;
  const ctx = trace.getSpanContext(context.active());
  return ctx && trace.isSpanContextValid(ctx) ? ctx.traceId : undefined;
}

export { context as otelContext, trace as otelTrace };
