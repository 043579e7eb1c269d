// Verify signature node (docs/workflow-engine.md, "Verify signature"): real signatures, computed here the
// way each provider documents them, through executeWorkflow with the raw body as ingest publishes it.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { NodeParams, TriggerEvent, WorkflowGraph } from '@flowdesk/contracts';
import { createTestDatabase } from '@flowdesk/db';
import { DeliveryStore } from '../src/adapters/delivery-store.ts';
import { migrateEngine } from '../src/adapters/run-store.ts';
import { inProcessSandbox } from '../src/adapters/code-sandbox.ts';
import { executeWorkflow } from '../src/domain/executor.ts';
import type { EnginePorts } from '../src/domain/ports.ts';
import { credentialNames } from '../src/domain/template.ts';
import { fixedClock, fixedEvent, silentLog } from './support.ts';

type Params = NodeParams<'verify_signature'>;
const NOW_S = Date.parse('2025-03-01T10:00:00.000Z') / 1000;
const BODY = '{"action":"opened","number":42,  "title":"Ünïcode ✓"}';
const SECRET = 'It’s a Secret to Everybody';
const WHSEC = `whsec_${randomBytes(24).toString('base64')}`;

const hmac = (alg: 'sha256' | 'sha1', key: string | Buffer, data: string) => createHmac(alg, key).update(data);

/** A webhook event carrying `body` as ingest publishes it for a workflow with this node (base64 raw body). */
function delivery(headers: Record<string, string>, body: string | null = BODY): TriggerEvent {
  const event = fixedEvent(`evt_${randomBytes(6).toString('hex')}`, JSON.parse(body ?? '{}'), headers);
  return body === null ? event : { ...event, rawBody: Buffer.from(body, 'utf8').toString('base64') };
}

async function verify(params: Params, event: TriggerEvent, secrets: Record<string, string> = { hook: SECRET }, extra: Partial<EnginePorts> = {}) {
  const graph = {
    nodes: [
      { id: 'verify', type: 'verify_signature', params },
      { id: 'ok', type: 'set_fields', params: { fields: [{ name: 'genuine', value: 'yes' }] } },
      { id: 'forged', type: 'set_fields', params: { fields: [{ name: 'genuine', value: 'no' }] } },
    ],
    edges: [
      { from: 'trigger', to: 'verify' },
      { from: 'verify', to: 'ok', branch: 'true' },
      { from: 'verify', to: 'forged', branch: 'false' },
    ],
  } as unknown as WorkflowGraph;
  const record = await executeWorkflow({
    workflow: { id: event.workflowId, ownerId: event.ownerId, graph },
    event,
    ports: {
      http: { send: () => Promise.reject(new Error('no HTTP')) },
      createTask: () => Promise.reject(new Error('no tasks')),
      clock: fixedClock(),
      log: silentLog,
      sandbox: inProcessSandbox,
      credentials: new Map(Object.entries(secrets)),
      ...extra,
    },
  });
  const step = record.steps.find((s) => s.nodeId === 'verify');
  const ran = record.steps.filter((s) => s.status !== 'skipped').map((s) => s.nodeId);
  return { record, step, output: step?.output as { valid: boolean; reason?: string; message?: string }, ran };
}

const github = (secret = SECRET, body = BODY) => ({ 'x-hub-signature-256': `sha256=${hmac('sha256', secret, body).digest('hex')}` });

test('GitHub: sha256=<hex> of the raw body takes true; the next step on that branch runs', async () => {
  const r = await verify({ preset: 'github', credential: 'hook' }, delivery(github()));
  assert.deepEqual(r.output, { valid: true, preset: 'github' });
  assert.deepEqual(r.ran, ['verify', 'ok']);
  assert.equal(r.record.status, 'succeeded');
});

test('GitHub: wrong secret, tampered body, missing header and a bad format take false and say why', async () => {
  const wrong = await verify({ preset: 'github', credential: 'hook' }, delivery(github('not the secret')));
  assert.equal(wrong.output.valid, false);
  assert.equal(wrong.output.reason, 'mismatch');
  assert.deepEqual(wrong.ran, ['verify', 'forged']);

  // Signed over the original bytes, delivered with one space fewer: same JSON, different bytes.
  const tampered = await verify({ preset: 'github', credential: 'hook' }, delivery(github(), BODY.replace(',  "title"', ', "title"')));
  assert.equal(tampered.output.reason, 'mismatch');

  const missing = await verify({ preset: 'github', credential: 'hook' }, delivery({}));
  assert.equal(missing.output.reason, 'missing_header');

  const noPrefix = await verify({ preset: 'github', credential: 'hook' }, delivery({ 'x-hub-signature-256': hmac('sha256', SECRET, BODY).digest('hex') }));
  assert.equal(noPrefix.output.reason, 'bad_format');
  const notHex = await verify({ preset: 'github', credential: 'hook' }, delivery({ 'x-hub-signature-256': 'sha256=zz' }));
  assert.equal(notHex.output.reason, 'bad_format');
});

