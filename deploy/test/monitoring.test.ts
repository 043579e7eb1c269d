// deploy/k8s/monitoring (docs/observability.md): the ServiceMonitors, PrometheusRule and Grafana
// dashboard validate — the objects against schemas written from prometheus-operator's CRDs (as
// deploy/k8s/schemas does for Strimzi's KafkaTopic), every PromQL expression with Prometheus' own
// grammar (@prometheus-io/lezer-promql, the parser of Prometheus' UI), and every metric they read
// is one the services export (their prom-client registry) or a recording rule defined here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { parser } from '@prometheus-io/lezer-promql';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { collectProcessMetrics, registry } from '@flowdesk/telemetry';
// Loading the services registers their metrics (module-level, as in their processes).
import '@flowdesk/workspace-api';
import '@flowdesk/auth';
import '@flowdesk/mcp-gateway';
import '@flowdesk/webhook-ingest';
import '@flowdesk/workflow-engine';
import '@flowdesk/console';
import '@flowdesk/db';
import '@flowdesk/bus';
import { K8S_DIR, kubectlProblem, render, type K8sObject } from './k8s-support/render.ts';

const schema = (file: string) =>
  new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(JSON.parse(readFileSync(path.join(K8S_DIR, 'schemas', file), 'utf8')) as object);
const validateServiceMonitor = schema('servicemonitor-v1.schema.json');
const validatePrometheusRule = schema('prometheusrule-v1.schema.json');
const VALIDATORS: Record<string, (o: K8sObject) => void> = {
  'monitoring.coreos.com/v1/ServiceMonitor': (o) => {
    if (!validateServiceMonitor(o)) throw new Error(JSON.stringify(validateServiceMonitor.errors));
  },
  'monitoring.coreos.com/v1/PrometheusRule': (o) => {
    if (!validatePrometheusRule(o)) throw new Error(JSON.stringify(validatePrometheusRule.errors));
  },
  'v1/ConfigMap': (o) => new ConfigMap(o).validate(),
  'networking.k8s.io/v1/NetworkPolicy': (o) => new NetworkPolicy(o).validate(),
};
const SERVICES = ['workspace-api', 'auth', 'mcp-gateway', 'webhook-ingest', 'workflow-engine', 'console'];

/** Parses one expression; throws with the position of the first syntax error. Returns the metric names it selects. */
function parsePromQL(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  let error: number | undefined;
  tree.iterate({
    enter: (n) => {
      if (n.type.isError) error ??= n.from;
      if (n.name === 'Identifier' && n.node.parent?.name === 'VectorSelector') names.push(expr.slice(n.from, n.to));
    },
  });
  if (error !== undefined) throw new Error(`PromQL syntax error at ${error}: ${expr.slice(Math.max(0, error - 20), error)}⟦${expr.slice(error, error + 20)}⟧`);
  return names;
}

/** Every series name the services export: counters/gauges as is, histograms with their suffixes. */
function exportedNames(): Set<string> {
  collectProcessMetrics();
  const out = new Set<string>(['up']);
  for (const m of registry.getMetricsAsArray()) {
    const { name, type } = m as unknown as { name: string; type: string };
    out.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) out.add(`${name}${s}`);
  }
  return out;
}

test('PromQL checking can fail: a syntax error and an unknown metric are caught', () => {
  assert.throws(() => parsePromQL('sum by (service (rate(x[5m]))'), /syntax error/);
  assert.deepEqual(parsePromQL('rate(flowdesk_nope_total[5m])'), ['flowdesk_nope_total']);
  assert.ok(!exportedNames().has('flowdesk_nope_total'));
});

const problem = kubectlProblem();
const skip = problem && !process.env.CI ? `skipped: ${problem}` : false;

