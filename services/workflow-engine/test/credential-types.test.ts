// Credential types (docs/credentials.md, "Types"; libs/contracts/src/credential-types.ts) end to end:
// each HTTP type created through the engine's API, applied by an HTTP Request node's `credential` to a
// loopback server that checks the header, query parameter or Authorization it got; secret fields never
// in an answer of the API (only whether they are set), nor in the recorded run; a replacement that
// leaves a secret out keeps it; bad fields are 400 naming the field.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { EventBus } from '@flowdesk/bus';
import { TRIGGER_TOPIC } from '@flowdesk/contracts';
import type { TestDatabase } from '@flowdesk/db';
import { generateSigningKeys, listen, type Service } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import { startEngineStack, webhookEvent, type EngineStack, type TestServer, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let testDb: TestDatabase;
let bus: EventBus;
let apiUrl: string;
let engine: Service;
let engineUrl: string;
let receiver: TestServer;
const logs: string[] = [];
const KEY = `key_${randomBytes(18).toString('base64url')}`;
const PASSWORD = `pw_${randomBytes(12).toString('base64url')}`;

const call = userCaller(keys, () => ({ apiUrl, engineUrl }));

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

/** Runs one HTTP Request node naming `credential` and answers the run and what the receiver got. */
async function runWith(owner: string, credential: string, url = `${receiver.url}/check?page=2`) {
  const wf = await call(owner, 'POST', '/api/v1/workflows', {
    name: `Uses ${credential}`,
    triggerType: 'webhook',
    active: true,
    graph: {
      nodes: [{ id: 'call', type: 'http_request', params: { method: 'GET', url, headers: { 'X-Api-Key': 'written-in-node' }, credential } }],
      edges: [{ from: 'trigger', to: 'call' }],
    },
  });
  assert.equal(wf.status, 201, wf.text);
  const before = receiver.received.length;
  await bus.publish(TRIGGER_TOPIC, [{ key: wf.body.id, value: webhookEvent(wf.body, owner, {}) }]);
  const run = await finishedRun(owner, wf.body.id);
  return { run, hits: receiver.received.slice(before) };
}

before(async () => {
  stack = await startEngineStack({
    keys,
    // The receiver answers 401 unless the request carries what the test expects (see `expect` below).
    receiver: (req, res) => {
      const ok = expect(req);
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok, echo: { authorization: req.headers.authorization ?? null, url: req.url } }));
    },
  });
  ({ testDb, bus, apiUrl } = stack);
  receiver = stack.receiver!;
  engine = await buildApp({
    bus,
    db: testDb.db,
    jwtPublicKeyPem: keys.publicKeyPem,
    http: stack.http,
    workspace: stack.workspace,
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

let expect: (req: { url: string; headers: Record<string, string | string[] | undefined> }) => boolean = () => false;

describe('each HTTP credential type, applied by HTTP Request to a loopback server that checks it', () => {
  const owner = randomUUID();
  const cases = [
    {
      name: 'crm_header',
      type: 'header',
      fields: { headerName: 'X-Api-Key', value: KEY },
      check: (req: { url: string; headers: Record<string, unknown> }) => req.headers['x-api-key'] === KEY,
      shown: { headerName: 'X-Api-Key' },
      secrets: { value: true },
    },
    {
      name: 'crm_query',
      type: 'query',
      fields: { paramName: 'api_key', value: KEY },
      check: (req: { url: string }) => new URL(req.url, 'http://x').searchParams.get('api_key') === KEY && req.url.includes('page=2'),
      shown: { paramName: 'api_key' },
      secrets: { value: true },
    },
    {
      name: 'crm_bearer',
      type: 'bearer',
      fields: { token: KEY },
      check: (req: { headers: Record<string, unknown> }) => req.headers.authorization === `Bearer ${KEY}`,
      shown: {},
      secrets: { token: true },
    },
    {
      name: 'crm_basic',
      type: 'basic',
      fields: { user: 'ada', password: PASSWORD },
      check: (req: { headers: Record<string, unknown> }) => req.headers.authorization === `Basic ${Buffer.from(`ada:${PASSWORD}`).toString('base64')}`,
      shown: { user: 'ada' },
      secrets: { password: true },
    },
  ];

  for (const c of cases) {
    test(`${c.type}: the request carries it; the API shows ${JSON.stringify(c.shown)} and only that the secret is set; the run shows ••••`, async () => {
      const created = await call(owner, 'POST', '/api/v1/credentials', { name: c.name, type: c.type, fields: c.fields });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual([created.body.type, created.body.fields, created.body.secrets], [c.type, c.shown, c.secrets]);
      const list = await call(owner, 'GET', '/api/v1/credentials');
      for (const text of [created.text, list.text]) assert.ok(!text.includes(KEY) && !text.includes(PASSWORD), 'no secret field in an answer');
      assert.deepEqual(
        list.body.credentials.find((x: any) => x.name === c.name),
        { ...created.body },
      );

      expect = c.check;
      const { run, hits } = await runWith(owner, c.name);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.equal(hits.length, 1);
      assert.ok(c.check(hits[0]!), `the receiver got the ${c.type} credential`);
      const recorded = JSON.stringify(run);
      assert.ok(!recorded.includes(KEY) && !recorded.includes(PASSWORD), 'the secret is nowhere in the recorded run');
      assert.ok(!recorded.includes(Buffer.from(`ada:${PASSWORD}`).toString('base64')), 'nor a Basic header derived from it');
      assert.equal(run.steps[0].input.credential, c.name, 'the step records the credential by name');
      assert.ok(!logs.join('').includes(KEY), 'nor the log');
    });
  }

  test("the credential's header replaces a header of the same name written in the node", async () => {
    expect = (req) => req.headers['x-api-key'] === KEY;
    const { hits } = await runWith(owner, 'crm_header');
    assert.equal(hits[0]!.headers['x-api-key'], KEY);
  });

  test('the receiver is strict: a request without the Authorization it expects is 401 and the step fails', async () => {
    expect = (req) => req.headers.authorization === `Bearer ${KEY}`;
    const { run } = await runWith(owner, 'crm_header');
    assert.equal(run.status, 'failed');
    assert.match(run.error ?? run.steps[0].error, /HTTP 401/);
  });
});

describe('the typed credentials API', () => {
  const owner = randomUUID();

  test('a replacement that leaves the secret out keeps it and changes the rest', async () => {
    assert.equal((await call(owner, 'POST', '/api/v1/credentials', { name: 'partner', type: 'header', fields: { value: KEY } })).status, 201);
    const put = await call(owner, 'PUT', '/api/v1/credentials/partner', { fields: { headerName: 'X-Partner-Key' } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual([put.body.fields, put.body.secrets], [{ headerName: 'X-Partner-Key' }, { value: true }]);
    expect = (req) => req.headers['x-partner-key'] === KEY;
    const { run } = await runWith(owner, 'partner');
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    // At rest: the whole fields object sealed with the v2 SecretBox, the type in the clear.
    const rows = await testDb.db.exec(`SELECT type, value_sealed FROM "engine"."credential" WHERE owner_id = $1`, [owner]);
    assert.equal(rows.rows[0]!.type, 'header');
    assert.match(String(rows.rows[0]!.value_sealed), /^v2\.k1\./);
    assert.ok(!String(rows.rows[0]!.value_sealed).includes('X-Partner-Key'));
  });

  test('smtp: non-secret fields shown, the password only as set; port and security defaulted', async () => {
    const res = await call(owner, 'POST', '/api/v1/credentials', {
      name: 'mail',
      type: 'smtp',
      fields: { host: 'smtp.example.com', user: 'robot', password: PASSWORD, from: 'Robot <robot@example.com>' },
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.fields, { host: 'smtp.example.com', port: '587', secure: 'starttls', user: 'robot', from: 'Robot <robot@example.com>' });
    assert.deepEqual(res.body.secrets, { password: true });
    assert.ok(!res.text.includes(PASSWORD));
  });

  test('bad fields: 400 validation_failed naming the field', async () => {
    for (const [body, field] of [
      [{ name: 'a1', type: 'header', fields: { headerName: 'X-Key' } }, /fields\.value/],
      [{ name: 'a2', type: 'header', fields: { headerName: 'bad name', value: 'x' } }, /fields\.headerName/],
      [{ name: 'a3', type: 'smtp', fields: { host: 'h', port: '99999', from: 'a@b.c' } }, /fields\.port/],
      [{ name: 'a4', type: 'smtp', fields: { host: 'h', secure: 'ssl', from: 'a@b.c' } }, /fields\.secure/],
      [{ name: 'a5', type: 'bearer', fields: { token: 'x', extra: 'y' } }, /fields\.extra/],
      [{ name: 'a6', type: 'bearer', value: 'x' }, /body\.value/],
      [{ name: 'a7', type: 'nope', fields: {} }, /type/],
    ] as const) {
      const res = await call(owner, 'POST', '/api/v1/credentials', body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error, 'validation_failed');
      assert.match(res.body.message, field);
    }
  });

  test('a typed credential written as {{credentials.<name>}}, or of a type the node does not take, fails the run saying so', async () => {
    assert.equal((await call(owner, 'POST', '/api/v1/credentials', { name: 'tok', type: 'bearer', fields: { token: KEY } })).status, 201);
    const wf = await call(owner, 'POST', '/api/v1/workflows', {
      name: 'Template of a typed credential',
      triggerType: 'webhook',
      active: true,
      graph: {
        nodes: [{ id: 'call', type: 'http_request', params: { method: 'GET', url: `${receiver.url}/x?k={{credentials.tok}}` } }],
        edges: [{ from: 'trigger', to: 'call' }],
      },
    });
    const before = receiver.received.length;
    await bus.publish(TRIGGER_TOPIC, [{ key: wf.body.id, value: webhookEvent(wf.body, owner, {}) }]);
    const run = await finishedRun(owner, wf.body.id);
    assert.equal(run.status, 'failed');
    assert.match(run.error, /credential "tok" is of type bearer/);
    const smtp = await runWith(owner, 'mail');
    assert.equal(smtp.run.status, 'failed');
    assert.match(smtp.run.error, /credential "mail" is of type smtp; this node takes a credential of type header, query, bearer, basic/);
    assert.equal(receiver.received.length, before, 'nothing was sent');
  });
});
