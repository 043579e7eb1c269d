// POST /functions/v1/webhook-trigger/<workflow_id> over real HTTP, with a fake trigger directory and
// the real embedded event bus on a fresh database (PGlite, or Postgres with DATABASE_URL).
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { EventBus, ReceivedMessage } from '@flowdesk/bus';
import { TRIGGER_TOPIC, WORKFLOW_CHANGED_TOPIC, type TriggerEvent, type WebhookTriggerLookup } from '@flowdesk/contracts';
import { listen } from '@flowdesk/service-kit';
import { buildApp } from '../src/app.ts';
import { startIngest, type IngestStack } from './helpers/ingest.ts';
import type { TriggerDirectory } from '../src/domain/trigger-directory.ts';
import { signStandardWebhook } from '../src/domain/signatures.ts';

const SECRET = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
let ingest: IngestStack;
let bus: EventBus;
let base: string;
let nowMs = Date.parse('2026-11-22T10:00:00Z');
let lookups = 0;
const received: TriggerEvent[] = [];
const logs: string[] = [];
const triggers = new Map<string, WebhookTriggerLookup>();

const directory: TriggerDirectory = {
  async lookup(id) {
    lookups++;
    const t = triggers.get(id);
    return t ? { ...t } : null;
  },
};

function addTrigger(over: Partial<WebhookTriggerLookup> = {}): WebhookTriggerLookup {
  const t = ingest.addTrigger({ secret: SECRET, ...over });
  triggers.set(t.workflowId, t);
  return t;
}
async function post(id: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/functions/v1/webhook-trigger/${id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** Events published for a workflow so far (the subscription sees them shortly after publish). */
async function eventsFor(workflowId: string, atLeast = 0): Promise<TriggerEvent[]> {
  for (let i = 0; i < 100 && received.filter((e) => e.workflowId === workflowId).length < atLeast; i++) await new Promise((r) => setTimeout(r, 20));
  return received.filter((e) => e.workflowId === workflowId);
}

const settle = () => new Promise((r) => setTimeout(r, 150));

before(async () => {
  ingest = await startIngest({
    onTrigger: (m) => void received.push(m.value),
    app: {
      directory,
      clock: () => new Date(nowMs),
      logLevel: 'info',
      logStream: { write: (l) => void logs.push(l) },
      rateLimit: { perSecond: 1, burst: 6 },
    },
  });
  ({ bus, base } = ingest);
});
after(() => ingest.close());
beforeEach(() => {
  nowMs += 60_000; // fresh rate-limit tokens and directory cache for every test
});

test('health and readiness answer through the service kit', async () => {
  assert.deepEqual(await (await fetch(`${base}/healthz`)).json(), { status: 'ok', service: 'webhook-ingest' });
  assert.equal((await fetch(`${base}/readyz`)).status, 200);
  const unknown = await fetch(`${base}/no/such/path`);
  assert.equal(unknown.status, 404);
  assert.equal(((await unknown.json()) as any).error, 'not_found');
});

describe('accepted deliveries', () => {
  test('a JSON object with the right secret → 200 at once, and the event carries payload, owner and safe headers', async () => {
    const t = addTrigger();
    const res = await post(
      t.workflowId,
      { customer: { name: 'Ada' }, items: [{ sku: 'x' }] },
      { 'x-webhook-secret': SECRET, 'x-github-event': 'push', authorization: 'Bearer leak' },
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.accepted, true);
    assert.match(res.body.eventId, /^evt_[0-9a-f-]{36}$/);
    const [event] = await eventsFor(t.workflowId, 1);
    assert.ok(event, 'the event reached the bus');
    assert.equal(event.eventId, res.body.eventId);
    assert.equal(event.ownerId, t.ownerId);
    assert.equal(event.source, 'webhook');
    assert.deepEqual(event.payload, { customer: { name: 'Ada' }, items: [{ sku: 'x' }] });
    assert.equal(event.headers['x-github-event'], 'push');
    assert.equal(event.headers['x-webhook-secret'], undefined, 'the secret is never published');
    assert.equal(event.headers.authorization, undefined);
    assert.equal(event.receivedAt, new Date(nowMs).toISOString());
  });

  test('a trigger that does not require the secret accepts deliveries without it', async () => {
    const t = addTrigger({ requireSecret: false });
    assert.equal((await post(t.workflowId, { a: 1 })).status, 200);
  });

  test('any +json content type is JSON too', async () => {
    const t = addTrigger();
    const res = await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': SECRET, 'content-type': 'application/cloudevents+json; charset=utf-8' });
    assert.equal(res.status, 200);
  });

  test('a retried delivery with the same Idempotency-Key (or webhook-id) gets the same event id', async () => {
    const t = addTrigger();
    const h = { 'x-webhook-secret': SECRET, 'idempotency-key': 'order-42' };
    const a = await post(t.workflowId, { n: 1 }, h);
    const b = await post(t.workflowId, { n: 1 }, h);
    const c = await post(t.workflowId, { n: 1 }, { 'x-webhook-secret': SECRET, 'idempotency-key': 'order-43' });
    assert.equal(a.body.eventId, b.body.eventId);
    assert.notEqual(a.body.eventId, c.body.eventId);
  });
});

describe('refused deliveries publish nothing', () => {
  test('unknown, malformed and inactive workflow ids → the same 404', async () => {
    const inactive = addTrigger({ active: false });
    const answers = [
      await post(randomUUID(), { a: 1 }),
      await post('not-a-uuid', { a: 1 }),
      await post(inactive.workflowId, { a: 1 }, { 'x-webhook-secret': SECRET }),
    ];
    for (const r of answers) {
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, { error: 'not_found', message: 'No active webhook is registered at this URL' });
    }
    await settle();
    assert.deepEqual(await eventsFor(inactive.workflowId), []);
  });

  test('missing or wrong x-webhook-secret → 401 with the error body', async () => {
    const t = addTrigger();
    const missing = await post(t.workflowId, { a: 1 });
    const wrong = await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': `${SECRET}x` });
    const prefix = await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': SECRET.slice(0, 10) });
    for (const r of [missing, wrong, prefix]) {
      assert.equal(r.status, 401);
      assert.equal(r.body.error, 'unauthorized');
    }
    assert.match(missing.body.message, /Missing x-webhook-secret/);
    await settle();
    assert.deepEqual(await eventsFor(t.workflowId), []);
  });

  test('malformed JSON, non-object JSON, wrong content type, oversized body → clean 4xx', async () => {
    const t = addTrigger({ requireSecret: false });
    const cases: [string | object, Record<string, string>, number, string][] = [
      ['{"a":', {}, 400, 'bad_request'],
      ['[1,2]', {}, 400, 'bad_request'],
      ['"text"', {}, 400, 'bad_request'],
      ['null', {}, 400, 'bad_request'],
      ['<a>1</a>', { 'content-type': 'application/xml' }, 415, 'unsupported_media_type'],
      ['hello', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
      [{ big: 'x'.repeat(1024 * 1024) }, {}, 413, 'payload_too_large'],
    ];
    for (const [body, headers, status, error] of cases) {
      const r = await post(t.workflowId, body, headers);
      assert.equal(r.status, status, `${(typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 20)} → ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error, error);
    }
    await settle();
    assert.deepEqual(await eventsFor(t.workflowId), []);
  });

  test('per-workflow rate limit: 429 with Retry-After, other workflows unaffected', async () => {
    const t = addTrigger({ requireSecret: false });
    const other = addTrigger({ requireSecret: false });
    for (let i = 0; i < 6; i++) assert.equal((await post(t.workflowId, { i })).status, 200);
    const limited = await post(t.workflowId, { i: 7 });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error, 'rate_limited');
    assert.equal(limited.headers.get('retry-after'), '1');
    assert.equal((await post(other.workflowId, { i: 1 })).status, 200);
    nowMs += 1_000;
    assert.equal((await post(t.workflowId, { i: 5 })).status, 200, 'a token is back after a second');
  });

  test("the id is normalised before counting: upper-case variants share the workflow's budget", async () => {
    const t = addTrigger({ requireSecret: false });
    const variants = [t.workflowId, t.workflowId.toUpperCase(), t.workflowId.replace(/[a-f]/, (c) => c.toUpperCase())];
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await post(variants[i % 3]!, { i })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429, 429]);
  });

  test("a workflow's own rate (triggerConfig.rateLimitPerSecond) replaces the default", async () => {
    const t = addTrigger({ requireSecret: false, rateLimitPerSecond: 3 });
    const statuses: number[] = [];
    // Burst scales with the rate (default 1/s burst 6 → 3/s burst 18).
    for (let i = 0; i < 19; i++) statuses.push((await post(t.workflowId, { i })).status);
    assert.equal(statuses.filter((s) => s === 200).length, 18);
    assert.equal(statuses[18], 429);
  });
});

test("a workflow set to run in order has its events published with the bus's ordered flag", async () => {
  const ordered = addTrigger({ requireSecret: false, executionOrder: 'ordered' });
  const parallel = addTrigger({ requireSecret: false });
  const seen = new Map<string, boolean>();
  const spy: EventBus = {
    publish: async (topic, messages) => {
      for (const m of messages) seen.set(m.key, m.ordered === true);
      return bus.publish(topic, messages);
    },
    subscribe: bus.subscribe.bind(bus),
    close: async () => {},
  };
  const app = await buildApp({ bus: spy, directory, logLevel: 'silent' });
  const url = await listen(app, 0);
  try {
    for (const t of [ordered, parallel]) {
      const res = await fetch(`${url}/functions/v1/webhook-trigger/${t.workflowId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      assert.equal(res.status, 200);
    }
    assert.equal(seen.get(ordered.workflowId), true);
    assert.equal(seen.get(parallel.workflowId), false);
  } finally {
    await app.close();
  }
});

test('with definitionEvents, a workflow.changed event evicts the cached trigger at once', async () => {
  const t = addTrigger({ requireSecret: false });
  const app = await buildApp({ bus, directory, logLevel: 'silent', definitionEvents: { groupId: `ingest-test-${randomUUID()}` } });
  const url = await listen(app, 0);
  const send = () =>
    fetch(`${url}/functions/v1/webhook-trigger/${t.workflowId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' }).then(
      (r) => r.status,
    );
  try {
    assert.equal(await send(), 200);
    triggers.get(t.workflowId)!.active = false;
    assert.equal(await send(), 200, 'cached: the directory is not asked again (60 s TTL)');
    await bus.publish(WORKFLOW_CHANGED_TOPIC, [
      {
        key: t.workflowId,
        value: {
          eventId: randomUUID(),
          workflowId: t.workflowId,
          ownerId: t.ownerId,
          version: 2,
          change: 'deactivated',
          changedAt: new Date().toISOString(),
          definition: null,
        },
      },
    ]);
    let status = 200;
    for (let i = 0; i < 200 && status === 200; i++) {
      await new Promise((r) => setTimeout(r, 20));
      status = await send();
    }
    assert.equal(status, 404, 'the deactivation applies as soon as its event arrives');
  } finally {
    await app.close();
  }
});

describe('Standard Webhooks signatures (opt-in)', () => {
  const signed = (t: WebhookTriggerLookup, raw: string, at = nowMs / 1000, id = `msg_${randomUUID()}`): Record<string, string> => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at)),
    'webhook-signature': signStandardWebhook(t.secret!, id, Math.floor(at), raw),
  });

  test('a valid signature over the raw bytes is accepted; the signature header is not published', async () => {
    const t = addTrigger({ requireSecret: false, signature: 'standard-webhooks' });
    const raw = '{"type":"invoice.paid",  "amount": 12}';
    const res = await post(t.workflowId, raw, signed(t, raw));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [event] = await eventsFor(t.workflowId, 1);
    assert.equal(event!.headers['webhook-signature'], undefined);
  });

  test('a signed workflow needs no x-webhook-secret even with requireSecret on: the signature authenticates, and a bad one is still 401', async () => {
    const t = addTrigger({ requireSecret: true, signature: 'standard-webhooks' });
    const raw = '{"type":"invoice.paid"}';
    const res = await post(t.workflowId, raw, signed(t, raw));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const unsigned = await post(t.workflowId, raw, { 'x-webhook-secret': SECRET });
    assert.equal(unsigned.status, 401, 'the header alone does not replace the signature');
    assert.match(unsigned.body.message, /Missing webhook-id/);
  });

  test('a rotated secret: any of several v1 signatures may match', async () => {
    const t = addTrigger({ requireSecret: false, signature: 'standard-webhooks' });
    const raw = '{"a":1}';
    const h = signed(t, raw);
    h['webhook-signature'] = `v1,${Buffer.alloc(32).toString('base64')} ${h['webhook-signature']}`;
    assert.equal((await post(t.workflowId, raw, h)).status, 200);
  });

  test('tampered body, wrong secret, stale or future timestamp, missing headers → 401', async () => {
    const t = addTrigger({ requireSecret: false, signature: 'standard-webhooks' });
    const raw = '{"amount":12}';
    const tampered = await post(t.workflowId, '{"amount":13}', signed(t, raw));
    const other = { ...t, secret: `whsec_${Buffer.from('b'.repeat(32)).toString('base64')}` };
    const wrongSecret = await post(t.workflowId, raw, signed(other, raw));
    const stale = await post(t.workflowId, raw, signed(t, raw, nowMs / 1000 - 301));
    const future = await post(t.workflowId, raw, signed(t, raw, nowMs / 1000 + 301));
    const missing = await post(t.workflowId, raw, {});
    for (const r of [tampered, wrongSecret, stale, future, missing]) assert.equal(r.status, 401, JSON.stringify(r.body));
    assert.match(stale.body.message, /timestamp/);
    const within = await post(t.workflowId, raw, signed(t, raw, nowMs / 1000 - 299));
    assert.equal(within.status, 200, 'inside the ±5 minute window');
  });
});

describe('raw body (docs/webhooks.md, "Raw body"): published only for workflows that use it', () => {
  test('a workflow whose lookup says rawBody gets the bytes as received, base64, beside the parsed payload', async () => {
    const t = addTrigger({ requireSecret: false, rawBody: true });
    const raw = '{"b":1,  "a":"Ünïcode ✓",\n "n": 1.50}';
    assert.equal((await post(t.workflowId, raw)).status, 200);
    const [event] = await eventsFor(t.workflowId, 1);
    assert.deepEqual(event!.payload, { b: 1, a: 'Ünïcode ✓', n: 1.5 });
    assert.ok(Buffer.from(event!.rawBody!, 'base64').equals(Buffer.from(raw, 'utf8')), 'exact bytes: spacing, order and number text kept');
  });

  test('other workflows carry no copy', async () => {
    const t = addTrigger({ requireSecret: false });
    assert.equal((await post(t.workflowId, '{"a":1}')).status, 200);
    const [event] = await eventsFor(t.workflowId, 1);
    assert.equal('rawBody' in event!, false);
  });

  test("a sender's own Standard Webhooks secret (Svix-style, base64 with padding) verifies, signed as the specification says, without x-webhook-secret", async () => {
    const own = `whsec_${Buffer.from('0123456789abcdef01234567').toString('base64')}`;
    const t = addTrigger({ requireSecret: true, signature: 'standard-webhooks', secret: own, rawBody: true });
    const raw = '{"type":"user.created","data":{"id":"user_1"}}';
    const id = 'msg_2Lh9KRb0pzN4LePd3XiA4Vq3ZSy';
    const ts = Math.floor(nowMs / 1000);
    const key = Buffer.from(own.split('_')[1]!, 'base64');
    const sig = createHmac('sha256', key).update(`${id}.${ts}.${raw}`).digest('base64');
    const ok = await post(t.workflowId, raw, { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const [event] = await eventsFor(t.workflowId, 1);
    assert.equal(Buffer.from(event!.rawBody!, 'base64').toString('utf8'), raw);
    assert.equal(event!.headers['webhook-signature'], `v1,${sig}`, 'kept for a workflow that verifies signatures itself');
    const other = createHmac('sha256', Buffer.from('another secret of 24 byte')).update(`${id}.${ts}.${raw}`).digest('base64');
    const bad = await post(t.workflowId, raw, { 'webhook-id': `${id}x`, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${other}` });
    assert.equal(bad.status, 401);
  });
});

describe('what the directory says takes effect within a second', () => {
  test('activation, deactivation and a regenerated secret', async () => {
    const t = addTrigger({ active: false });
    assert.equal((await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': SECRET })).status, 404);
    triggers.get(t.workflowId)!.active = true;
    nowMs += 1_001;
    assert.equal((await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': SECRET })).status, 200, 'active within a second');
    const fresh = `whsec_${Buffer.from('c'.repeat(32)).toString('base64')}`;
    triggers.get(t.workflowId)!.secret = fresh;
    nowMs += 1_001;
    assert.equal((await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': SECRET })).status, 401, 'the old secret is refused');
    assert.equal((await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': fresh })).status, 200);
    triggers.get(t.workflowId)!.active = false;
    nowMs += 1_001;
    assert.equal((await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': fresh })).status, 404, 'inactive within a second');
  });

  test('a burst to one workflow costs one lookup per second', async () => {
    const t = addTrigger({ requireSecret: false });
    const before = lookups;
    await Promise.all([1, 2, 3].map((i) => post(t.workflowId, { i })));
    assert.equal(lookups - before, 1);
  });
});

test('a bus that cannot store the event → 503 with Retry-After, never 200', async () => {
  const failing: EventBus = {
    publish: async () => {
      throw new Error('broker down');
    },
    subscribe: async () => ({ close: async () => {} }),
    close: async () => {},
  };
  const t = addTrigger({ requireSecret: false });
  const app = await buildApp({ bus: failing, directory, logLevel: 'silent' });
  const url = await listen(app, 0);
  try {
    const res = await fetch(`${url}/functions/v1/webhook-trigger/${t.workflowId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '5');
    assert.equal(((await res.json()) as any).error, 'unavailable');
  } finally {
    await app.close();
  }
});

test('concurrent deliveries share commits: every 200 has its event stored, each once; a body no database can hold is refused alone with 400', async () => {
  const t = addTrigger({ requireSecret: false });
  const app = await buildApp({ bus, directory, logLevel: 'silent', rateLimit: { perSecond: 1e6, burst: 1e6 } });
  const url = await listen(app, 0);
  try {
    const send = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${url}/functions/v1/webhook-trigger/${t.workflowId}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then(
        async (r) => ({ status: r.status, body: (await r.json()) as any }),
      );
    const results = await Promise.all([
      ...Array.from({ length: 120 }, (_, n) => send(JSON.stringify({ n }))),
      // jsonb cannot hold \u0000: refused up front, and it must not take the others down with it.
      send('{"n": -1, "text": "nul \\u0000"}'),
      send(JSON.stringify({ n: 1000 }), { 'idempotency-key': 'same' }),
      send(JSON.stringify({ n: 1001 }), { 'idempotency-key': 'same' }),
    ]);
    const refused = results[120]!;
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, 'bad_request');
    assert.match(refused.body.message, /NUL/);
    const ok = results.filter((r) => r !== refused);
    assert.deepEqual(
      ok.map((r) => r.status),
      ok.map(() => 200),
    );
    assert.equal(results[121]!.body.eventId, results[122]!.body.eventId, 'one Idempotency-Key, one event id');
    const { rows } = await ingest.db.exec(
      `SELECT value->>'eventId' AS "eventId", (value->'payload'->>'n')::int AS n FROM bus.message WHERE topic = $1 AND value->>'workflowId' = $2`,
      [TRIGGER_TOPIC, t.workflowId],
    );
    assert.equal(rows.length, 122, 'every accepted delivery stored, once; the refused one not at all');
    assert.deepEqual(new Set(rows.map((r) => r.n)), new Set([...Array.from({ length: 120 }, (_, n) => n), 1000, 1001]));
    const stored = new Set(rows.map((r) => r.eventId));
    for (const r of ok) assert.ok(stored.has(r.body.eventId), `event ${r.body.eventId} was answered 200 and is stored`);
  } finally {
    await app.close();
  }
});

test('back-pressure: a stalled engine and a burst → 429 with Retry-After once the backlog bound is reached, never a 200 that is lost; every accepted event runs once the engine resumes', async () => {
  const t = addTrigger({ requireSecret: false });
  const BOUND = 20;
  let resume!: () => void;
  const resumed = new Promise<void>((r) => (resume = r));
  const ran: string[] = [];
  // The "engine": a consumer group that takes 4 events and then hangs until resumed.
  const engine = await bus.subscribe<TriggerEvent>({
    topic: TRIGGER_TOPIC,
    groupId: 'stalled-engine',
    concurrency: 4,
    handler: async (m: ReceivedMessage<TriggerEvent>) => {
      if (m.value.workflowId !== t.workflowId) return;
      await resumed;
      ran.push(m.value.eventId);
    },
  });
  const app = await buildApp({
    bus,
    directory,
    logLevel: 'silent',
    rateLimit: { perSecond: 1e6, burst: 1e6 },
    backlog: { maxBacklog: BOUND, refreshMs: 0, groupId: 'stalled-engine' },
  });
  const url = await listen(app, 0);
  try {
    const send = (n: number) =>
      fetch(`${url}/functions/v1/webhook-trigger/${t.workflowId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n }),
      }).then(async (r) => ({
        status: r.status,
        retryAfter: r.headers.get('retry-after'),
        body: (await r.json()) as any,
      }));
    // A burst of 60, in waves of 5 concurrent deliveries.
    const results: Awaited<ReturnType<typeof send>>[] = [];
    for (let wave = 0; wave < 12; wave++) results.push(...(await Promise.all(Array.from({ length: 5 }, (_, i) => send(wave * 5 + i)))));
    const accepted = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    assert.ok(accepted.length >= BOUND - 5 && accepted.length <= BOUND + 5, `about ${BOUND} accepted, got ${accepted.length}`);
    assert.ok(refused.length >= 60 - BOUND - 5);
    for (const r of refused) {
      assert.equal(r.status, 429);
      assert.equal(r.body.error, 'rate_limited');
      assert.match(r.body.message, /waiting to run/);
      assert.ok(Number(r.retryAfter) >= 1, `Retry-After ${r.retryAfter}`);
    }
    // Once the bound is reached every later delivery of the burst is refused (the engine is stalled).
    const firstRefused = results.findIndex((r) => r.status !== 200);
    assert.ok(results.slice(firstRefused).every((r) => r.status === 429));

    resume();
    for (let i = 0; i < 600 && ran.length < accepted.length; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual([...ran].sort(), accepted.map((r) => r.body.eventId).sort(), 'every 200 ran exactly once, no refused one did');
    // The backlog drained: deliveries are accepted again.
    let again = await send(1000);
    for (let i = 0; i < 100 && again.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      again = await send(1000);
    }
    assert.equal(again.status, 200);
  } finally {
    resume();
    await app.close();
    await engine.close();
  }
});

test('a NUL in a key is refused with 400; the text \\u0000 (an escaped backslash) is ordinary data', async () => {
  const t = addTrigger({ requireSecret: false });
  const refused = await post(t.workflowId, '{"ke\\u0000y": 1}');
  assert.equal(refused.status, 400);
  assert.match(refused.body.message, /NUL/);
  const ok = await post(t.workflowId, { path: 'C:\\u0000' });
  assert.equal(ok.status, 200);
});

test('secrets never reach the log', async () => {
  const t = addTrigger();
  await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': SECRET });
  await post(t.workflowId, { a: 1 }, { 'x-webhook-secret': `${SECRET}-wrong` });
  const all = logs.join('');
  assert.match(all, /webhook accepted/);
  assert.doesNotMatch(all, new RegExp(SECRET.slice(6, 30)));
});

describe('what a body may hold (docs/webhooks.md): decided at intake, so a 200 always gives a run', () => {
  const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
  const arrays = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
  test('prototype keys at any depth, lone surrogates, NUL and nesting past 64 levels → 400 naming the problem, nothing published', async () => {
    const t = addTrigger({ requireSecret: false });
    const cases: [string, string, RegExp][] = [
      ['__proto__ at the top', '{"__proto__": {"x": 1}}', /key "__proto__" \(at \$\)/],
      ['__proto__ deep', '{"x": {"y": [{"__proto__": {}}]}}', /key "__proto__" \(at \$\.x\.y\[0\]\)/],
      ['constructor.prototype', '{"a": {"constructor": {"prototype": {"polluted": true}}}}', /"constructor" with a "prototype" key \(at \$\.a\.constructor\)/],
      ['lone high surrogate', '{"a": "\\ud800"}', /lone UTF-16 surrogate .* at \$\.a\)/],
      ['lone low surrogate in a key', '{"b": {"\\udc00": 1}}', /lone UTF-16 surrogate .*in a key at \$\.b\)/],
      ['NUL deep', '{"a": [1, "x\\u0000"]}', /NUL .* at \$\.a\[1\]\)/],
      ['65 levels of objects', nested(65), /deeper than 64 levels/],
      ['3,000 levels of arrays', arrays(3_000), /deeper than 64 levels/],
      ['100,000 levels of arrays', arrays(100_000), /deeper than 64 levels/],
    ];
    for (const [label, body, message] of cases) {
      const res = await post(t.workflowId, body);
      assert.equal(res.status, 400, label);
      assert.equal(res.body.error, 'bad_request', label);
      assert.match(res.body.message, message, label);
    }
    await settle();
    assert.equal((await eventsFor(t.workflowId)).length, 0);
  });

  test('64 levels, surrogate pairs (emoji), "constructor" without "prototype" and "prototype" alone are ordinary data', async () => {
    const t = addTrigger({ requireSecret: false });
    const bodies = [
      nested(64),
      '{"smile": "\\ud83d\\ude00", "\\ud83d\\ude00": 1}',
      '{"constructor": "Foo", "c": {"constructor": {"name": "x"}}, "prototype": {}}',
    ];
    for (const body of bodies) assert.equal((await post(t.workflowId, body)).status, 200, body.slice(0, 40));
    const events = await eventsFor(t.workflowId, 3);
    assert.equal(events.length, 3);
    assert.equal(events.find((e) => 'smile' in e.payload)?.payload.smile, '😀');
  });
});
