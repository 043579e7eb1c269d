// The pinned sample (docs/console.md, "Pinned sample"): pinned from a run's trigger data, a template
// or typed JSON; read back with the workflow; kept while deliveries arrive; limited and validated.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SAMPLE_PAYLOAD_MAX_BYTES } from '@flowdesk/contracts';
import { signInternalToken } from '@flowdesk/service-kit';
import { rawCall, show, startTestApi, type TestApi } from './helpers/app.ts';

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(async () => {
  await api.close();
});

/** What the engine does after each delivery: keeps it as the sample (PUT /internal/v1/…/sample-payload). */
const engineKeeps = (ownerId: string, workflowId: string, payload: unknown) =>
  rawCall(api.baseUrl, 'PUT', `/internal/v1/workflows/${workflowId}/sample-payload`, {
    headers: {
      authorization: `Bearer ${signInternalToken(api.keys, { sub: ownerId, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp: 'workflow-engine' })}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(payload),
  });

test('a pinned sample is read back with the workflow and a later delivery does not replace it; unpinned, the next delivery does', async () => {
  const owner = api.user();
  const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Orders', triggerType: 'webhook' });
  assert.equal(wf.body.samplePin, null, 'a new workflow has no pinned sample');

  // The last delivery is the sample until one is pinned.
  assert.equal((await engineKeeps(owner.id, wf.body.id, { order: { id: 'first' } })).status, 204);
  const runId = randomUUID();
  const pinned = await owner.call('PUT', `/api/v1/workflows/${wf.body.id}/sample`, { payload: { order: { id: 'A-1' } }, source: 'delivery', runId });
  assert.equal(pinned.status, 200, show(pinned));
  assert.deepEqual(pinned.body.samplePayload, { order: { id: 'A-1' } });
  assert.equal(pinned.body.samplePin.source, 'delivery');
  assert.equal(pinned.body.samplePin.runId, runId);
  assert.ok(Date.parse(pinned.body.samplePin.pinnedAt));

  assert.equal((await engineKeeps(owner.id, wf.body.id, { order: { id: 'second' } })).status, 204, 'the engine is still answered');
  const read = await owner.call('GET', `/api/v1/workflows/${wf.body.id}`);
  assert.deepEqual(read.body.samplePayload, { order: { id: 'A-1' } }, 'a delivery does not replace a pinned sample');
  assert.equal(read.body.samplePin.source, 'delivery');

  // The export carries the pinned sample; a save does not touch it.
  assert.deepEqual((await owner.call('GET', `/api/v1/workflows/${wf.body.id}/export`)).body.workflow.samplePayload, { order: { id: 'A-1' } });
  await owner.call('PATCH', `/api/v1/workflows/${wf.body.id}`, { name: 'Orders 2' });
  assert.deepEqual((await owner.call('GET', `/api/v1/workflows/${wf.body.id}`)).body.samplePayload, { order: { id: 'A-1' } });

  const unpinned = await owner.call('DELETE', `/api/v1/workflows/${wf.body.id}/sample`);
  assert.equal(unpinned.status, 200, show(unpinned));
  assert.equal(unpinned.body.samplePin, null);
  assert.deepEqual(unpinned.body.samplePayload, { order: { id: 'A-1' } }, 'it stays until the next delivery');
  await engineKeeps(owner.id, wf.body.id, { order: { id: 'third' } });
  assert.deepEqual((await owner.call('GET', `/api/v1/workflows/${wf.body.id}`)).body.samplePayload, { order: { id: 'third' } });
});

test("typed JSON is pinned as typed; a workflow made from a template keeps the template's sample pinned", async () => {
  const owner = api.user();
  const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Manual', triggerType: 'manual' });
  const typed = await owner.call('PUT', `/api/v1/workflows/${wf.body.id}/sample`, { payload: { name: 'Ada' } });
  assert.equal(typed.status, 200, show(typed));
  assert.equal(typed.body.samplePin.source, 'typed');
  assert.equal(typed.body.samplePin.runId, null);

  const fromTemplate = await owner.call('POST', '/api/v1/workflows', {
    name: 'Form',
    triggerType: 'webhook',
    sample: { payload: { email: 'ada@example.com' }, source: 'template' },
  });
  assert.equal(fromTemplate.status, 201, show(fromTemplate));
  assert.deepEqual(fromTemplate.body.samplePayload, { email: 'ada@example.com' });
  assert.equal(fromTemplate.body.samplePin.source, 'template');
  await engineKeeps(owner.id, fromTemplate.body.id, { email: 'real@example.com' });
  assert.deepEqual((await owner.call('GET', `/api/v1/workflows/${fromTemplate.body.id}`)).body.samplePayload, { email: 'ada@example.com' });
});

test('a sample above 256 KiB is 413, a sample that is not an object or carries unknown fields is 400, both as JSON; nothing changes', async () => {
  const owner = api.user();
  const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook' });
  const path = `/api/v1/workflows/${wf.body.id}/sample`;
  await owner.call('PUT', path, { payload: { kept: true } });

  const big = await owner.call('PUT', path, { payload: { text: 'x'.repeat(SAMPLE_PAYLOAD_MAX_BYTES) } });
  assert.equal(big.status, 413, show(big));
  assert.equal(big.body.error, 'payload_too_large');
  assert.match(big.body.message, /body\.payload is \d+ bytes as JSON, above the sample limit of 262144/);
  const justUnder = await owner.call('PUT', path, { payload: { text: 'x'.repeat(SAMPLE_PAYLOAD_MAX_BYTES - 20) } });
  assert.equal(justUnder.status, 200, 'a sample within the limit is pinned');
  await owner.call('PUT', path, { payload: { kept: true } });

  for (const body of [
    { payload: [1, 2] },
    { payload: 'text' },
    {},
    { payload: {}, source: 'guess' },
    { payload: {}, extra: 1 },
    { payload: {}, runId: 'nope' },
  ]) {
    const res = await owner.call('PUT', path, body);
    assert.equal(res.status, 400, `${JSON.stringify(body)} → ${show(res)}`);
    assert.equal(res.body.error, 'validation_failed');
    assert.equal(typeof res.body.message, 'string');
  }
  const tooBigAtCreate = await owner.call('POST', '/api/v1/workflows', {
    name: 'Big',
    triggerType: 'webhook',
    sample: { payload: { text: 'x'.repeat(SAMPLE_PAYLOAD_MAX_BYTES) }, source: 'template' },
  });
  assert.equal(tooBigAtCreate.status, 413, show(tooBigAtCreate));
  assert.deepEqual((await owner.call('GET', `/api/v1/workflows/${wf.body.id}`)).body.samplePayload, { kept: true });
});

test("pinning needs write access and the caller's own workflow", async () => {
  const owner = api.user();
  const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook' });
  const path = `/api/v1/workflows/${wf.body.id}/sample`;
  assert.equal((await api.user('mcp:read').call('PUT', path, { payload: {} })).status, 403);
  assert.equal((await api.user().call('PUT', path, { payload: { forged: true } })).status, 404, "another user's workflow is 404");
  assert.equal((await api.user().call('DELETE', path)).status, 404);
  assert.equal((await owner.call('GET', `/api/v1/workflows/${wf.body.id}`)).body.samplePin, null);
});

test('an imported file pins its sample', async () => {
  const owner = api.user();
  const file = {
    format: 'flowdesk.workflow',
    formatVersion: 1,
    exportedAt: new Date().toISOString(),
    workflow: {
      name: 'Imported',
      description: '',
      triggerType: 'webhook',
      triggerConfig: {},
      graph: { nodes: [], edges: [] },
      requireWebhookSecret: true,
      executionOrder: 'parallel',
      errorWorkflowId: null,
      retention: null,
      samplePayload: { body: { id: 7 } },
    },
    credentials: [],
  };
  const res = await owner.call('POST', '/api/v1/workflows/import', file);
  assert.equal(res.status, 201, show(res));
  assert.deepEqual(res.body.workflow.samplePayload, { body: { id: 7 } });
  assert.equal(res.body.workflow.samplePin.source, 'import');
});