test('deploy/k8s/monitoring: every object validates; rules and dashboard parse and read only exported metrics', { skip }, async () => {
  const objects = await render('monitoring');
  for (const o of objects) {
    const validate = VALIDATORS[`${o.apiVersion}/${o.kind}`];
    assert.ok(validate, `${o.kind} ${o.metadata.name}: no validator for ${o.apiVersion}/${o.kind}`);
    assert.doesNotThrow(() => validate(o), `${o.kind} ${o.metadata.name}`);
  }

  // A ServiceMonitor per service, on the Service's metrics port (the base Service declares it).
  const base = await render('base');
  for (const svc of SERVICES) {
    const sm = objects.find((o) => o.kind === 'ServiceMonitor' && o.metadata.name === svc);
    assert.ok(sm, `no ServiceMonitor for ${svc}`);
    const service = base.find((o) => o.kind === 'Service' && o.metadata.name === svc)!;
    new Service(service).validate();
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels as Record<string, string>))
      assert.equal(service.metadata.labels?.[k], v, `${svc}: the ServiceMonitor selects no Service`);
    const port = (service.spec.ports as { name: string; port: number }[]).find((p) => p.name === sm.spec.endpoints[0].port);
    assert.equal(port?.port, 9464, `${svc}: the scraped port is not METRICS_PORT's default`);
    assert.equal(sm.spec.endpoints[0].honorLabels, true, 'the series keep their own service label');
  }

  // The rules: each expression parses and reads exported metrics or recording rules of this file.
  const exported = exportedNames();
  const rules = objects.filter((o) => o.kind === 'PrometheusRule').flatMap((o) => o.spec.groups.flatMap((g: { rules: unknown[] }) => g.rules)) as {
    record?: string;
    alert?: string;
    expr: string;
  }[];
  const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
  const known = (n: string) => exported.has(n) || recorded.has(n);
  for (const r of rules) {
    const names = parsePromQL(String(r.expr));
    assert.ok(names.length > 0, `${r.record ?? r.alert}: selects no metric`);
    for (const n of names) assert.ok(known(n), `${r.record ?? r.alert}: ${n} is not a metric Flowdesk exports`);
  }
  const alerts = rules.flatMap((r) => (r.alert ? [r.alert] : []));
  for (const a of ['FlowdeskHighErrorRate', 'FlowdeskConsumerLagHigh', 'FlowdeskDeadLetters', 'FlowdeskRunsFailing'])
    assert.ok(alerts.includes(a), `no alert ${a}`);

  // The dashboard: the ConfigMap holds the JSON file as is; every panel's queries parse and read known metrics.
  const dashboardText = readFileSync(path.join(K8S_DIR, 'monitoring/grafana-dashboard.json'), 'utf8');
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard === '1');
  assert.equal(cm?.data?.['flowdesk.json'], dashboardText);
  const dashboard = JSON.parse(dashboardText) as { panels: { title: string; type: string; targets?: { expr: string }[] }[] };
  const graphs = dashboard.panels.filter((p) => p.type !== 'row');
  assert.ok(graphs.length >= 10);
  const read = new Set<string>();
  for (const p of graphs) {
    assert.ok(p.targets?.length, `${p.title}: no query`);
    for (const t of p.targets) {
      // Grafana substitutes its variables before Prometheus sees the query.
      const names = parsePromQL(t.expr.replaceAll('$service', '.*'));
      for (const n of names) assert.ok(known(n), `panel "${p.title}": ${n} is not a metric Flowdesk exports`);
      names.forEach((n) => read.add(n));
    }
  }
  // The run pipeline is on it: accepted → published → runs finished, lag, dead letters.
  for (const n of [
    'flowdesk_webhook_deliveries_total',
    'flowdesk_bus_publish_duration_seconds_count',
    'flowdesk_engine_runs_finished_total',
    'flowdesk:consumer_lag:sum',
    'flowdesk_bus_dead_lettered_total',
  ]) {
    assert.ok(read.has(n), `the dashboard does not show ${n}`);
  }
});
