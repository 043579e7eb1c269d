/**
 * TRACE_URL_TEMPLATE (docs/observability.md): where a run's trace can be opened, e.g.
 * `https://grafana.example/explore?traceId={traceId}`. The console's run page links a run's trace id
 * through it; without it the id is shown to copy.
 */
export const TRACE_ID_PLACEHOLDER = '{traceId}';

/** The template, checked: an absolute http(s) URL with `{traceId}` in it; undefined when unset. */
export function parseTraceUrlTemplate(raw: string | undefined): string | undefined {
  const template = raw?.trim();
  if (!template) return undefined;
  const fail = (why: string) => new Error(`TRACE_URL_TEMPLATE ${why}, e.g. https://grafana.example/explore?traceId={traceId}`);
  if (!template.includes(TRACE_ID_PLACEHOLDER)) throw fail(`must contain ${TRACE_ID_PLACEHOLDER}`);
  let url: URL;
  try {
    url = new URL(template.replaceAll(TRACE_ID_PLACEHOLDER, '0'.repeat(32)));
  } catch {
    throw fail('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw fail('must be an http(s) URL');
  return template;
}