test('the output and the recorded step never hold the secret or the expected signature', async () => {
  const expected = hmac('sha256', SECRET, BODY).digest('hex');
  const r = await verify({ preset: 'github', credential: 'hook' }, delivery({ 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }));
  assert.equal(r.output.reason, 'mismatch');
  const recorded = JSON.stringify(r.record);
  assert.ok(!recorded.includes(SECRET), 'no secret');
  assert.ok(!recorded.includes(expected), 'no expected signature');
  assert.ok(!recorded.includes(Buffer.from(BODY).toString('base64')), 'no raw body copy');
  assert.deepEqual(r.step?.input, {
    preset: 'github',
    credential: 'hook',
    header: 'x-hub-signature-256',
    algorithm: 'sha256',
    encoding: 'hex',
    prefix: 'sha256=',
    toleranceSeconds: 300,
    refuseReplays: true,
    rawBodyBytes: Buffer.byteLength(BODY),
  });
});

const stripe = (t: number, secret = SECRET, body = BODY) => ({
  'stripe-signature': `t=${t},v1=${hmac('sha256', secret, `${t}.${body}`).digest('hex')},v0=deadbeef`,
});

test('Stripe: t=…,v1=… over "t.body"; the timestamp must be within the tolerance (default 300 s)', async () => {
  const ok = await verify({ preset: 'stripe', credential: 'hook' }, delivery(stripe(NOW_S - 60)));
  assert.deepEqual(ok.output, { valid: true, preset: 'stripe' });

  // Rotation: two v1 signatures, one with the current secret.
  const rolled = `t=${NOW_S},v1=${hmac('sha256', 'old secret', `${NOW_S}.${BODY}`).digest('hex')},v1=${hmac('sha256', SECRET, `${NOW_S}.${BODY}`).digest('hex')}`;
  assert.equal((await verify({ preset: 'stripe', credential: 'hook' }, delivery({ 'stripe-signature': rolled }))).output.valid, true);

  const old = await verify({ preset: 'stripe', credential: 'hook' }, delivery(stripe(NOW_S - 301)));
  assert.equal(old.output.reason, 'timestamp_out_of_tolerance');
  const future = await verify({ preset: 'stripe', credential: 'hook' }, delivery(stripe(NOW_S + 400)));
  assert.equal(future.output.reason, 'timestamp_out_of_tolerance');
  const wider = await verify({ preset: 'stripe', credential: 'hook', toleranceSeconds: 600 }, delivery(stripe(NOW_S - 500)));
  assert.equal(wider.output.valid, true);

  // The timestamp is signed: moving it breaks the signature even within the tolerance.
  const signed = stripe(NOW_S - 10)['stripe-signature'].replace(`t=${NOW_S - 10}`, `t=${NOW_S}`);
  assert.equal((await verify({ preset: 'stripe', credential: 'hook' }, delivery({ 'stripe-signature': signed }))).output.reason, 'mismatch');
  assert.equal((await verify({ preset: 'stripe', credential: 'hook' }, delivery(stripe(NOW_S, 'whsec_wrong')))).output.reason, 'mismatch');
  assert.equal((await verify({ preset: 'stripe', credential: 'hook' }, delivery({ 'stripe-signature': 'v1=abcd' }))).output.reason, 'bad_format');
  assert.equal((await verify({ preset: 'stripe', credential: 'hook' }, delivery({}))).output.reason, 'missing_header');
});

test('Shopify: base64 HMAC-SHA256 in X-Shopify-Hmac-Sha256', async () => {
  const header = { 'x-shopify-hmac-sha256': hmac('sha256', SECRET, BODY).digest('base64') };
  assert.deepEqual((await verify({ preset: 'shopify', credential: 'hook' }, delivery(header))).output, { valid: true, preset: 'shopify' });
  const wrong = { 'x-shopify-hmac-sha256': hmac('sha256', 'other', BODY).digest('base64') };
  assert.equal((await verify({ preset: 'shopify', credential: 'hook' }, delivery(wrong))).output.reason, 'mismatch');
  assert.equal((await verify({ preset: 'shopify', credential: 'hook' }, delivery(header, '{"id":1}'))).output.reason, 'mismatch');
});

