// Which service answers a path of the public API: account routes to auth, runs to the workflow engine
// (their owner), everything else to workspace-api.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { upstreamOf } from '../src/domain/upstreams.ts';

test('runs go to the workflow engine, with their path and query kept; everything else as before', () => {
  const id = '0b4a1f8e-2f6b-4a7e-9a51-2f3c8d9e0a11';
  assert.deepEqual(upstreamOf(`/workflows/${id}/runs?status=failed&limit=5`), {
    upstream: 'workflow-engine',
    path: `/api/v1/workflows/${id}/runs?status=failed&limit=5`,
  });
  assert.deepEqual(upstreamOf('/workflow-runs'), { upstream: 'workflow-engine', path: '/api/v1/workflow-runs' });
  assert.deepEqual(upstreamOf(`/workflow-runs/${id}`), { upstream: 'workflow-engine', path: `/api/v1/workflow-runs/${id}` });
  assert.deepEqual(upstreamOf(`/workflows/${id}`), { upstream: 'workspace-api', path: `/api/v1/workflows/${id}` });
  assert.deepEqual(upstreamOf(`/workflows/${id}/runsx`), { upstream: 'workspace-api', path: `/api/v1/workflows/${id}/runsx` });
  assert.deepEqual(upstreamOf('/workflows//runs'), { upstream: 'workspace-api', path: '/api/v1/workflows//runs' });
  assert.deepEqual(upstreamOf('/workflow-runsx'), { upstream: 'workspace-api', path: '/api/v1/workflow-runsx' });
  assert.deepEqual(upstreamOf('/session'), { upstream: 'auth', path: '/auth/v1/sessions/current' });
});

test('credentials go to the workflow engine, which owns the store (docs/credentials.md)', () => {
  assert.deepEqual(upstreamOf('/credentials'), { upstream: 'workflow-engine', path: '/api/v1/credentials' });
  assert.deepEqual(upstreamOf('/credentials/crm_token'), { upstream: 'workflow-engine', path: '/api/v1/credentials/crm_token' });
  assert.deepEqual(upstreamOf('/credentialsx'), { upstream: 'workspace-api', path: '/api/v1/credentialsx' });
});
