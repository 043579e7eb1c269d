// Fairness at intake (issue 36 item 3; docs/workflow-engine.md, "Fairness across owners"): the engine's
// owner-throttle events on the real embedded bus (PGlite, or Postgres with DATABASE_URL), as the engine
// publishes them when an owner's queue of runs passes its share. Only that owner's workflows are
// answered 429 with a JSON body and a Retry-After (the engine's, counted down); another owner's are
// accepted; a lifted or lapsed throttle admits the owner again.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { EventBus } from '@flowdesk/bus';
import { OWNER_THROTTLE_TOPIC, type OwnerThrottle, type WebhookTriggerLookup } from '@flowdesk/contracts';
import { until } from '@flowdesk/service-kit/testing';
import { startIngest, type IngestStack } from './helpers/ingest.ts';
import { ownerThrottles } from '../src/domain/owner-throttle.ts';

let ingest: IngestStack;
let bus: EventBus;
let base: string;
const addTrigger = (ownerId: string): WebhookTriggerLookup => ingest.addTrigger({ ownerId, requireSecret: false, secret: null });
const post = async (t: WebhookTriggerLookup) => {
  const res = await fetch(`${base}/functions/v1/webhook-trigger/${t.workflowId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"n":1}',
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), type: res.headers.get('content-type'), body: (await res.json()) as any };
};
const throttle = (ownerId: string, throttled: boolean, retryAfterSeconds = 7, untilMs = 60_000): Promise<void> =>
  bus.publish(OWNER_THROTTLE_TOPIC, [
    {
      key: ownerId,
      value: { ownerId, throttled, backlog: 1234, retryAfterSeconds, until: new Date(Date.now() + untilMs).toISOString() } satisfies OwnerThrottle,
    },
  ]);

before(async () => {
  ingest = await startIngest({ app: { ownerThrottle: { groupId: `ingest-throttle-${randomUUID()}` } } });
  ({ bus, base } = ingest);
});
after(() => ingest?.close());

test("only the throttled owner's workflows are refused, with a JSON 429 and the engine's Retry-After; lifted, they are accepted again", async () => {
  const noisy = randomUUID();
  const quiet = randomUUID();
  const [n1, n2] = [addTrigger(noisy), addTrigger(noisy)];
  const q = addTrigger(quiet);
  assert.equal((await post(n1)).status, 200);
  await throttle(noisy, true);
  const refused = await until('the noisy owner refused', async () => {
    const r = await post(n1);
    return r.status === 429 ? r : undefined;
  });
  assert.ok(Number(refused.retryAfter) >= 1 && Number(refused.retryAfter) <= 7, `Retry-After ${refused.retryAfter}`);
  assert.match(refused.type ?? '', /application\/json/);
  assert.match(JSON.stringify(refused.body), /owner has 1234 runs waiting/);
  // Every workflow of that owner, and no other owner's.
  assert.equal((await post(n2)).status, 429);
  for (let i = 0; i < 5; i++) assert.equal((await post(q)).status, 200);
  await throttle(noisy, false);
  await until('the noisy owner admitted again', async () => (await post(n1)).status === 200 || undefined);
});

test('a throttle that is not refreshed lapses at its until; Retry-After counts down', () => {
  let now = 0;
  const t = ownerThrottles(() => now);
  t.apply({ ownerId: 'a', throttled: true, backlog: 10, retryAfterSeconds: 9, until: new Date(5_000).toISOString() });
  assert.deepEqual(t.check('a'), { backlog: 10, retryAfterSeconds: 9 });
  assert.equal(t.check('b'), undefined);
  now = 3_000;
  assert.equal(t.check('a')?.retryAfterSeconds, 6);
  now = 5_000;
  assert.equal(t.check('a'), undefined);
});
