// Ingest's own check of a Respond answer's headers (routes/webhook-trigger.ts), where the answer is
// sent: an answer arriving on the reply topic with headers a workflow may not set (cookies, a
// redirect, CORS, HSTS, CSP, framing, a Sec- header, a value over 4,000 characters) reaches the caller without them, and with the ones it may set.
// The engine checks them too (Respond node); this is the check that holds whatever the topic carries.
// Over real HTTP and the embedded bus, with a stand-in engine answering each event.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createEmbeddedBus, type EventBus } from '@flowdesk/bus';
import { TRIGGER_TOPIC, WEBHOOK_REPLY_TOPIC, type TriggerEvent, type WebhookReply, type WebhookTriggerLookup } from '@flowdesk/contracts';
import { createTestDatabase, type TestDatabase } from '@flowdesk/db';
import { listen } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';

const trigger: WebhookTriggerLookup = {
  workflowId: randomUUID(),
  ownerId: randomUUID(),
  active: true,
  requireSecret: false,
  signature: 'none',
  secret: 'unused-secret-unused-secret',
  responseMode: 'respond_node',
};
/** The headers the stand-in engine answers with. */
const ANSWER_HEADERS: Record<string, string> = {
  'x-order-id': 'A-17',
  'set-cookie': 'session=stolen; Path=/',
  location: 'https://evil.example/',
  'access-control-allow-origin': '*',
  'access-control-allow-credentials': 'true',
  'strict-transport-security': 'max-age=0',
  'content-security-policy': "default-src *; script-src 'unsafe-inline'",
  'x-frame-options': 'ALLOWALL',
  'www-authenticate': 'Basic realm="flowdesk"',
  'sec-fetch-site': 'same-origin',
  'x-too-long': 'a'.repeat(4_001),
  'x-at-the-limit': 'b'.repeat(4_000),
};
const ALLOWED = ['x-order-id', 'x-at-the-limit'];
const REFUSED = Object.keys(ANSWER_HEADERS).filter((h) => !ALLOWED.includes(h));

let testDb: TestDatabase;
let bus: EventBus;
let base: string;
let close: (() => Promise<void>) | undefined;

before(async () => {
  testDb = await createTestDatabase();
  bus = await createEmbeddedBus(testDb.db, { pollIntervalMs: 20 });
  await bus.subscribe<TriggerEvent>({
    topic: TRIGGER_TOPIC,
    groupId: 'engine-stand-in',
    handler: async (m) => {
      const reply: WebhookReply = { eventId: m.value.eventId, replica: m.value.replyTo!.replica, status: 201, headers: ANSWER_HEADERS, body: { ok: true } };
      await bus.publish(WEBHOOK_REPLY_TOPIC, [{ key: reply.replica, value: reply }]);
    },
  });
  const app = await buildApp({
    bus,
    directory: { lookup: async (id) => (id === trigger.workflowId ? { ...trigger } : null) },
    logLevel: 'silent',
    replies: { replica: 'ingest-filter-test', timeoutMs: 20_000 },
  });
  base = await listen(app, 0);
  close = async () => {
    await app.close();
    await bus.close();
    await testDb.close();
  };
});
after(() => close?.());

test('headers a workflow may not set never reach the webhook caller; the answer and its allowed headers do', async () => {
  const res = await fetch(`${base}/functions/v1/webhook-trigger/${trigger.workflowId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
    body: JSON.stringify({ n: 1 }),
    redirect: 'manual',
  });
  assert.equal(res.status, 201);
  assert.deepEqual(await res.json(), { ok: true });
  assert.equal(res.headers.get('x-order-id'), 'A-17');
  assert.equal(res.headers.get('x-at-the-limit'), 'b'.repeat(4_000), 'a value of 4,000 characters is sent; 4,001 is not');
  for (const name of REFUSED) assert.equal(res.headers.get(name), null, `${name} must not be sent to the caller`);
  assert.deepEqual(res.headers.getSetCookie(), []);
});
