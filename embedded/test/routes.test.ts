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
