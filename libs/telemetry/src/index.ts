export { collectProcessMetrics, counter, gauge, histogram, metricsText, serviceMetricsText, registry, METRICS_CONTENT_TYPE, SECONDS_BUCKETS } from './metrics.ts';
export { contextFromHeaders, currentTraceId, injectTraceHeaders, otelContext, otelTrace, SpanKind, SpanStatusCode, startTracing, tracer, tracingEnabled, withSpan, type Span, type TracingOptions } from './tracing.ts';
