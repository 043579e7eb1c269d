// Prometheus metrics on `npm start`'s stack (docs/observability.md): after a webhook ran through to a
// finished run and an MCP tool was called, each service's /metrics on the metrics listener shows it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sample, startPipeline, type Pipeline } from './helpers/pipeline.ts';

let p: Pipeline;
before(async () => {
  p = await startPipeline();
});
after(async () => {
  await p?.close();
});

const scrape = async (service?: string) => {
  const res = await fetch(`${p.flowdesk.metricsUrl}/metrics${service ? `/${service}` : ''}`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  return res.text();
};

test('the metrics listener is not the public front: /metrics there is not served', async () => {
  assert.notEqual(new URL(p.flowdesk.metricsUrl).port, new URL(p.flowdesk.localUrl).port);
  const front = await fetch(`${p.flowdesk.localUrl}/metrics`);
  assert.doesNotMatch(await front.text(), /flowdesk_http_request_duration_seconds/);
});

test('a webhook run and an MCP tool call move the counters of every service, with route templates and no ids in labels', async () => {
  const wf = await p.webhookWorkflow();
  const before = {
    ingest: await scrape('webhook-ingest'),
    engine: await scrape('workflow-engine'),
    gateway: await scrape('mcp-gateway'),
  };
  const eventId = await p.deliver(wf.id, wf.secret, { event: 'signup', name: 'Ada' });
  const run = await p.finishedRun(wf.id, eventId);
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  const tool = (await p.callTool('list_tasks', {})) as { isError?: boolean };
  assert.notEqual(tool.isError, true);

  const ingest = await scrape('webhook-ingest');
  const accepted = (t: string) => sample(t, 'flowdesk_webhook_deliveries_total', { result: 'accepted' });
  assert.equal(accepted(ingest) - accepted(before.ingest), 1, 'one delivery accepted');

  const engine = await scrape('workflow-engine');
  const finished = (t: string) => sample(t, 'flowdesk_engine_runs_finished_total', { status: 'succeeded' });
  assert.equal(finished(engine) - finished(before.engine), 1, 'one run finished');
  assert.ok(sample(engine, 'flowdesk_engine_node_duration_seconds_count', { type: 'http_request', status: 'succeeded' }) >= 1);
  assert.ok(sample(engine, 'flowdesk_engine_run_duration_seconds_count', { status: 'succeeded' }) >= 1);

  const gateway = await scrape('mcp-gateway');
  const calls = (t: string) => sample(t, 'flowdesk_mcp_tool_calls_total', { tool: 'list_tasks', result: 'ok' });
  assert.equal(calls(gateway) - calls(before.gateway), 1, 'one tool call counted');
  assert.ok(sample(gateway, 'flowdesk_mcp_sessions_opened_total') >= 1);
  assert.ok(sample(gateway, 'flowdesk_auth_introspection_cache_total', { service: 'mcp-gateway' }) >= 1);

  // Every service's HTTP histogram, labelled with route templates, never a raw path.
  const expected: Record<string, string> = {
    'webhook-ingest': '/functions/v1/webhook-trigger/:workflowId',
    'workspace-api': '/api/v1/tasks',
    'mcp-gateway': '/functions/v1/mcp-server-v2',
    'workflow-engine': '/api/v1/workflows/:id/runs',
    auth: '/oauth/introspect',
    // The console's public API edge forwards by wildcard routes.
    console: '/api/v1/*',
  };
  for (const [service, route] of Object.entries(expected)) {
    const text = await scrape(service);
    const routes = [...text.matchAll(/^flowdesk_http_request_duration_seconds_count\{([^}]*)\}/gm)].map((m) => /route="([^"]*)"/.exec(m[1]!)?.[1]);
    assert.ok(routes.length > 0, `${service}: no HTTP histogram`);
    assert.ok(routes.includes(route), `${service}: routes ${JSON.stringify(routes)} lack ${route}`);
    const others = [...text.matchAll(/service="([^"]*)"/g)].map((m) => m[1]).filter((s) => s !== service);
    assert.deepEqual(others, [], `${service}'s exposition holds another service's series`);
  }

  // No user, workflow or event id anywhere in a label of the whole exposition.
  const all = await scrape();
  for (const id of [wf.id, eventId, run.id]) assert.ok(!all.includes(id), `an id (${id}) leaked into a label`);
  assert.doesNotMatch(all, /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/, 'a UUID appears in the metrics');
  assert.ok(sample(all, 'flowdesk_bus_publish_duration_seconds_count', { topic: 'workflow.trigger.v1', result: 'ok' }) >= 1);
  assert.ok(sample(all, 'process_cpu_user_seconds_total') > 0, 'process metrics are collected');
  // On Postgres, the pool's connections (PGlite has no pool).
  if (process.env.DATABASE_URL) assert.ok(sample(all, 'flowdesk_db_pool_connections') >= 1, 'the pool gauges report the open connections');
});
