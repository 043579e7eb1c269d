// OpenTelemetry traces on `npm start`'s stack (docs/observability.md): one webhook delivery gives one
// trace, from ingest's request through the bus into the engine's run, its nodes and their calls.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startMemoryTracing } from '@flowdesk/telemetry/testing';
import { startPipeline, type Pipeline } from './helpers/pipeline.ts';

// Before the stack starts: one global tracer provider for the process, every span kept in memory.
const exporter = startMemoryTracing();
let p: Pipeline;
before(async () => {
  p = await startPipeline();
});
after(async () => {
  await p?.close();
});

const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** The chain of span names from the trace's root down to `span`. */
function ancestry(spans: ReadableSpan[], span: ReadableSpan): string[] {
  const byId = new Map(spans.map((s) => [idOf(s), s]));
  const chain: string[] = [];
  for (let s: ReadableSpan | undefined = span; s; s = parentOf(s) ? byId.get(parentOf(s)!) : undefined) chain.push(s.name);
  return chain.reverse();
}

async function spansUntil(traceId: string, done: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    if (done(spans)) return spans;
    assert.ok(Date.now() < deadline, `trace incomplete: ${JSON.stringify(spans.map((s) => s.name))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('one webhook is one trace: ingest → publish → engine run → each node → the HTTP Request call and workspace-api, parent before child', async () => {
  const wf = await p.webhookWorkflow();
  exporter.reset();
  const eventId = await p.deliver(wf.id, wf.secret, { event: 'signup', name: 'Ada' });
  const run = await p.finishedRun(wf.id, eventId);
  assert.equal(run.status, 'succeeded', JSON.stringify(run));

  const ingest = exporter
    .getFinishedSpans()
    .find(
      (s) => s.name === 'POST /functions/v1/webhook-trigger/:workflowId' && s.kind === SpanKind.SERVER && s.attributes['http.response.status_code'] === 200,
    );
  assert.ok(ingest, 'ingest has a server span for the accepted delivery');
  const traceId = ingest.spanContext().traceId;
  const spans = await spansUntil(
    traceId,
    (all) => all.some((s) => s.name === 'workflow run') && all.some((s) => s.name === 'POST /internal/v1/tasks/batch' && s.kind === SpanKind.SERVER),
  );

  const find = (name: string, kind?: SpanKind) => {
    const s = spans.find((x) => x.name === name && (kind === undefined || x.kind === kind));
    assert.ok(s, `no span "${name}" in the trace: ${JSON.stringify(spans.map((x) => x.name))}`);
    return s;
  };
  const publish = find('workflow.trigger.v1 publish', SpanKind.PRODUCER);
  const consume = find('workflow.trigger.v1 process', SpanKind.CONSUMER);
  const runSpan = find('workflow run');
  const condition = find('node condition');
  const httpNode = find('node http_request');
  const taskNode = find('node create_task');
  // A run's tasks go through the batched route, which also keeps their origin (the loop guard, docs/triggers.md).
  const createTask = find('POST /internal/v1/tasks/batch', SpanKind.SERVER);

  assert.equal(parentOf(publish), idOf(ingest), 'publish is a child of the webhook request');
  assert.equal(parentOf(consume), idOf(publish), 'the engine continues the trace from the event headers');
  assert.equal(parentOf(runSpan), idOf(consume));
  for (const node of [condition, httpNode, taskNode]) assert.equal(parentOf(node), idOf(runSpan), `${node.name} is a child of the run`);

  // The HTTP Request node's outbound call (undici client span) under its node; the receiver got its traceparent.
  const outbound = spans.find((s) => s.kind === SpanKind.CLIENT && parentOf(s) === idOf(httpNode));
  assert.ok(outbound, 'the HTTP Request node has a client span');
  assert.match(String(p.received.at(-1)?.traceparent), new RegExp(`^00-${traceId}-${outbound.spanContext().spanId}-0[01]$`));

  // Create Task → workspace-api: its server span descends from the create_task node.
  // (The test's own fetch is the trace's root: undici's instrumentation is process-wide.)
  const chain = ancestry(spans, createTask);
  assert.deepEqual(
    chain.slice(chain.indexOf(ingest.name), chain.indexOf(ingest.name) + 5),
    ['POST /functions/v1/webhook-trigger/:workflowId', 'workflow.trigger.v1 publish', 'workflow.trigger.v1 process', 'workflow run', 'node create_task'],
    JSON.stringify(chain),
  );
  assert.equal(chain.at(-1), 'POST /internal/v1/tasks/batch');
  const ns = (t: [number, number]) => t[0] * 1e9 + t[1];
  for (const s of spans.filter((x) => ancestry(spans, x).includes(ingest.name)))
    assert.ok(ns(s.startTime) >= ns(ingest.startTime), `${s.name} starts after the request`);

  // The run keeps its trace id, and the runs API answers it (through the public API, with an API key).
  assert.equal(run.traceId, traceId, 'GET /api/v1/workflows/:id/runs answers the trace id');
  assert.equal((await p.api('GET', `/api/v1/workflow-runs/${run.id}`)).body.traceId, traceId);
  // The pipeline's health is one call of the public API too (the console's Overview reads it).
  const health = await p.api('GET', '/api/v1/workflow-runs/health');
  assert.equal(health.status, 200, JSON.stringify(health.body));
  assert.ok(health.body.byStatus.succeeded >= 1, JSON.stringify(health.body));
  assert.equal(typeof health.body.backlog.waitingEvents, 'number', 'the embedded bus counts the backlog');
  // In the engine's table (read directly on Postgres; PGlite lives inside the stack).
  if (p.databaseUrl) {
    const client = new pg.Client({ connectionString: p.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT trace_id FROM "engine"."run" WHERE event_id = $1', [eventId]);
      assert.equal(rows[0]?.trace_id, traceId);
    } finally {
      await client.end();
    }
  }
});

test('an MCP tools/call and its workspace-api request are one trace', async () => {
  exporter.reset();
  await p.callTool('list_tasks', {});
  const call = exporter.getFinishedSpans().find((s) => s.name === 'tools/call list_tasks');
  assert.ok(call, `no tools/call span: ${JSON.stringify(exporter.getFinishedSpans().map((s) => s.name))}`);
  const spans = await spansUntil(call.spanContext().traceId, (all) => all.some((s) => s.name === 'GET /api/v1/tasks' && s.kind === SpanKind.SERVER));
  const api = spans.find((s) => s.name === 'GET /api/v1/tasks' && s.kind === SpanKind.SERVER)!;
  assert.ok(ancestry(spans, api).includes('tools/call list_tasks'), JSON.stringify(ancestry(spans, api)));
});
