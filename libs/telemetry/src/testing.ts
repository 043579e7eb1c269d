import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing } from './tracing.ts';

/** Tests: tracing on for this process, every finished span kept in memory. Call before the services start. */
export function startMemoryTracing(serviceName = 'flowdesk-test'): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  startTracing({ serviceName, exporter, env: {} });
  return exporter;
}
