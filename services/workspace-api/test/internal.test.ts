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

const serviceToken = (service: string, sub = `svc:${service}`) => signInternalToken(api.keys, { sub, aud: 'workspace-api', scope: 'internal', azp: service });
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
    executionOrder: 'parallel',
  });

  await owner.call('PATCH', `/api/v1/workflows/${created.body.id}`, { active: true, requireWebhookSecret: false });
  const regenerated = await owner.call('POST', `/api/v1/workflows/${created.body.id}/webhook-secret/regenerate`);
  const after = await lookup(created.body.id, serviceToken('webhook-ingest'));
  assert.equal(after.body.active, true);
  assert.equal(after.body.requireSecret, false);
  assert.equal(after.body.secret, regenerated.body.secret);
});

test('webhook-ingest reads a hosted form: owner, active flag, execution order and the form; 404 for other trigger types and no workflow', async () => {
  const owner = api.user();
  const form = {
    title: 'Contact us',
    fields: [
      { name: 'email', label: 'Email', type: 'email', required: true },
      { name: 'topic', label: 'Topic', type: 'select', options: ['Quote', 'Demo'] },
    ],
    thankYou: 'Thanks',
  };
  const created = await owner.call('POST', '/api/v1/workflows', {
    name: 'Contact',
    triggerType: 'form',
    triggerConfig: form,
    active: true,
    executionOrder: 'ordered',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.webhookSecret, null, 'a form trigger has no webhook secret');
  const forms = (id: string, token: string) =>
    rawCall(api.baseUrl, 'GET', `/internal/v1/form-triggers/${id}`, { headers: { authorization: `Bearer ${token}` } });
  const res = await forms(created.body.id, serviceToken('webhook-ingest'));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body, { workflowId: created.body.id, ownerId: owner.id, active: true, executionOrder: 'ordered', form });
  assert.equal((await forms(created.body.id, serviceToken('mcp-gateway'))).status, 403, 'for webhook-ingest only');
  const hook = await owner.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook' });
  assert.equal((await forms(hook.body.id, serviceToken('webhook-ingest'))).status, 404);
  assert.equal((await forms(randomUUID(), serviceToken('webhook-ingest'))).status, 404);
  assert.equal((await lookup(created.body.id, serviceToken('webhook-ingest'))).status, 404, 'a form is no webhook');
  // Saved only valid: a form without fields, or an active form workflow without a form, is a 400 naming it.
  const bad = await owner.call('POST', '/api/v1/workflows', { name: 'Bad', triggerType: 'form', triggerConfig: { ...form, fields: [] } });
  assert.equal(bad.status, 400);
  assert.match(bad.body.message, /triggerConfig\.fields/);
  const empty = await owner.call('POST', '/api/v1/workflows', { name: 'Empty', triggerType: 'form', active: true });
  assert.equal(empty.status, 400);
  assert.match(empty.body.message, /triggerConfig/);
});

