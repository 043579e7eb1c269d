// The credentials store (docs/credentials.md) end to end: the engine's API with internal tokens, the
// value sealed at rest, row-level security per user, an HTTP Request node that sends the real value
// to a loopback server while the recorded run (and the engine's log) shows only ••••, and an
// unknown name failing the run with a reason that names it.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { EventBus } from '@flowdesk/bus';
import { TRIGGER_TOPIC } from '@flowdesk/contracts';
import type { TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, type Service } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import type { GuardedHttpClient } from '@flowdesk/service-kit';
import type { WorkspaceClient } from '../src/adapters/workspace-client.ts';
import { startEngineStack, webhookEvent, type EngineStack, type TestServer, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let testDb: TestDatabase;
let bus: EventBus;
let apiUrl: string;
let engine: Service;
let engineUrl: string;
let workspace: WorkspaceClient;
let http: GuardedHttpClient;
let receiver: TestServer;
const logs: string[] = [];
const SECRET = `sk_live_${randomBytes(18).toString('base64url')}`;

const call = userCaller(keys, () => ({ apiUrl, engineUrl }));

const publish = (wf: { id: string }, ownerId: string, payload: Record<string, unknown> = {}) =>
  bus.publish(TRIGGER_TOPIC, [{ key: wf.id, value: webhookEvent(wf, ownerId, payload) }]);

async function finishedRun(userId: string, workflowId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(userId, 'GET', `/api/v1/workflows/${workflowId}/runs?limit=10`);
    const done = (res.body.items as any[]).find((r) => ['succeeded', 'failed', 'skipped'].includes(r.status));
    if (done) return (await call(userId, 'GET', `/api/v1/workflow-runs/${done.id}`)).body;
    if (Date.now() > deadline) throw new Error(`no finished run of ${workflowId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A workflow whose HTTP Request node uses the credential in a header, the URL and the body. */
const workflowUsing = (name: string) => ({
  name: 'Push to CRM',
  triggerType: 'webhook',
  active: true,
  graph: {
    nodes: [
      {
        id: 'push',
        type: 'http_request',
        params: {
          method: 'POST',
          url: `${receiver.url}/contacts?access={{credentials.${name}}}`,
          // X-Crm is no secret-looking header name: only the value-based masking can catch it.
          headers: { authorization: `Bearer {{credentials.${name}}}`, 'x-crm': `{{credentials.${name}}}` },
          body: { contact: '{{trigger.email}}', note: 'signed {{credentials.' + name + '}}' },
        },
      },
    ],
    edges: [{ from: 'trigger', to: 'push' }],
  },
});

before(async () => {
  // The receiver echoes what it got, so the node's recorded output holds the secret too.
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo': String(req.headers['x-crm'] ?? '') });
      res.end(JSON.stringify({ sawAuthorization: req.headers.authorization, sawUrl: req.url }));
    },
  });
  ({ testDb, bus, apiUrl, workspace, http } = stack);
  receiver = stack.receiver!;
  engine = await buildApp({
    bus,
    db: testDb.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    http,
    workspace,
    credentialsKey: { key: randomBytes(32), keyId: 'k1' },
    logLevel: 'debug',
    logStream: { write: (line: string) => void logs.push(line) },
  });
  engineUrl = await listen(engine, 0);
});

after(async () => {
  await engine?.close();
  await stack?.close();
});

describe('the credentials API', () => {
  const owner = randomUUID();

  test('create answers the name, type (secret by default) and dates, and that the value is set; the list has names, never a value', async () => {
    const created = await call(owner, 'POST', '/api/v1/credentials', { name: 'crm', value: SECRET });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ['createdAt', 'fields', 'name', 'secrets', 'type', 'updatedAt']);
    assert.equal(created.body.type, 'secret');
    assert.deepEqual([created.body.fields, created.body.secrets], [{}, { value: true }]);
    assert.ok(!created.text.includes(SECRET));
    const list = await call(owner, 'GET', '/api/v1/credentials');
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.credentials.map((c: any) => c.name),
      ['crm'],
    );
    assert.ok(!list.text.includes(SECRET));
    // A read-only credential may list, not change.
    const readOnly = await call(owner, 'GET', '/api/v1/credentials', undefined, 'mcp:read');
    assert.equal(readOnly.status, 200);
    const refused = await call(owner, 'POST', '/api/v1/credentials', { name: 'other', value: 'x' }, 'mcp:read');
    assert.equal(refused.status, 403);
    assert.equal((await call(owner, 'PUT', '/api/v1/credentials/crm', { value: 'y' }, 'mcp:read')).status, 403);
    assert.equal((await call(owner, 'DELETE', '/api/v1/credentials/crm', undefined, 'mcp:read')).status, 403);
  });

  test('bad input: a taken name 409, a bad name or an empty/too long value 400, an unknown name 404', async () => {
    const dup = await call(owner, 'POST', '/api/v1/credentials', { name: 'crm', value: 'again' });
    assert.equal(dup.status, 409);
    assert.match(dup.body.message, /"crm" already exists/);
    for (const body of [
      { name: '1abc', value: 'x' },
      { name: 'has space', value: 'x' },
      { name: 'ok', value: '' },
      { name: 'ok', value: 'x'.repeat(8193) },
      { name: 'ok' },
    ]) {
      const res = await call(owner, 'POST', '/api/v1/credentials', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error, 'validation_failed');
    }
    assert.equal((await call(owner, 'PUT', '/api/v1/credentials/nope', { value: 'x' })).status, 404);
    assert.equal((await call(owner, 'DELETE', '/api/v1/credentials/nope')).status, 404);
    assert.equal((await fetch(`${engineUrl}/api/v1/credentials`)).status, 401);
  });

  test('a NUL in a credential name (%00 in the path): 400 with the error body, nothing logged at error level', async () => {
    const before = logs.length;
    for (const [method, body] of [
      ['PUT', { value: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(owner, method, '/api/v1/credentials/crm%00', body);
      assert.equal(res.status, 400, `${method}: ${res.text}`);
      assert.deepEqual(res.body, { error: 'bad_request', message: 'params.name must not contain the NUL character (%00)' });
    }
    const list = await call(owner, 'GET', '/api/v1/credentials?q=%00');
    assert.equal(list.status, 400, list.text);
    const errors = logs.slice(before).filter((l) => (JSON.parse(l) as { level: number }).level >= 50);
    assert.deepEqual(errors, []);
  });

  test('encrypted at rest: the stored column is AES-GCM ciphertext naming its key, not the value', async () => {
    const rows = await testDb.db.exec(`SELECT value_sealed FROM "engine"."credential" WHERE owner_id = $1`, [owner]);
    assert.equal(rows.rows.length, 1);
    const sealed = String(rows.rows[0]!.value_sealed);
    assert.match(sealed, /^v2\.k1\./);
    assert.ok(!sealed.includes(SECRET));
    assert.ok(!sealed.includes(Buffer.from(SECRET).toString('base64url')));
  });

  test('replace and delete; the value is used from then on', async () => {
    const put = await call(owner, 'PUT', '/api/v1/credentials/crm', { value: SECRET });
    assert.equal(put.status, 200);
    assert.ok(!put.text.includes(SECRET));
    assert.equal((await call(owner, 'POST', '/api/v1/credentials', { name: 'temp', value: 'temporary-1' })).status, 201);
    assert.equal((await call(owner, 'DELETE', '/api/v1/credentials/temp')).status, 204);
    assert.deepEqual(
      (await call(owner, 'GET', '/api/v1/credentials')).body.credentials.map((c: any) => c.name),
      ['crm'],
    );
  });
});

describe('a run resolves {{credentials.<name>}}', () => {
  test('the loopback server gets the real value in the header, URL and body; the recorded run and the log show ••••', async () => {
    const owner = randomUUID();
    assert.equal((await call(owner, 'POST', '/api/v1/credentials', { name: 'crm', value: SECRET })).status, 201);
    const wf = await call(owner, 'POST', '/api/v1/workflows', workflowUsing('crm'));
    assert.equal(wf.status, 201, wf.text);
    const before = receiver.received.length;
    await publish(wf.body, owner, { email: 'ada@example.test' });
    const run = await finishedRun(owner, wf.body.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));

    const hit = receiver.received.slice(before);
    assert.equal(hit.length, 1);
    assert.equal(hit[0]!.headers.authorization, `Bearer ${SECRET}`);
    assert.equal(hit[0]!.headers['x-crm'], SECRET);
    assert.equal(hit[0]!.url, `/contacts?access=${SECRET}`);
    assert.deepEqual(JSON.parse(hit[0]!.body), { contact: 'ada@example.test', note: `signed ${SECRET}` });

    const recorded = JSON.stringify(run);
    assert.ok(!recorded.includes(SECRET), 'the value is nowhere in the recorded run');
    const step = run.steps[0];
    assert.equal(step.input.headers['x-crm'], '••••');
    assert.equal(step.input.body.note, 'signed ••••');
    assert.match(step.input.url, /access=(%E2%80%A2){4}|access=••••/);
    assert.equal(step.output.body.sawAuthorization, 'Bearer ••••');
    assert.equal(step.output.headers['x-echo'], '••••');
    assert.ok(!logs.join('').includes(SECRET), 'nor in the log');
  });

  test('an unknown name fails the run with an error naming it, and sends nothing', async () => {
    const owner = randomUUID();
    const wf = await call(owner, 'POST', '/api/v1/workflows', workflowUsing('missing_one'));
    const before = receiver.received.length;
    await publish(wf.body, owner);
    const run = await finishedRun(owner, wf.body.id);
    assert.equal(run.status, 'failed');
    assert.match(run.error, /unknown credential "missing_one"/);
    assert.equal(receiver.received.length, before);
  });

  test("row-level security: another user's credential of that name is neither listed nor used", async () => {
    const owner = randomUUID();
    const other = randomUUID();
    assert.equal((await call(owner, 'POST', '/api/v1/credentials', { name: 'shared_name', value: `${SECRET}-owner` })).status, 201);
    assert.deepEqual((await call(other, 'GET', '/api/v1/credentials')).body.credentials, []);
    assert.equal((await call(other, 'PUT', '/api/v1/credentials/shared_name', { value: 'hijack' })).status, 404);
    assert.equal((await call(other, 'DELETE', '/api/v1/credentials/shared_name')).status, 404);
    const wf = await call(other, 'POST', '/api/v1/workflows', workflowUsing('shared_name'));
    const before = receiver.received.length;
    await publish(wf.body, other);
    const run = await finishedRun(other, wf.body.id);
    assert.equal(run.status, 'failed');
    assert.match(run.error, /unknown credential "shared_name"/);
    assert.equal(receiver.received.length, before);
    // The other user may keep a credential of the same name: names are per user.
    assert.equal((await call(other, 'POST', '/api/v1/credentials', { name: 'shared_name', value: 'theirs-123' })).status, 201);
  });
});
