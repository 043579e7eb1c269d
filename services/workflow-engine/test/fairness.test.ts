// Fairness across owners (issue 36 item 3; docs/workflow-engine.md, "Fairness across owners") on a real
// engine + workspace-api + embedded bus (PGlite, or Postgres with DATABASE_URL): an owner flooding the
// engine with slow runs holds at most its in-flight cap, so another owner's run starts promptly;
// queued runs start round-robin across owners; the flooding owner's queue past its share is
// published to intake (owner-throttle events) and shown on the usage API, the other owner's is not.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { OWNER_THROTTLE_TOPIC, TRIGGER_TOPIC, type OwnerThrottle, type OwnerUsage } from '@flowdesk/contracts';
import type { Subscription } from '@flowdesk/bus';
import { generateSigningKeys, type Service } from '@flowdesk/service-kit';
import { until } from '@flowdesk/service-kit/testing';
import { json, runsApi, startEngineOn, startEngineStack, webhookEvent, type EngineStack, userCaller } from './support.ts';

const keys = generateSigningKeys();
let stack: EngineStack;
let engine: Service;
let engineUrl: string;
let throttles: Subscription;
const call = userCaller(keys, () => ({ apiUrl: stack.apiUrl, engineUrl }));
const api = runsApi(call);
/** Held GET /hold/<tag> requests, in arrival order: released by the test. */
const held: { tag: string; res: http.ServerResponse }[] = [];
const arrivals: string[] = [];
const published: OwnerThrottle[] = [];
const CAP = 2;
const MAX_BACKLOG = 5;

before(async () => {
  stack = await startEngineStack({
    keys,
    receiver: (req, res) => {
      const hold = /^\/hold\/([^?]+)/.exec(req.url);
      if (!hold) return json(res, 200, { ok: true });
      arrivals.push(hold[1]!);
      const entry = { tag: hold[1]!, res };
      held.push(entry);
      // A request the engine gave up on (its timeout) is no longer in flight.
      res.on('close', () => {
        const i = held.indexOf(entry);
        if (i >= 0) held.splice(i, 1);
      });
    },
  });
  // Eight consumer slots, an owner's cap of two; queued runs two at a time (so round-robin shows).
  ({ app: engine, url: engineUrl } = await startEngineOn(stack, {
    concurrency: 8,
    workflowConcurrency: 8,
    fairness: { ownerConcurrency: CAP, concurrency: 2, maxBacklog: MAX_BACKLOG, pollMs: 100 },
  }));
  throttles = await stack.bus.subscribe<OwnerThrottle>({
    topic: OWNER_THROTTLE_TOPIC,
    groupId: `throttle-test-${randomUUID()}`,
    ephemeral: true,
    handler: (m) => void published.push(m.value),
  });
});
after(async () => {
  for (const h of held.splice(0)) h.res.destroy();
  await throttles?.close();
  await engine?.close();
  await stack?.close();
});

async function createWorkflow(owner: string, graph: { nodes: unknown[]; edges: unknown[] }, name = 'wf') {
  const res = await call(owner, 'POST', '/api/v1/workflows', { name, triggerType: 'webhook', active: true, graph });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string };
}
/** A slow workflow: GET /hold/<owner tag>-<n>, held until the test answers it. */
const slow = (tag: string) => ({
  nodes: [{ id: 'hold', type: 'http_request', params: { method: 'GET', url: `${stack.receiver!.url}/hold/${tag}-{{trigger.n}}`, timeoutMs: 60_000 } }],
  edges: [{ from: 'trigger', to: 'hold' }],
});
const quick = { nodes: [{ id: 'set', type: 'set_fields', params: { fields: [{ name: 'ok', value: 'yes' }] } }], edges: [{ from: 'trigger', to: 'set' }] };
/** Publishes `count` trigger events of `wf` as webhook-ingest does. */
const flood = (owner: string, wf: { id: string }, count: number) =>
  stack.bus.publish(
    TRIGGER_TOPIC,
    Array.from({ length: count }, (_, n) => ({ key: wf.id, value: webhookEvent(wf, owner, { n }) })),
  );