const standard = (id: string, t: number, secret = WHSEC, body = BODY) => ({
  'webhook-id': id,
  'webhook-timestamp': String(t),
  'webhook-signature': `v1,${hmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'), `${id}.${t}.${body}`).digest('base64')}`,
});

test('Standard Webhooks: v1,<base64> over "id.timestamp.body" keyed with the bytes after whsec_', async () => {
  const creds = { svix: WHSEC };
  const ok = await verify({ preset: 'standard_webhooks', credential: 'svix' }, delivery(standard('msg_1', NOW_S)), creds);
  assert.deepEqual(ok.output, { valid: true, preset: 'standard_webhooks' });
  // Several signatures (rotation), space-separated.
  const two = standard('msg_2', NOW_S);
  two['webhook-signature'] = `v1,${randomBytes(32).toString('base64')} ${two['webhook-signature']}`;
  assert.equal((await verify({ preset: 'standard_webhooks', credential: 'svix' }, delivery(two), creds)).output.valid, true);

  const other = `whsec_${randomBytes(24).toString('base64')}`;
  assert.equal((await verify({ preset: 'standard_webhooks', credential: 'svix' }, delivery(standard('m', NOW_S, other)), creds)).output.reason, 'mismatch');
  assert.equal(
    (await verify({ preset: 'standard_webhooks', credential: 'svix' }, delivery(standard('m', NOW_S - 301)), creds)).output.reason,
    'timestamp_out_of_tolerance',
  );
  const renamed = { ...standard('m', NOW_S), 'webhook-id': 'another' };
  assert.equal((await verify({ preset: 'standard_webhooks', credential: 'svix' }, delivery(renamed), creds)).output.reason, 'mismatch');
  const v2 = { ...standard('m', NOW_S), 'webhook-signature': 'v1a,abcd' };
  assert.equal((await verify({ preset: 'standard_webhooks', credential: 'svix' }, delivery(v2), creds)).output.reason, 'bad_format');
  const { 'webhook-id': _drop, ...noId } = standard('m', NOW_S);
  assert.equal((await verify({ preset: 'standard_webhooks', credential: 'svix' }, delivery(noId), creds)).output.reason, 'missing_header');
});

test('custom: any header, SHA-1 or SHA-256, hex or base64, with an optional prefix', async () => {
  const sha1 = { 'x-signature': `sha1=${hmac('sha1', SECRET, BODY).digest('hex')}` };
  const params: Params = { preset: 'custom', credential: 'hook', header: 'X-Signature', algorithm: 'sha1', encoding: 'hex', prefix: 'sha1=' };
  assert.deepEqual((await verify(params, delivery(sha1))).output, { valid: true, preset: 'custom' });
  assert.equal((await verify({ ...params, algorithm: 'sha256' }, delivery(sha1))).output.reason, 'mismatch', 'a SHA-1 digest is no SHA-256 one');
  const b64 = { 'x-sig': hmac('sha256', SECRET, BODY).digest('base64') };
  assert.equal((await verify({ preset: 'custom', credential: 'hook', header: 'x-sig', encoding: 'base64' }, delivery(b64))).output.valid, true);
  assert.equal((await verify({ preset: 'custom', credential: 'hook', header: 'x-sig', encoding: 'base64' }, delivery({}))).output.reason, 'missing_header');
});

test('without a raw body (a manual run, a replayed sample) the node takes false with no_raw_body', async () => {
  const r = await verify({ preset: 'github', credential: 'hook' }, delivery(github(), null));
  assert.equal(r.output.reason, 'no_raw_body');
  assert.deepEqual(r.ran, ['verify', 'forged']);
});

test('an unknown credential fails the node (the run), naming the credential', async () => {
  const r = await verify({ preset: 'github', credential: 'missing' }, delivery(github()));
  assert.equal(r.record.status, 'failed');
  assert.match(r.record.error ?? '', /unknown credential "missing"/);
});

test('the credential a Verify signature node names is loaded with the run', () => {
  const graph = { nodes: [{ id: 'v', type: 'verify_signature', params: { preset: 'github', credential: 'gh' } }], edges: [] };
  assert.deepEqual(credentialNames(graph), ['gh']);
});

