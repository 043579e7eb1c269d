// TRACE_URL_TEMPLATE (docs/observability.md): checked at start, and handed to the front end in the
// page itself (a meta element: no request, no inline script under the CSP).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { parseTraceUrlTemplate } from '../src/domain/trace-url.ts';
import { withPageSettings } from '../src/routes/web.ts';

const env = {
  CONSOLE_CLIENT_SECRET: 'x'.repeat(32),
  PUBLIC_BASE_URL: 'https://flowdesk.example',
  AUTH_URL: 'http://auth',
  WORKSPACE_API_URL: 'http://api',
  WORKFLOW_ENGINE_URL: 'http://engine',
};

test('TRACE_URL_TEMPLATE: unset is none; an http(s) URL with {traceId} is kept; anything else fails the start saying why', () => {
  assert.equal(loadConfig(env).traceUrlTemplate, undefined);
  assert.equal(loadConfig({ ...env, TRACE_URL_TEMPLATE: ' ' }).traceUrlTemplate, undefined);
  const grafana = 'https://grafana.example/explore?left={"queries":[{"query":"{traceId}"}]}';
  assert.equal(loadConfig({ ...env, TRACE_URL_TEMPLATE: grafana }).traceUrlTemplate, grafana);
  assert.equal(parseTraceUrlTemplate('http://jaeger:16686/trace/{traceId}'), 'http://jaeger:16686/trace/{traceId}');
  assert.throws(() => parseTraceUrlTemplate('https://grafana.example/explore'), /must contain \{traceId\}/);
  assert.throws(() => parseTraceUrlTemplate('/trace/{traceId}'), /absolute URL/);
  assert.throws(() => parseTraceUrlTemplate('javascript:alert({traceId})'), /http\(s\)/);
  assert.throws(() => loadConfig({ ...env, TRACE_URL_TEMPLATE: 'nope' }), /TRACE_URL_TEMPLATE/);
});

test('the page carries the template in a meta element, escaped; without one the page is unchanged', () => {
  const html = '<!doctype html><html><head><title>Flowdesk</title></head><body><div id="root"></div></body></html>';
  assert.equal(withPageSettings(html, {}), html);
  const page = withPageSettings(html, { traceUrlTemplate: 'https://t.example/x?a=1&q="{traceId}"<' });
  assert.match(page, /<meta name="flowdesk-trace-url" content="https:\/\/t\.example\/x\?a=1&amp;q=&quot;\{traceId\}&quot;&lt;">\n<\/head>/);
});
