import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolve } from '../src/routing.ts';
import { PUBLIC_ROUTES, SERVICE_NAMES } from '../src/services.ts';

const serviceOf = (path: string) => {
  const d = resolve(path, PUBLIC_ROUTES, SERVICE_NAMES);
  return d.kind === 'service' ? d.service : d.kind;
};

test('the MCP endpoint and its protected-resource metadata go to the gateway; other discovery documents to auth', () => {
  assert.equal(serviceOf('/functions/v1/mcp-server-v2'), 'mcp-gateway');
  assert.equal(serviceOf('/.well-known/oauth-protected-resource'), 'mcp-gateway');
  assert.equal(serviceOf('/.well-known/oauth-protected-resource/functions/v1/mcp-server-v2'), 'mcp-gateway');
  assert.equal(serviceOf('/.well-known/oauth-authorization-server'), 'auth');
  assert.equal(serviceOf('/.well-known/jwks.json'), 'auth');
  assert.equal(serviceOf('/.well-known/oauth-protected-resourcex'), 'auth', 'prefixes match whole segments');
});

test('the public API goes to the console edge, workspace-api has no public prefix, and the console takes what nothing else does', () => {
  assert.equal(serviceOf('/api/v1/projects'), 'console');
  assert.equal(serviceOf('/api/v1'), 'console');
  assert.equal(serviceOf('/api/v1/openapi.json'), 'console');
  assert.ok(!PUBLIC_ROUTES.some((r) => r.service === 'workspace-api'), 'workspace-api is internal only');
  assert.equal(serviceOf('/'), 'console');
  assert.equal(serviceOf('/settings/api-keys'), 'console');
  // Longer prefixes still win over the console's `/`.
  assert.equal(serviceOf('/oauth/authorize'), 'auth');
  assert.equal(serviceOf('/auth/v1/api-keys'), 'auth');
  assert.equal(serviceOf('/functions/v1/mcp-server-v2'), 'mcp-gateway');
  assert.equal(serviceOf('/healthz'), 'front-health');
  // Readiness of everything behind the base URL, not the console's own (that is /services/console/readyz).
  assert.equal(serviceOf('/readyz'), 'front-ready');
  assert.equal(serviceOf('/readyz?verbose'), 'front-ready');
  assert.equal(serviceOf('/services/console/readyz'), 'console');
  assert.equal(serviceOf('/services/console/healthz'), 'console');
});
