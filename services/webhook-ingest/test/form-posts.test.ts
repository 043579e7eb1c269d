// HTML form posts to the webhook (docs/webhooks.md, "Form posts") over real HTTP, with a fake trigger
// directory and the real embedded event bus: urlencoded and multipart fields become the trigger data,
// files within the limits are kept, and each limit answers a JSON 413 with nothing published.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TriggerEvent, WebhookTriggerLookup } from '@flowdesk/contracts';
import { until } from '@flowdesk/service-kit/testing';
import { startIngest, type IngestStack } from './helpers/ingest.ts';
import { FORM_LIMITS } from '../src/domain/form-body.ts';

const SECRET = 'form-secret-0123456789abcdef';
let ingest: IngestStack;
let base: string;
const received: TriggerEvent[] = [];
const addTrigger = (over: Partial<WebhookTriggerLookup> = {}) => ingest.addTrigger(over);

async function post(id: string, body: string | URLSearchParams | FormData, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/functions/v1/webhook-trigger/${id}`, { method: 'POST', headers: { 'x-webhook-secret': SECRET, ...headers }, body });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
}

const eventOf = (workflowId: string) => until(`the event of ${workflowId}`, async () => received.find((e) => e.workflowId === workflowId));

before(async () => {
  ingest = await startIngest({ secret: SECRET, onTrigger: (m) => void received.push(m.value) });
  base = ingest.base;
});
after(() => ingest.close());

test('an HTML form post (application/x-www-form-urlencoded) is accepted with its fields as the trigger data', async () => {
  const t = addTrigger();
  // As a browser encodes <form method="post">: + for spaces, %-escapes, a repeated name for a multi-select.
  const res = await post(t.workflowId, 'name=Ada+Lovelace&email=ada%40example.com&message=Call+me%0D%0Aplease&topic=quote&topic=demo&empty=', {
    'content-type': 'application/x-www-form-urlencoded',
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const event = await eventOf(t.workflowId);
  assert.deepEqual(event.payload, { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Call me\r\nplease', topic: ['quote', 'demo'], empty: '' });
});

test('the x-webhook-secret rule is the same for a form post', async () => {
  const t = addTrigger();
  const res = await post(t.workflowId, new URLSearchParams({ a: '1' }), { 'x-webhook-secret': 'wrong' });
  assert.equal(res.status, 401);
});

test('multipart/form-data: fields, and a file kept as name, type, size and base64 content', async () => {
  const t = addTrigger();
  const form = new FormData();
  form.append('name', 'Grace');
  form.append('cv', new Blob([Buffer.from('%PDF-1.7 tiny')], { type: 'application/pdf' }), 'cv.pdf');
  const res = await post(t.workflowId, form);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const event = await eventOf(t.workflowId);
  assert.deepEqual(event.payload, {
    name: 'Grace',
    cv: { filename: 'cv.pdf', contentType: 'application/pdf', size: 13, contentBase64: Buffer.from('%PDF-1.7 tiny').toString('base64') },
  });
});

test(`a file over ${FORM_LIMITS.fileBytes / 1024} KiB is refused with a JSON 413 naming it; nothing is published`, async () => {
  const t = addTrigger();
  const form = new FormData();
  form.append('photo', new Blob([Buffer.alloc(FORM_LIMITS.fileBytes + 1, 1)], { type: 'image/png' }), 'big.png');
  const res = await post(t.workflowId, form);
  assert.equal(res.status, 413);
  assert.match(res.type ?? '', /application\/json/);
  assert.equal(res.body.error, 'payload_too_large');
  assert.match(res.body.message, /"big\.png" is larger than 256 KiB/);
  // Exactly at the limit is accepted.
  const ok = new FormData();
  ok.append('photo', new Blob([Buffer.alloc(FORM_LIMITS.fileBytes, 1)], { type: 'image/png' }), 'ok.png');
  assert.equal((await post(t.workflowId, ok)).status, 200);
  const event = await eventOf(t.workflowId);
  assert.equal((event.payload.photo as { filename: string }).filename, 'ok.png', 'only the accepted delivery was published');
});

test(`more than ${FORM_LIMITS.files} files, or more than ${FORM_LIMITS.fields} fields, is a 413`, async () => {
  const t = addTrigger();
  const files = new FormData();
  for (let i = 0; i <= FORM_LIMITS.files; i++) files.append(`f${i}`, new Blob(['x']), `f${i}.txt`);
  const a = await post(t.workflowId, files);
  assert.deepEqual([a.status, a.body.message], [413, `The form has more than ${FORM_LIMITS.files} files`]);
  const fields = Array.from({ length: FORM_LIMITS.fields + 1 }, (_, i) => `k${i}=v`).join('&');
  const b = await post(t.workflowId, fields, { 'content-type': 'application/x-www-form-urlencoded' });
  assert.deepEqual([b.status, b.body.message], [413, `The form has more than ${FORM_LIMITS.fields} fields`]);
  const many = new FormData();
  for (let i = 0; i <= FORM_LIMITS.fields; i++) many.append(`k${i}`, 'v');
  assert.equal((await post(t.workflowId, many)).status, 413);
  const body = `big=${'a'.repeat(1024 * 1024)}`;
  const c = await post(t.workflowId, body, { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(c.status, 413, 'the 1 MiB body limit holds for forms');
  await new Promise((r) => setImmediate(r));
  assert.equal(received.filter((e) => e.workflowId === t.workflowId).length, 0, 'nothing published for a refused form');
});

test('a malformed multipart body is a 400, a form key the run could not store a 400, other types still 415', async () => {
  const t = addTrigger();
  const bad = await post(t.workflowId, '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated', {
    'content-type': 'multipart/form-data; boundary=x',
  });
  assert.equal(bad.status, 400, JSON.stringify(bad.body));
  const noBoundary = await post(t.workflowId, 'a', { 'content-type': 'multipart/form-data' });
  assert.equal(noBoundary.status, 400, JSON.stringify(noBoundary.body));
  const proto = await post(t.workflowId, '__proto__=x', { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(proto.status, 400);
  assert.match(proto.body.message, /__proto__/);
  const text = await post(t.workflowId, 'hello', { 'content-type': 'text/plain' });
  assert.equal(text.status, 415);
});
