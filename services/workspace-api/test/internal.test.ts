// /internal/v1: routes for services acting as themselves. webhook-ingest looks a trigger up by
// workflow id before any user is known, through a database role that can read nothing else.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { signInternalToken } from '@flowdesk/service-kit';
import { rawCall, startTestApi, type TestApi } from './helpers/app.ts';

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(async () => {
  await api.close();
});

const serviceToken = (service: string, sub = `svc:${service}`) =>
  signInternalToken(api.keys, { sub, aud: 'workspace-api', scope: 'internal', azp: service });
const lookup = (id: string, token: string) =>
  rawCall(api.baseUrl, 'GET', `/internal/v1/webhook-triggers/${id}`, { headers: { authorization: `Bearer ${token}` } });

test('webhook-ingest reads a trigger: owner, active flag, secret requirement, signature mode and the secret itself', async () => {
  const owner = api.user();
  const created = await owner.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook', triggerConfig: { signature: 'standard-webhooks' } });
  const res = await lookup(created.body.id, serviceToken('webhook-ingest'));
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    workflowId: created.body.id,
    ownerId: owner.id,
    active: false,
    requireSecret: true,
    signature: 'standard-webhooks',
    secret: created.body.webhookSecret,
  });

  await owner.call('PATCH', `/api/v1/workflows/${created.body.id}`, { active: true, requireWebhookSecret: false });
  const regenerated = await owner.call('POST', `/api/v1/workflows/${created.body.id}/webhook-secret/regenerate`);
  const after = await lookup(created.body.id, serviceToken('webhook-ingest'));
  assert.equal(after.body.active, true);
  assert.equal(after.body.requireSecret, false);
  assert.equal(after.body.secret, regenerated.body.secret);
});

test('unknown workflows and workflows without a webhook trigger are 404', async () => {
  const owner = api.user();
  const manual = await owner.call('POST', '/api/v1/workflows', { name: 'Manual', triggerType: 'manual' });
  for (const id of [randomUUID(), manual.body.id]) {
    const res = await lookup(id, serviceToken('webhook-ingest'));
    assert.equal(res.status, 404);
    assert.equal(res.body.error, 'not_found');
  }
});

test('only webhook-ingest, as a service: user tokens 401, other services 403, no token 401', async () => {
  const owner = api.user();
  const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook' });
  assert.equal((await lookup(wf.body.id, owner.token)).status, 401, "even the owner's own user token");
  assert.equal((await lookup(wf.body.id, serviceToken('mcp-gateway'))).status, 403);
  assert.equal((await lookup(wf.body.id, serviceToken('webhook-ingest', 'svc:mcp-gateway'))).status, 401, 'sub and azp must agree');
  assert.equal((await rawCall(api.baseUrl, 'GET', `/internal/v1/webhook-triggers/${wf.body.id}`)).status, 401);
  // And a service token is no way into user data.
  const res = await rawCall(api.baseUrl, 'GET', '/api/v1/workflows', { headers: { authorization: `Bearer ${serviceToken('webhook-ingest')}` } });
  assert.equal(res.status, 401);
});

test('the trigger-reader role reads those workflow columns and nothing else', async () => {
  const owner = api.user();
  await owner.call('POST', '/api/v1/tasks', { title: 'private' });
  const as = (sql: string) => api.workspace.db.session(async (exec) => {
    await exec('BEGIN');
    try {
      await exec("SELECT set_config('role', 'flowdesk_trigger_reader', true)");
      return await exec(sql);
    } finally {
      await exec('ROLLBACK');
    }
  });
  await assert.rejects(as('SELECT title FROM "workspace"."task"'), /permission denied/);
  await assert.rejects(as('SELECT name FROM "workspace"."workflow"'), /permission denied/);
  await assert.rejects(as('SELECT graph FROM "workspace"."workflow"'), /permission denied/);
  await assert.rejects(as(`UPDATE "workspace"."workflow" SET active = true`), /permission denied/);
  const ok = await as('SELECT count(*)::int AS n FROM (SELECT id, active FROM "workspace"."workflow") w');
  assert.ok((ok.rows[0]?.n as number) >= 0);
});

test('the internal routes are not in the public OpenAPI document', async () => {
  const doc = (await rawCall(api.baseUrl, 'GET', '/openapi.json')).body as { paths: Record<string, unknown> };
  assert.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/internal')), []);
});

describe('what the workflow engine records, as the owner', () => {
  const engineToken = (userId: string, azp = 'workflow-engine') =>
    signInternalToken(api.keys, { sub: userId, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp });
  const put = (token: string, path: string, body: unknown) =>
    rawCall(api.baseUrl, 'PUT', path, { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  test('a run is created once per event, updated while unfinished, frozen once finished, and listed to the owner', async () => {
    const owner = api.user();
    const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook' });
    const path = `/internal/v1/workflows/${wf.body.id}/runs/evt_1`;
    const token = engineToken(owner.id);
    const started = await put(token, path, { status: 'running', triggerPayload: { a: 1 }, startedAt: '2026-11-22T10:00:00.000Z' });
    assert.equal(started.status, 200);
    assert.equal(started.body.changed, true);
    const step = { nodeId: 'n1', type: 'condition', status: 'succeeded', input: {}, output: { result: true }, error: null, startedAt: '2026-11-22T10:00:00.000Z', durationMs: 2 };
    const done = await put(token, path, { status: 'succeeded', steps: [step], warnings: ['w'], finishedAt: '2026-11-22T10:00:01.500Z' });
    assert.equal(done.body.changed, true);
    assert.equal(done.body.run.durationMs, 1500);
    const again = await put(token, path, { status: 'running' });
    assert.equal(again.body.changed, false, 'a redelivered event does not run twice');
    assert.equal(again.body.run.status, 'succeeded');
    const listed = await owner.call('GET', `/api/v1/workflows/${wf.body.id}/runs`);
    assert.equal(listed.body.items.length, 1);
    assert.deepEqual(listed.body.items[0].steps, [step]);
    assert.deepEqual(listed.body.items[0].triggerPayload, { a: 1 });
  });

  test('users (even with a write token) and other services cannot record runs; another user\'s workflow is 404', async () => {
    const owner = api.user();
    const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook' });
    const path = `/internal/v1/workflows/${wf.body.id}/runs/evt_x`;
    assert.equal((await put(owner.token, path, { status: 'succeeded' })).status, 403);
    assert.equal((await put(engineToken(owner.id, 'mcp-gateway'), path, { status: 'succeeded' })).status, 403);
    const stranger = api.user();
    assert.equal((await put(engineToken(stranger.id), path, { status: 'succeeded' })).status, 404);
    assert.equal((await owner.call('GET', `/api/v1/workflows/${wf.body.id}/runs`)).body.items.length, 0);
  });

  test('the sample payload is kept for the variable picker', async () => {
    const owner = api.user();
    const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook' });
    const res = await put(engineToken(owner.id), `/internal/v1/workflows/${wf.body.id}/sample-payload`, { customer: { name: 'Ada' } });
    assert.equal(res.status, 204);
    const got = await owner.call('GET', `/api/v1/workflows/${wf.body.id}`);
    assert.deepEqual(got.body.samplePayload, { customer: { name: 'Ada' } });
    assert.ok(got.body.samplePayloadAt);
  });
});
