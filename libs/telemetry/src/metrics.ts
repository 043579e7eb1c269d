import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';

/**
 * One Prometheus registry per process (prom-client, docs/observability.md). A service's own process
 * holds one service, so its metrics port serves this whole registry. The embedded start holds all of
 * them: series that belong to one service carry a `service` label (the HTTP histogram), or are
 * owned by one service by name (`owner` below: `flowdesk_engine_…` is the engine's), and
 * `serviceMetricsText` cuts the registry into one exposition per service from that.
 */
export const registry = new Registry();

/** Metric name → the service it belongs to (unset: shared libraries, process metrics). */
const owners = new Map<string, string>();
let defaultsOn = false;

/** Node's process metrics (CPU, memory, event-loop lag, GC), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: registry });
}

type Owned = { owner?: string };

// Metrics are module-level singletons created on first use; asking for a name again returns the
// same metric (a module loaded twice, e.g. from source and from dist, must not throw "already registered").
function getOrCreate<M>(name: string, owner: string | undefined, make: () => M): M {
  if (owner) owners.set(name, owner);
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

export function counter<L extends string = string>(cfg: Omit<CounterConfiguration<L>, 'registers'> & Owned): Counter<L> {
  return getOrCreate(cfg.name, cfg.owner, () => new Counter<L>({ ...cfg, registers: [registry] }));
}

export function histogram<L extends string = string>(cfg: Omit<HistogramConfiguration<L>, 'registers'> & Owned): Histogram<L> {
  return getOrCreate(cfg.name, cfg.owner, () => new Histogram<L>({ ...cfg, registers: [registry] }));
}

export function gauge<L extends string = string>(cfg: Omit<GaugeConfiguration<L>, 'registers'> & Owned): Gauge<L> {
  return getOrCreate(cfg.name, cfg.owner, () => new Gauge<L>({ ...cfg, registers: [registry] }));
}

/** Latency buckets in seconds, from a cache hit (1 ms) to a slow run (a minute). */
export const SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The whole registry in the Prometheus text format. */
export function metricsText(): Promise<string> {
  return registry.metrics();
}

export const METRICS_CONTENT_TYPE = registry.contentType;

/**
 * One service's part of the registry (the embedded start's `/metrics/<service>`): the families it
 * owns, and the samples labelled `service="<name>"` of shared families. HELP/TYPE lines stay with
 * their family, and a family left without samples is left out.
 */
export async function serviceMetricsText(service: string): Promise<string> {
  const text = await registry.metrics();
  const out: string[] = [];
  let family = '';
  let header: string[] = [];
  let owned = false;
  const mark = `service="${service}"`;
  for (const line of text.split('\n')) {
    if (line.startsWith('# HELP ')) {
      family = line.slice(7).split(' ')[0]!;
      owned = owners.get(family) === service;
      header = [line];
    } else if (line.startsWith('# TYPE ')) {
      header.push(line);
    } else if (line && family && (owned || line.includes(mark))) {
      out.push(...header, line);
      header = [];
    }
  }
  return out.length ? `${out.join('\n')}\n` : '';
}