const heldOf = (tag: string) => held.filter((h) => h.tag.startsWith(`${tag}-`));
const usage = async (owner: string) => (await call(owner, 'GET', '/api/v1/workflow-runs/usage')).body as OwnerUsage;
function releaseAll(tag?: string) {
  for (let i = held.length - 1; i >= 0; i--)
    if (!tag || held[i]!.tag.startsWith(`${tag}-`)) {
      const [h] = held.splice(i, 1);
      json(h!.res, 200, { ok: true });
    }
}

test("an owner flooding slow runs holds at most its cap; another owner's run starts at once, and only the flooder is throttled at intake", async () => {
  const a = randomUUID();
  const b = randomUUID();
  // Two workflows, so neither the per-workflow bound nor one key's order is what holds A back.
  const slowA1 = await createWorkflow(a, slow('a'), 'slow 1');
  const slowA2 = await createWorkflow(a, slow('a'), 'slow 2');
  const quickB = await createWorkflow(b, quick, 'quick');
  await flood(a, slowA1, 10);
  await flood(a, slowA2, 10);
  await until('A holds its cap', async () => heldOf('a').length >= CAP || undefined);
  // B's run, while A's 20 slow runs hold or wait: without the cap they fill the eight slots.
  const started = Date.now();
  const run = await api.finished(b, (await api.runNow(b, quickB, {})).id, 20_000);
  assert.equal(run.status, 'succeeded');
  assert.ok(Date.now() - started < 15_000, `B's run took ${Date.now() - started} ms`);
  assert.equal(heldOf('a').length, CAP, 'A never has more than its cap in flight');
  // A's queue passed its share: intake is told (A only), and the usage API says so.
  const throttle = await until('A throttled', async () => published.find((p) => p.ownerId === a && p.throttled));
  assert.ok(throttle.backlog >= MAX_BACKLOG && throttle.retryAfterSeconds >= 1, JSON.stringify(throttle));
  const ua = await usage(a);
  assert.equal(ua.inFlight, CAP);
  assert.ok(ua.queued >= MAX_BACKLOG && ua.throttled >= 20 - CAP - 1 && ua.intakeThrottled, JSON.stringify(ua));
  const ub = await usage(b);
  assert.equal(ub.intakeThrottled, false);
  assert.equal(ub.throttled, 0);
  assert.ok(!published.some((p) => p.ownerId === b));
  // A's runs all end, two at a time; the throttle is lifted.
  for (let done = 0; done < 20;) {
    await until('an A run holds', async () => heldOf('a').length > 0 || undefined);
    assert.ok(heldOf('a').length <= CAP);
    done += heldOf('a').length;
    releaseAll('a');
  }
  await until('A lifted', async () => published.findLast((p) => p.ownerId === a)?.throttled === false || undefined);
  await until("A's runs all finished", async () => {
    const u = await usage(a);
    return u.queued === 0 && u.inFlight === 0 ? u : undefined;
  });
});

test('queued runs start round-robin across owners, not in arrival order', async () => {
  const c = randomUUID();
  const d = randomUUID();
  const wc = await createWorkflow(c, slow('c'), 'c');
  const wd = await createWorkflow(d, slow('d'), 'd');
  arrivals.length = 0;
  // C's ten arrive first (two run, eight queue), then D's ten (two run, eight queue).
  await flood(c, wc, 10);
  await until('C at its cap and queued', async () => ((await usage(c)).queued >= 8 && heldOf('c').length === CAP) || undefined);
  await flood(d, wd, 10);
  await until('D at its cap and queued', async () => ((await usage(d)).queued >= 8 && heldOf('d').length === CAP) || undefined);
  // Finish the four delivered runs; from then on queued runs start two at a time: release one at a time.
  const before = arrivals.length;
  releaseAll();
  for (let n = 0; n < 16; n++) {
    await until('a queued run holds', async () => held.length > 0 || undefined);
    const first = held.shift()!;
    json(first.res, 200, { ok: true });
  }
  const order = arrivals.slice(before).map((t) => t[0]);
  assert.equal(order.length, 16, order.join(''));
  // Round-robin: among the first eight queued starts both owners have four (arrival order: eight of C's).
  const firstEight = order.slice(0, 8);
  assert.equal(firstEight.filter((o) => o === 'c').length, 4, order.join(''));
  assert.equal(firstEight.filter((o) => o === 'd').length, 4, order.join(''));
});