test('refuseReplays (on for the providers): the same Stripe event or Standard Webhooks webhook-id twice inside the window fails the step', async () => {
  const testDb = await createTestDatabase();
  try {
    await migrateEngine(testDb.db);
    const deliveries = new DeliveryStore(testDb.db);
    const ports = { deliveries };
    // A Stripe event, delivered (or replayed) twice with a valid signature: the second fails, naming it.
    const body = '{"id":"evt_1Abc","type":"payment_intent.succeeded"}';
    const signed = (t: number) => ({ 'stripe-signature': `t=${t},v1=${hmac('sha256', SECRET, `${t}.${body}`).digest('hex')}` });
    const first = await verify({ preset: 'stripe', credential: 'hook' }, delivery(signed(NOW_S), body), undefined, ports);
    assert.deepEqual(first.ran, ['verify', 'ok']);
    const replay = await verify({ preset: 'stripe', credential: 'hook' }, delivery(signed(NOW_S), body), undefined, ports);
    assert.equal(replay.record.status, 'failed');
    assert.match(replay.step!.error!, /repeated delivery refused: stripe:evt_1Abc was already accepted by this workflow within the last 300 s/);
    assert.deepEqual(replay.ran, ['verify'], 'neither branch runs for a repeat');
    // A Stripe retry of the same event (a new timestamp, so a new signature) is the same delivery.
    const retry = await verify({ preset: 'stripe', credential: 'hook' }, delivery(signed(NOW_S - 10), body), undefined, ports);
    assert.equal(retry.record.status, 'failed');

    // Standard Webhooks: by webhook-id; another id passes.
    const creds = { svix: WHSEC };
    const params: Params = { preset: 'standard_webhooks', credential: 'svix' };
    assert.equal((await verify(params, delivery(standard('msg_r1', NOW_S)), creds, ports)).output.valid, true);
    assert.match((await verify(params, delivery(standard('msg_r1', NOW_S)), creds, ports)).step!.error!, /repeated delivery refused: standard_webhooks:msg_r1/);
    assert.equal((await verify(params, delivery(standard('msg_r2', NOW_S)), creds, ports)).output.valid, true);
    // A forged delivery does not burn the id: the genuine one still passes.
    const forged = { ...standard('msg_r3', NOW_S), 'webhook-signature': `v1,${randomBytes(32).toString('base64')}` };
    assert.equal((await verify(params, delivery(forged), creds, ports)).output.reason, 'mismatch');
    assert.equal((await verify(params, delivery(standard('msg_r3', NOW_S)), creds, ports)).output.valid, true);
    // Off: a repeat passes.
    const off: Params = { ...params, refuseReplays: false };
    assert.equal((await verify(off, delivery(standard('msg_r4', NOW_S)), creds, ports)).output.valid, true);
    assert.equal((await verify(off, delivery(standard('msg_r4', NOW_S)), creds, ports)).output.valid, true);

    // Per workflow: another workflow may accept the same id.
    const elsewhere = { ...delivery(standard('msg_r1', NOW_S)), workflowId: '00000000-0000-4000-8000-000000000002' };
    assert.equal((await verify(params, elsewhere, creds, ports)).output.valid, true);

    // The window: once it ended the id may be accepted again, and the sweep removes ended rows only.
    const count = async () => Number((await testDb.db.exec('SELECT count(*)::int AS n FROM "engine"."seen_delivery"')).rows[0]!.n);
    const before = await count();
    assert.equal(await deliveries.sweep(new Date(NOW_S * 1000)), 0, 'nothing has ended yet');
    const later = new Date((NOW_S + 301) * 1000);
    assert.equal(await deliveries.claim('00000000-0000-4000-8000-000000000001', 'standard_webhooks:msg_r1', later, new Date(later.getTime() + 300_000)), true);
    assert.equal(await deliveries.sweep(later), before - 1, 'every other row ended and is swept; the re-claimed one stays');
    assert.equal(await count(), 1);
  } finally {
    await testDb.close();
  }
});

test('without a delivery store (a step test) a repeat is not refused, with a warning', async () => {
  const r = await verify({ preset: 'github', credential: 'hook' }, delivery(github()));
  assert.equal(r.output.valid, true);
  assert.ok(r.record.warnings.some((w) => /not be refused/.test(w)));
});
