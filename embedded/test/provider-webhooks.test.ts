// End to end on `npm start`'s stack (real HTTP on loopback into webhook-ingest, the bus, the engine):
// each provider template of the gallery (GitHub, Stripe, Shopify, Standard Webhooks), created as the
// console creates it, takes a delivery built as its provider documents it (test/fixtures/provider-deliveries.ts:
// headers, payload, signature with the provider's secret from Credentials) without any x-webhook-secret,
// answers 200 and creates its task; a forged delivery is answered 401 and creates nothing. A graph
// that does not start with Verify signature still needs x-webhook-secret (the default is not weakened).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WORKFLOW_TEMPLATES } from '@flowdesk/contracts';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { callJson, providerSignature, until } from '@flowdesk/service-kit/testing';
import { loadConfig } from '../src/config.ts';
import { startEmbedded, type Embedded } from '../src/start.ts';
import { PROVIDER_DELIVERIES } from './fixtures/provider-deliveries.ts';

let home: string;
let database: TestDatabase | undefined;
let flowdesk: Embedded;
let token: string;

const api = (method: string, p: string, body?: unknown) => callJson(`${flowdesk.localUrl}${p}`, token, method, body);
const deliver = (workflowId: string, raw: string, headers: Record<string, string>) =>
  fetch(`${flowdesk.localUrl}/functions/v1/webhook-trigger/${workflowId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  });

before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'flowdesk-providers-'));
  database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  flowdesk = await startEmbedded({ ...loadConfig({ FLOWDESK_HOME: home, PORT: '0', LOG_LEVEL: 'silent' }), databaseUrl: database?.url });
  token = JSON.parse(await readFile(path.join(home, 'dev.json'), 'utf8')).writeKey;
});

after(async () => {
  await flowdesk?.close();
  await database?.close();
  await rm(home, { recursive: true, force: true });
});

const taskTitles = async () => ((await api('GET', '/api/v1/tasks?limit=100')).body.items as { title: string }[]).map((t) => t.title);

describe('provider templates: a delivery signed as the provider signs it, no x-webhook-secret', () => {
  for (const delivery of PROVIDER_DELIVERIES) {
    test(`${delivery.template} (${delivery.preset})`, async () => {
      const template = WORKFLOW_TEMPLATES.find((t) => t.id === delivery.template)!;
      assert.equal(template.signature?.preset, delivery.preset);
      const secret =
        delivery.preset === 'standard_webhooks' ? `whsec_${randomBytes(24).toString('base64')}` : `${delivery.preset}-${randomBytes(12).toString('hex')}`;
      const credential = await api('POST', '/api/v1/credentials', { name: template.signature.credential, value: secret });
      assert.equal(credential.status, 201, JSON.stringify(credential.body));
      // As the gallery creates it (the console's "Use this template"), then activated; requireWebhookSecret left at its default.
      const created = await api('POST', '/api/v1/workflows', {
        name: template.name,
        triggerType: template.triggerType,
        triggerConfig: template.triggerConfig,
        graph: template.graph,
        active: true,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body.id as string;
      assert.deepEqual(
        { requireSecret: created.body.webhook.requireSecret, authentication: created.body.webhook.authentication },
        { requireSecret: false, authentication: 'provider-signature' },
      );

      const genuine = await deliver(id, delivery.body, { ...delivery.headers, ...providerSignature(delivery.preset, secret, delivery.body) });
      assert.equal(genuine.status, 200, await genuine.clone().text());
      assert.deepEqual(await genuine.json(), { received: true });
      await until(`the task "${delivery.taskTitle}"`, async () => ((await taskTitles()).includes(delivery.taskTitle) ? true : undefined));

      // Signed with another secret (a forger without the provider's secret): refused, nothing created.
      const before = (await taskTitles()).length;
      const forged = await deliver(id, delivery.body, {
        ...delivery.headers,
        ...providerSignature(delivery.preset, `${secret.slice(0, -4)}AAAA`, delivery.body),
      });
      assert.equal(forged.status, 401);
      assert.deepEqual(await forged.json(), { error: 'invalid_signature', reason: 'mismatch' });
      // The genuine signature over other bytes: refused as well.
      const tampered = delivery.body.replace(/"(jenny\.rosen|jon|grace)@example\.com"|"Found a bug"/, '"mallory@example.com"');
      assert.notEqual(tampered, delivery.body);
      const swapped = await deliver(id, tampered, { ...delivery.headers, ...providerSignature(delivery.preset, secret, delivery.body) });
      assert.equal(swapped.status, 401);
      const runs = await until('the refused runs recorded as failed', async () => {
        const items = (await api('GET', `/api/v1/workflows/${id}/runs`)).body.items as { status: string }[];
        return items.filter((r) => r.status === 'failed').length >= 2 ? items : undefined;
      });
      assert.equal(runs.filter((r) => r.status === 'succeeded').length, 1);
      assert.equal((await taskTitles()).length, before, 'no task from a refused delivery');
    });
  }
});

describe('which graphs need no x-webhook-secret (the same rule in workspace-api and in the lookup ingest reads)', () => {
  const verify = { id: 'verify', type: 'verify_signature', params: { preset: 'github', credential: 'github_webhook_secret' } };
  const seen = { id: 'seen', type: 'set_fields', params: { fields: [{ name: 'a', value: '1' }] } };
  const cases: { name: string; graph: unknown; gated: boolean }[] = [
    {
      name: 'trigger → Verify signature',
      graph: {
        nodes: [verify, seen],
        edges: [
          { from: 'trigger', to: 'verify' },
          { from: 'verify', to: 'seen', branch: 'true' },
        ],
      },
      gated: true,
    },
    { name: 'trigger → Set fields (no check)', graph: { nodes: [seen], edges: [{ from: 'trigger', to: 'seen' }] }, gated: false },
    {
      name: 'trigger → Verify signature and trigger → Set fields (a path around the check)',
      graph: {
        nodes: [verify, seen],
        edges: [
          { from: 'trigger', to: 'verify' },
          { from: 'trigger', to: 'seen' },
        ],
      },
      gated: false,
    },
    {
      name: 'Verify signature that continues on an error',
      graph: {
        nodes: [{ ...verify, onError: 'continue' }, seen],
        edges: [
          { from: 'trigger', to: 'verify' },
          { from: 'verify', to: 'seen', branch: 'true' },
        ],
      },
      gated: false,
    },
    {
      name: 'Verify signature not first (after Set fields)',
      graph: {
        nodes: [verify, seen],
        edges: [
          { from: 'trigger', to: 'seen' },
          { from: 'seen', to: 'verify' },
        ],
      },
      gated: false,
    },
    { name: 'an empty graph', graph: { nodes: [], edges: [] }, gated: false },
  ];
  for (const c of cases) {
    test(`${c.name}: ${c.gated ? 'no header needed' : 'x-webhook-secret required'}`, async () => {
      const created = await api('POST', '/api/v1/workflows', { name: c.name, triggerType: 'webhook', active: true, graph: c.graph });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.webhook.authentication, c.gated ? 'provider-signature' : 'secret-header');
      assert.equal(created.body.webhook.requireSecret, !c.gated);
      const answer = await deliver(created.body.id as string, '{"zen":"Keep it logically awesome."}', { 'x-github-event': 'ping' });
      assert.equal(answer.status, c.gated ? 200 : 401, await answer.text());
      if (!c.gated) {
        const withSecret = await deliver(created.body.id as string, '{"zen":"x"}', { 'x-webhook-secret': created.body.webhookSecret as string });
        assert.equal(withSecret.status, 200);
      }
    });
  }
});

test('an HTML form post (application/x-www-form-urlencoded, as a browser sends it) starts a run with its fields', async () => {
  const template = WORKFLOW_TEMPLATES.find((t) => t.id === 'form-to-task')!;
  // A form on another site cannot send x-webhook-secret: its owner turns the header off (docs/webhooks.md, "Form posts").
  const created = await api('POST', '/api/v1/workflows', {
    name: template.name,
    triggerType: 'webhook',
    triggerConfig: template.triggerConfig,
    graph: template.graph,
    active: true,
    requireWebhookSecret: false,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const form = new URLSearchParams({ name: '  Ada Lovelace ', email: 'ADA@example.com', message: 'Please call me back.\r\nThanks' });
  const res = await fetch(`${flowdesk.localUrl}/functions/v1/webhook-trigger/${created.body.id}`, { method: 'POST', body: form });
  assert.equal(res.status, 200, await res.clone().text());
  const title = 'Follow up: Ada Lovelace';
  const task = await until('the task from the form', async () =>
    ((await api('GET', '/api/v1/tasks?limit=100')).body.items as { title: string; notes: string }[]).find((t) => t.title === title),
  );
  assert.equal(task.notes, 'ada@example.com\n\nPlease call me back.\r\nThanks');
  const [run] = (await api('GET', `/api/v1/workflows/${created.body.id}/runs`)).body.items as { triggerPayload: unknown }[];
  assert.deepEqual(run!.triggerPayload, { name: '  Ada Lovelace ', email: 'ADA@example.com', message: 'Please call me back.\r\nThanks' });
});