test('rawBody: true only for a workflow with a Verify signature node (or triggerConfig.rawBody), so other workflows carry no copy', async () => {
  const owner = api.user();
  const plain = await owner.call('POST', '/api/v1/workflows', { name: 'Plain', triggerType: 'webhook' });
  assert.equal('rawBody' in (await lookup(plain.body.id, serviceToken('webhook-ingest'))).body, false);
  const graph = {
    nodes: [{ id: 'verify', type: 'verify_signature', params: { preset: 'github', credential: 'gh' } }],
    edges: [{ from: 'trigger', to: 'verify' }],
  };
  const verifying = await owner.call('POST', '/api/v1/workflows', { name: 'GitHub', triggerType: 'webhook', graph });
  assert.equal(verifying.status, 201, JSON.stringify(verifying.body));
  assert.equal((await lookup(verifying.body.id, serviceToken('webhook-ingest'))).body.rawBody, true);
  const asked = await owner.call('POST', '/api/v1/workflows', { name: 'Code', triggerType: 'webhook', triggerConfig: { rawBody: true } });
  assert.equal((await lookup(asked.body.id, serviceToken('webhook-ingest'))).body.rawBody, true);
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
  const as = (sql: string) =>
    api.workspace.db.session(async (exec) => {
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

describe('workflow definitions for the caches (engine, ingest)', () => {
  const definitions = (path: string, token: string) =>
    rawCall(api.baseUrl, 'GET', `/internal/v1/workflow-definitions${path}`, { headers: { authorization: `Bearer ${token}` } });

  test('every workflow of every owner, paged by id, without names or secrets; one by id; services only', async () => {
    const a = api.user();
    const b = api.user();
    const wa = await a.call('POST', '/api/v1/workflows', {
      name: 'A secret name',
      triggerType: 'webhook',
      executionOrder: 'ordered',
      triggerConfig: { rateLimitPerSecond: 5 },
      retention: { days: 7 },
    });
    const wb = await b.call('POST', '/api/v1/workflows', { name: 'B', triggerType: 'manual', active: true });
    const ids = new Map<string, any>();
    let after = '';
    for (let page = 0; page < 1000; page++) {
      const res = await definitions(`?limit=1${after ? `&after=${after}` : ''}`, serviceToken('workflow-engine'));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      for (const d of res.body.items) ids.set(d.id, d);
      if (!res.body.next) break;
      after = res.body.next;
    }
    assert.deepEqual(ids.get(wa.body.id), {
      id: wa.body.id,
      ownerId: a.id,
      version: 1,
      definitionVersion: 1,
      triggerType: 'webhook',
      active: false,
      executionOrder: 'ordered',
      errorWorkflowId: null,
      retention: { days: 7 },
      graph: { nodes: [], edges: [] },
      triggerConfig: { rateLimitPerSecond: 5 },
    });
    assert.equal(ids.get(wb.body.id).ownerId, b.id);
    assert.ok(!JSON.stringify([...ids.values()]).includes(wa.body.webhookSecret));
    const one = await definitions(`/${wb.body.id}`, serviceToken('webhook-ingest'));
    assert.equal(one.body.active, true);
    assert.equal((await definitions(`/${randomUUID()}`, serviceToken('workflow-engine'))).status, 404);
    assert.equal((await definitions('', a.token)).status, 401, 'not for users');
    assert.equal((await definitions('', serviceToken('mcp-gateway'))).status, 403);
    // The trigger lookup tells ingest the execution order and the per-workflow rate.
    const trig = await lookup(wa.body.id, serviceToken('webhook-ingest'));
    assert.equal(trig.body.executionOrder, 'ordered');
    assert.equal(trig.body.rateLimitPerSecond, 5);
  });

  test('each change writes one workflow.changed outbox row in its transaction, with a growing version', async () => {
    const u = api.user();
    const wf = await u.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook' });
    await u.call('PATCH', `/api/v1/workflows/${wf.body.id}`, { active: true });
    await u.call('PATCH', `/api/v1/workflows/${wf.body.id}`, { name: 'Renamed' });
    await u.call('POST', `/api/v1/workflows/${wf.body.id}/webhook-secret/regenerate`);
    await u.call('PATCH', `/api/v1/workflows/${wf.body.id}`, { active: false });
    // A refused change writes nothing.
    assert.equal((await u.call('PATCH', `/api/v1/workflows/${wf.body.id}`, { graph: { nodes: [], edges: [{ from: 'trigger', to: 'nowhere' }] } })).status, 400);
    assert.equal((await u.call('DELETE', `/api/v1/workflows/${wf.body.id}`)).status, 204);
    const { rows } = await api.workspace.db.exec(`SELECT topic, key, value FROM "workspace"."outbox" WHERE key = $1 ORDER BY id`, [wf.body.id]);
    const events = rows.map((r) => (typeof r.value === 'string' ? JSON.parse(r.value) : r.value));
    assert.deepEqual(
      events.map((e) => [e.change, e.version]),
      [
        ['created', 1],
        ['activated', 2],
        ['updated', 3],
        ['secret_regenerated', 4],
        ['deactivated', 5],
        ['deleted', 6],
      ],
    );
    assert.ok(rows.every((r) => r.topic === 'workflow.changed.v1'));
    assert.equal(events[2].definition.active, true);
    assert.equal(events[5].definition, null);
    assert.ok(!JSON.stringify(events).includes(wf.body.webhookSecret), 'no secret on the bus');
  });
});

test('the internal routes are not in the public OpenAPI document', async () => {
  const doc = (await rawCall(api.baseUrl, 'GET', '/openapi.json')).body as { paths: Record<string, unknown> };
  assert.deepEqual(
    Object.keys(doc.paths).filter((p) => p.startsWith('/internal')),
    [],
  );
});

describe('what the workflow engine keeps here, as the owner', () => {
  const engineToken = (userId: string, azp = 'workflow-engine') =>
    signInternalToken(api.keys, { sub: userId, aud: 'workspace-api', scope: 'mcp:read mcp:write', azp });
  const put = (token: string, path: string, body: unknown) =>
    rawCall(api.baseUrl, 'PUT', path, { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  test('the sample payload is kept for the variable picker, by the engine only', async () => {
    const owner = api.user();
    const wf = await owner.call('POST', '/api/v1/workflows', { name: 'Hook', triggerType: 'webhook' });
    const path = `/internal/v1/workflows/${wf.body.id}/sample-payload`;
    assert.equal((await put(owner.token, path, { forged: true })).status, 403, 'a user (even with a write token) cannot');
    assert.equal((await put(engineToken(api.user().id), path, { forged: true })).status, 404, "another user's workflow is 404");
    const res = await put(engineToken(owner.id), path, { customer: { name: 'Ada' } });
    assert.equal(res.status, 204);
    const got = await owner.call('GET', `/api/v1/workflows/${wf.body.id}`);
    assert.deepEqual(got.body.samplePayload, { customer: { name: 'Ada' } });
    assert.ok(got.body.samplePayloadAt);
  });

  test("Create Task of many runs in one call: each item answered in order, under the owner's row-level security", async () => {
    const owner = api.user();
    const other = api.user();
    const mine = await owner.call('POST', '/api/v1/projects', { name: 'Mine' });
    const theirs = await other.call('POST', '/api/v1/projects', { name: 'Theirs' });
    const post = (token: string, body: unknown) =>
      rawCall(api.baseUrl, 'POST', '/internal/v1/tasks/batch', {
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await post(owner.token, { tasks: [{ title: 'forged' }] })).status, 403, 'a user (even with a write token) cannot');
    assert.equal((await post(engineToken(owner.id), { tasks: [] })).status, 400, 'an empty batch is refused');

    const ok = await post(engineToken(owner.id), {
      tasks: [{ title: 'one' }, { title: 'two', projectId: mine.body.id, dueDate: '2026-12-01', notes: 'n' }, { title: '' }, { title: 'three' }],
    });
    assert.equal(ok.status, 200);
    const results = (ok.body as { results: any[] }).results;
    assert.deepEqual(
      results.map((r) => r.status),
      [201, 201, 400, 201],
    );
    assert.deepEqual([results[0].task.title, results[1].task.title, results[3].task.title], ['one', 'two', 'three']);
    assert.equal(results[1].task.projectId, mine.body.id);
    assert.equal(results[1].task.dueDate, '2026-12-01');
    assert.match(results[2].message, /title/);
    const listed = await owner.call('GET', '/api/v1/tasks?limit=50');
    assert.deepEqual(new Set(listed.body.items.map((t: { title: string }) => t.title)), new Set(['one', 'two', 'three']));

    // Another user's project is as absent as a missing one: that item is 404, the others are created.
    const mixed = await post(engineToken(owner.id), { tasks: [{ title: 'four' }, { title: 'sneaky', projectId: theirs.body.id }, { title: 'five' }] });
    assert.deepEqual(
      (mixed.body as { results: any[] }).results.map((r) => r.status),
      [201, 404, 201],
    );
    const after = await owner.call('GET', '/api/v1/tasks?limit=50');
    assert.equal(after.body.items.length, 5);
    assert.equal((await other.call('GET', '/api/v1/tasks')).body.items.length, 0, "nothing landed in the other user's workspace");

    // Idempotency keys (a run step executed again after its engine died): a key used before answers the
    // task it created, in a later batch, twice in one batch, and on the one-by-one path; nothing new.
    const keyed = await post(engineToken(owner.id), { tasks: [{ title: 'once' }, { title: 'plain' }], idempotencyKeys: ['k-1', null] });
    const first = (keyed.body as { results: any[] }).results[0].task;
    assert.equal(first.title, 'once');
    const again = await post(engineToken(owner.id), {
      tasks: [{ title: 'once, again' }, { title: 'new' }, { title: 'new, twice' }],
      idempotencyKeys: ['k-1', 'k-2', 'k-2'],
    });
    const answers = (again.body as { results: any[] }).results;
    assert.deepEqual(
      answers.map((r) => r.status),
      [201, 201, 201],
    );
    assert.equal(answers[0].task.id, first.id, 'the same key answers the task made the first time');
    assert.equal(answers[0].task.title, 'once');
    assert.equal(answers[2].task.id, answers[1].task.id, 'a key twice in one batch makes one task');
    const slow = await post(engineToken(owner.id), {
      tasks: [{ title: 'x' }, { title: 'sneaky', projectId: theirs.body.id }],
      idempotencyKeys: ['k-1', 'k-3'],
    });
    assert.deepEqual(
      (slow.body as { results: any[] }).results.map((r) => [r.status, r.task?.id]),
      [
        [201, first.id],
        [404, undefined],
      ],
    );
    const byTitle = new Map<string, number>();
    for (const t of (await owner.call('GET', '/api/v1/tasks?limit=50')).body.items as { title: string }[])
      byTitle.set(t.title, (byTitle.get(t.title) ?? 0) + 1);
    assert.equal(byTitle.get('once'), 1);
    assert.equal(byTitle.get('new'), 1);
    assert.equal(byTitle.get('new, twice'), undefined);
    assert.equal(byTitle.get('x'), undefined);
    assert.equal((await other.call('GET', '/api/v1/tasks')).body.items.length, 0, 'a key is per owner');
    const theirsKeyed = await post(engineToken(other.id), { tasks: [{ title: 'their own' }], idempotencyKeys: ['k-1'] });
    assert.notEqual((theirsKeyed.body as { results: any[] }).results[0].task.id, first.id, "another owner's same key is their own");
  });

  test('notes, calendar entries and comments of many runs in one call: validated per item, row-level security, once per idempotency key', async () => {
    const owner = api.user();
    const other = api.user();
    const task = await owner.call('POST', '/api/v1/tasks', { title: 'mine' });
    const theirTask = await other.call('POST', '/api/v1/tasks', { title: 'theirs' });
    const theirProject = await other.call('POST', '/api/v1/projects', { name: 'Theirs' });
    const post = (token: string, body: unknown) =>
      rawCall(api.baseUrl, 'POST', '/internal/v1/creates/batch', {
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const items = [
      { kind: 'note', body: { title: 'Call notes', content: 'said yes', tags: ['lead'] }, idempotencyKey: 'n-1' },
      { kind: 'calendar_entry', body: { title: 'Meeting', startsAt: '2026-12-01T09:00:00.000Z' }, idempotencyKey: 'c-1' },
      { kind: 'comment', body: { targetType: 'task', targetId: task.body.id, body: 'done by the workflow' }, idempotencyKey: 'm-1' },
      { kind: 'comment', body: { targetType: 'task', targetId: theirTask.body.id, body: 'sneaky' }, idempotencyKey: 'm-2' },
      { kind: 'note', body: { title: 'sneaky', projectId: theirProject.body.id } },
      { kind: 'calendar_entry', body: { title: 'Backwards', startsAt: '2026-12-01T09:00:00.000Z', endsAt: '2026-12-01T08:00:00.000Z' } },
      { kind: 'note', body: { content: 'no title' } },
    ];
    assert.equal((await post(owner.token, { items })).status, 403, 'a user (even with a write token) cannot');
    const first = await post(engineToken(owner.id), { items });
    assert.equal(first.status, 200);
    const results = (first.body as { results: any[] }).results;
    assert.deepEqual(
      results.map((r) => r.status),
      [201, 201, 201, 404, 404, 400, 400],
    );
    assert.equal(results[0].item.title, 'Call notes');
    assert.deepEqual(results[0].item.tags, ['lead']);
    assert.equal(results[1].item.endsAt, '2026-12-01T10:00:00.000Z', 'the default end, as POST /calendar-entries');
    assert.equal(results[2].item.targetId, task.body.id);
    assert.match(results[6].message, /title/);

    // The same keys again (a step executed again): the same rows, nothing new; another owner's key is their own.
    const again = await post(engineToken(owner.id), { items: items.slice(0, 3) });
    assert.deepEqual(
      (again.body as { results: any[] }).results.map((r) => r.item.id),
      results.slice(0, 3).map((r) => r.item.id),
    );
    assert.equal((await owner.call('GET', '/api/v1/notes')).body.items.length, 1);
    assert.equal((await owner.call('GET', '/api/v1/calendar-entries')).body.items.length, 1);
    assert.equal((await owner.call('GET', `/api/v1/comments?targetType=task&targetId=${task.body.id}`)).body.items.length, 1);
    assert.equal((await other.call('GET', `/api/v1/comments?targetType=task&targetId=${theirTask.body.id}`)).body.items.length, 0);
    const theirs = await post(engineToken(other.id), { items: [{ kind: 'note', body: { title: 'their own' }, idempotencyKey: 'n-1' }] });
    assert.notEqual((theirs.body as { results: any[] }).results[0].item.id, results[0].item.id);

    // Concurrent twins with one key make one row.
    const twins = await Promise.all(
      [1, 2, 3].map(() => post(engineToken(owner.id), { items: [{ kind: 'note', body: { title: 'twin' }, idempotencyKey: 'n-twin' }] })),
    );
    assert.equal(new Set(twins.map((t) => (t.body as { results: any[] }).results[0].item.id)).size, 1);
  });
});
