// End to end on `npm start`'s stack through its one base URL: a GitHub-signed delivery reaches the
// Verify signature node with its raw body (kept by ingest only for such workflows) and a secret from
// Credentials; and a Standard-Webhooks-signed trigger with a signing secret of the sender's choosing.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { callJson } from '@flowdesk/service-kit/testing';
import { loadConfig } from '../src/config.ts';
import { startEmbedded, type Embedded } from '../src/start.ts';

let home: string;
let database: TestDatabase | undefined;
let flowdesk: Embedded;
let token: string;

const api = (method: string, p: string, body?: unknown) => callJson(`${flowdesk.localUrl}${p}`, token, method, body);
const deliver = (workflowId: string, raw: string, headers: Record<string, string> = {}) =>
  fetch(`${flowdesk.localUrl}/functions/v1/webhook-trigger/${workflowId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  });

async function runsOf(workflowId: string, atLeast: number, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = (await api('GET', `/api/v1/workflows/${workflowId}/runs`)).body.items as any[];
    const done = items.filter((r) => ['succeeded', 'failed', 'skipped'].includes(r.status));
    if (done.length >= atLeast || Date.now() > deadline) return done;
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'flowdesk-signature-'));
  database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  flowdesk = await startEmbedded({ ...loadConfig({ FLOWDESK_HOME: home, PORT: '0', LOG_LEVEL: 'silent' }), databaseUrl: database?.url });
  token = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')).writeKey;
});

after(async () => {
  await flowdesk?.close();
  await database?.close();
  await rm(home, { recursive: true, force: true });
});

test('GitHub delivery → Verify signature (raw body, credential) → true; a forged one → false', async () => {
  const secret = `gh-${randomBytes(12).toString('hex')}`;
  assert.equal((await api('POST', '/api/v1/credentials', { name: 'github_hook', value: secret })).status, 201);
  const created = await api('POST', '/api/v1/workflows', {
    name: 'GitHub push',
    triggerType: 'webhook',
    active: true,
    requireWebhookSecret: false,
    graph: {
      nodes: [
        { id: 'verify', type: 'verify_signature', params: { preset: 'github', credential: 'github_hook' } },
        { id: 'genuine', type: 'set_fields', params: { fields: [{ name: 'ref', value: '{{trigger.ref}}' }] } },
        { id: 'forged', type: 'set_fields', params: { fields: [{ name: 'why', value: '{{nodes.verify.reason}}' }] } },
      ],
      edges: [
        { from: 'trigger', to: 'verify' },
        { from: 'verify', to: 'genuine', branch: 'true' },
        { from: 'verify', to: 'forged', branch: 'false' },
      ],
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  // Bytes GitHub would send: key order and spacing the engine must see as they were.
  const raw = '{"ref":"refs/heads/main",  "after":"1a2b","repository":{"full_name":"acme/ünï"}}';
  const sign = (key: string) => `sha256=${createHmac('sha256', key).update(raw).digest('hex')}`;
  assert.equal((await deliver(id, raw, { 'x-hub-signature-256': sign(secret), 'x-github-event': 'push' })).status, 200);
  const [first] = await runsOf(id, 1);
  const steps = (r: any) => Object.fromEntries(r.steps.filter((s: any) => s.status !== 'skipped').map((s: any) => [s.nodeId, s.output]));
  assert.deepEqual(steps(first), { verify: { valid: true, preset: 'github' }, genuine: { ref: 'refs/heads/main' } });
  assert.ok(!JSON.stringify(first).includes(secret), 'the secret is in no recorded step');

  assert.equal((await deliver(id, raw, { 'x-hub-signature-256': sign('guessed') })).status, 200, 'ingest accepts; the workflow decides');
  const runs = await runsOf(id, 2);
  const forged = runs.find((r) => r.id !== first.id);
  assert.equal(steps(forged).verify.reason, 'mismatch');
  assert.deepEqual(steps(forged).forged, { why: 'mismatch' });
});

test("Standard Webhooks on the trigger with the sender's own secret, and no x-webhook-secret", async () => {
  const created = await api('POST', '/api/v1/workflows', {
    name: 'Clerk users',
    triggerType: 'webhook',
    active: true,
    triggerConfig: { signature: 'standard-webhooks' },
    graph: {
      nodes: [{ id: 'seen', type: 'set_fields', params: { fields: [{ name: 'type', value: '{{trigger.type}}' }] } }],
      edges: [{ from: 'trigger', to: 'seen' }],
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const generated = created.body.webhookSecret as string;
  const own = `whsec_${randomBytes(24).toString('base64')}`;
  const set = await api('PUT', `/api/v1/workflows/${id}/webhook-secret`, { secret: own });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.equal(set.body.secretEnding, own.slice(-4));

  const raw = '{"type":"user.created","data":{"id":"user_29w83sxmDNGwOuEthce5gg56FcC"}}';
  const signed = (secret: string, msgId: string) => {
    const ts = Math.floor(Date.now() / 1000);
    const sig = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`${msgId}.${ts}.${raw}`)
      .digest('base64');
    return { 'webhook-id': msgId, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` };
  };
  // The change reaches ingest through workflow.changed (or its one-second cache): wait on the answer.
  let status = 0;
  for (let i = 0; i < 50 && status !== 200; i++) {
    status = (await deliver(id, raw, signed(own, `msg_${i}`))).status;
    if (status !== 200) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(status, 200);
  assert.equal((await deliver(id, raw, signed(generated, 'msg_old'))).status, 401, 'the generated secret no longer signs');
  const [run] = await runsOf(id, 1);
  assert.equal(run.status, 'succeeded');

  const trigger = await api('GET', `/api/v1/workflows/${id}`);
  assert.deepEqual(
    { requireSecret: trigger.body.webhook.requireSecret, authentication: trigger.body.webhook.authentication },
    { requireSecret: false, authentication: 'standard-webhooks' },
  );
});
