// A Respond answer's headers, applied by ingest where they are sent (over real HTTP and the embedded
// bus): the allow list of libs/contracts, and a value HTTP cannot carry never turns into a raw 500.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WEBHOOK_REPLY_TOPIC, type WebhookReply, type WebhookTriggerLookup } from '@flowdesk/contracts';
import { startIngest, type IngestStack } from './helpers/ingest.ts';

let ingest: IngestStack;
let base: string;
let trigger: WebhookTriggerLookup;
// What the "engine" answers to the next event: the test sets it before each delivery.
let nextHeaders: Record<string, string> = {};

before(async () => {
  ingest = await startIngest({
    onTrigger: async (m, bus) => {
      const reply: WebhookReply = { eventId: m.value.eventId, replica: m.value.replyTo!.replica, status: 201, headers: nextHeaders, body: { ok: true } };
      await bus.publish(WEBHOOK_REPLY_TOPIC, [{ key: reply.replica, value: reply }]);
    },
    app: { replies: { replica: 'ingest-test', timeoutMs: 20_000 } },
  });
  base = ingest.base;
  trigger = ingest.addTrigger({ requireSecret: false, secret: 'unused-secret-unused-secret', responseMode: 'respond_node' });
});
after(() => ingest.close());

async function deliver(headers: Record<string, string>) {
  nextHeaders = headers;
  const res = await fetch(`${base}/functions/v1/webhook-trigger/${trigger.workflowId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ n: 1 }),
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

test('only allowed headers reach the caller: custom X-*, private Cache-Control; proxy- and browser-acted ones are dropped', async () => {
  const res = await deliver({
    'x-order': 'A-1',
    'cache-control': 'no-store',
    etag: '"v1"',
    'x-accel-redirect': '/internal/secret-file',
    'clear-site-data': '"*"',
    link: '</evil.js>; rel=preload',
    'content-disposition': 'attachment; filename=evil.html',
    vary: 'Cookie',
    'x-sendfile': '/etc/passwd',
  });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get('x-order'), 'A-1');
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.equal(res.headers.get('etag'), '"v1"');
  for (const name of ['x-accel-redirect', 'clear-site-data', 'link', 'content-disposition', 'vary', 'x-sendfile'])
    assert.equal(res.headers.get(name), null, `${name} must not be sent on Flowdesk's origin`);
  const shared = await deliver({ 'cache-control': 'public, max-age=86400' });
  assert.equal(shared.headers.get('cache-control'), null, 'an answer a shared cache could keep is not sent');
});

test('a header value outside Latin-1 is left out and the caller still gets the answer, not a raw 500', async () => {
  const res = await deliver({ 'x-name': 'Zoë 😀', 'x-order': 'A-2' });
  assert.equal(res.status, 201, res.body);
  assert.deepEqual(JSON.parse(res.body), { ok: true });
  assert.equal(res.headers.get('x-name'), null);
  assert.equal(res.headers.get('x-order'), 'A-2');
});

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

// The check that holds whatever the reply topic carries (the engine checks them too): cookies, a
// redirect, CORS, HSTS, CSP, framing, a Sec- header, a value over 4,000 characters never reach the caller.
test('headers a workflow may not set never reach the webhook caller; the answer and its allowed headers do', async () => {
  nextHeaders = ANSWER_HEADERS;
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
