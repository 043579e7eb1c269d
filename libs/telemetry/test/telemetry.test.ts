// The telemetry library's own contract: one registry split per service for the embedded start's
// /metrics/<service>, and spans that cost nothing while tracing is off and nest and propagate when on.
// (End to end through the services: embedded/test/metrics.test.ts and tracing.test.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contextFromHeaders, counter, currentTraceId, histogram, injectTraceHeaders, serviceMetricsText, tracingEnabled, withSpan } from '../src/index.ts';
import { startMemoryTracing } from '../src/testing.ts';

test("a service's metrics text holds the families it owns and its own samples of shared ones, nothing of another service", async () => {
  const deliveries = counter({ name: 'flowdesk_test_deliveries_total', help: 'test', labelNames: ['result'], owner: 'svc-a' });
  assert.equal(
    counter({ name: 'flowdesk_test_deliveries_total', help: 'test', labelNames: ['result'], owner: 'svc-a' }),
    deliveries,
    'asked again: the same metric, no "already registered"',
  );
  const requests = histogram({ name: 'flowdesk_test_request_seconds', help: 'test', labelNames: ['service', 'route'] });
  deliveries.inc({ result: 'accepted' });
  requests.observe({ service: 'svc-a', route: '/a' }, 0.01);
  requests.observe({ service: 'svc-b', route: '/b' }, 0.02);

  const a = await serviceMetricsText('svc-a');
  assert.match(a, /^flowdesk_test_deliveries_total\{result="accepted"\} 1$/m);
  assert.match(a, /flowdesk_test_request_seconds_count\{service="svc-a",route="\/a"\} 1/);
  assert.doesNotMatch(a, /svc-b/);
  const b = await serviceMetricsText('svc-b');
  assert.doesNotMatch(b, /flowdesk_test_deliveries_total/, "another service's family is left out");
  assert.match(b, /# TYPE flowdesk_test_request_seconds histogram/);
  assert.match(b, /flowdesk_test_request_seconds_count\{service="svc-b",route="\/b"\} 1/);
});

test('tracing off: withSpan only runs the function, headers pass through untouched, no trace id', async () => {
  assert.equal(tracingEnabled(), false);
  assert.equal(await withSpan('t', 'x', (span) => (span === undefined ? 'ran' : 'span')), 'ran');
  const headers = { a: '1' };
  assert.equal(injectTraceHeaders(headers), headers);
  assert.equal(currentTraceId(), undefined);
});

test('tracing on: spans nest, a thrown error marks its span, and traceparent carries the trace across a hop', async () => {
  const exporter = startMemoryTracing('telemetry-test');
  let sent: Record<string, string> | undefined;
  let traceId: string | undefined;
  await withSpan('t', 'request', async () => {
    traceId = currentTraceId();
    await withSpan('t', 'publish', async () => {
      sent = injectTraceHeaders({ key: 'k' });
    });
    await assert.rejects(
      withSpan('t', 'broken', async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
  });
  assert.match(traceId ?? '', /^[0-9a-f]{32}$/);
  assert.equal(sent?.key, 'k');
  // The consumer's side: a span started under the context the headers name joins the same trace.
  await withSpan('t', 'process', async () => undefined, { parent: contextFromHeaders(sent) });

  const spans = exporter.getFinishedSpans();
  const byName = new Map(spans.map((s) => [s.name, s]));
  const request = byName.get('request')!;
  const publish = byName.get('publish')!;
  const processed = byName.get('process')!;
  for (const s of spans) assert.equal(s.spanContext().traceId, traceId, `${s.name} is in the one trace`);
  assert.equal(publish.parentSpanContext?.spanId, request.spanContext().spanId);
  assert.equal(processed.parentSpanContext?.spanId, publish.spanContext().spanId, 'the hop continues from the publish span');
  assert.match(sent.traceparent!, new RegExp(`^00-${traceId}-${publish.spanContext().spanId}-01$`));
  assert.equal(byName.get('broken')!.status.code, 2, 'error status');
});
